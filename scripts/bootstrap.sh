#!/usr/bin/env bash
# Installs what Courier's tests, benchmarks and demo need on a Debian 12 machine.
#
#   scripts/bootstrap.sh            # install whatever is missing (idempotent)
#   scripts/bootstrap.sh --check    # only report what is missing; exit 1 if anything is
#
# Fast when everything is already there: one dpkg-query and one python3 call,
# no network access. apt-get update runs only when an apt package is missing.
#
# apt:  libcurl4-openssl-dev (CCurl), libssl-dev (COpenSSL), libsqlite3-dev (CSQLite, for the
#       CourierSQLite token store), strace (debugger-detection
#       test), nginx with the ssl + http_v2 modules, postgresql (the CourierPostgres tests:
#       initdb, postgres, pg_ctl, pg_isready), openssl
#       (the test PKI), curl, pkg-config, python3 + pip.
# pip:  the pinned set below plus each Tests/Servers/*/requirements.txt (e.g. `h2` for
#       Tests/Servers/h2faults.py), installed into the `python3` on PATH (the one that
#       Tests/Servers/serve.py runs under).
set -euo pipefail

CHECK_ONLY=0
[[ "${1:-}" == "--check" ]] && CHECK_ONLY=1

# Debian 12 "bookworm": `nginx` is the real package (ssl, http_v2, proxy, limit_rate
# all built in); `nginx-light` is only a transitional package that pulls it in.
# libssl-dev for the TLS verify hook (COpenSSL); libsqlite3-dev for the SQLite token store
# (CSQLite); strace for the debugger-detection test;
# postgresql for the CourierPostgres tests (serve.py runs a throw-away cluster; its package
# also creates the `postgres` user that the server runs as when the tests run as root).
APT_PACKAGES=(libcurl4-openssl-dev libssl-dev libsqlite3-dev nginx openssl curl pkg-config python3 python3-pip strace postgresql)

# Verified together on Python 3.11 / Debian 12. httpbin's /brotli endpoint needs
# brotlicffi (a dependency of httpbin itself); greenlet<3 is httpbin's own pin on 3.11.
PIP_PINS=(
  "httpbin==0.10.4"
  "gunicorn==27.0.1"
  "Authlib==1.9.9"
  "Flask==3.1.3"
  "Werkzeug==3.1.8"
  "brotlicffi==1.2.1.0"
)
# Plus the exact pins (name==version lines) of the test servers' own requirement files.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for req in "$ROOT"/Tests/Servers/*/requirements.txt; do
  [[ -f "$req" ]] || continue
  while IFS= read -r line; do
    line="${line%%#*}"; line="${line//[[:space:]]/}"
    [[ "$line" =~ ^[A-Za-z0-9_.-]+==[A-Za-z0-9_.+-]+$ ]] && PIP_PINS+=("$line")
  done < "$req"
done

log() { printf 'bootstrap: %s\n' "$*" >&2; }

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else SUDO=(false-no-sudo); fi
fi

# ---------------------------------------------------------------- apt
missing_apt=()
for pkg in "${APT_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing_apt+=("$pkg")
done

if ((${#missing_apt[@]})); then
  if ((CHECK_ONLY)); then
    log "missing apt packages: ${missing_apt[*]}"
  else
    if [[ "${SUDO[0]:-}" == "false-no-sudo" ]]; then
      log "need root or sudo to install: ${missing_apt[*]}"; exit 1
    fi
    log "installing apt packages: ${missing_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing_apt[@]}"
  fi
fi

# nginx must have the modules the test servers use.
NGINX_BIN="$(command -v nginx || true)"
[[ -z "$NGINX_BIN" && -x /usr/sbin/nginx ]] && NGINX_BIN=/usr/sbin/nginx
if [[ -n "$NGINX_BIN" ]]; then
  nginx_v="$("$NGINX_BIN" -V 2>&1)"
  for mod in http_ssl_module http_v2_module; do
    if [[ "$nginx_v" != *"--with-$mod"* ]]; then
      log "$NGINX_BIN lacks --with-$mod; install Debian's nginx package"; exit 1
    fi
  done
elif ((!CHECK_ONLY)); then
  log "nginx not found after install"; exit 1
fi

# PostgreSQL's server programs (Debian keeps them off PATH, under /usr/lib/postgresql/N/bin).
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && ! command -v initdb >/dev/null 2>&1; then
  if ((CHECK_ONLY)); then log "PostgreSQL's initdb not found"; else log "initdb not found after install"; exit 1; fi
fi

# ---------------------------------------------------------------- pip
PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
  log "$PY not found"; exit 1
fi

# Prints the pins that are not installed at exactly the pinned version.
missing_pip="$("$PY" - "${PIP_PINS[@]}" <<'EOF'
import sys
from importlib import metadata
for pin in dict.fromkeys(sys.argv[1:]):
    name, want = pin.split("==")
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        have = None
    if have != want:
        print(pin)
EOF
)"

if [[ -n "$missing_pip" ]]; then
  if ((CHECK_ONLY)); then
    log "missing or different pip packages: $(echo $missing_pip)"
  else
    log "installing pip packages: $(echo $missing_pip)"
    pip_args=(-m pip install --disable-pip-version-check --no-input -q)
    # Debian's own python3 is "externally managed" (PEP 668).
    if "$PY" -c 'import os, sys, sysconfig; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
      pip_args+=(--break-system-packages)
    fi
    # Install the whole pinned set together so pip resolves them as one.
    mapfile -t PIP_PINS < <(printf '%s\n' "${PIP_PINS[@]}" | awk '!seen[tolower($0)]++')
    if [[ "$(id -u)" -ne 0 && -w "$("$PY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" ]]; then
      "$PY" "${pip_args[@]}" "${PIP_PINS[@]}"
    elif [[ "$(id -u)" -ne 0 ]]; then
      "$PY" "${pip_args[@]}" --user "${PIP_PINS[@]}"
    else
      PIP_ROOT_USER_ACTION=ignore "$PY" "${pip_args[@]}" "${PIP_PINS[@]}"
    fi
  fi
fi

if ((CHECK_ONLY)); then
  if ((${#missing_apt[@]})) || [[ -n "$missing_pip" ]]; then exit 1; fi
  log "everything is installed"
  exit 0
fi

# Final sanity check: the imports serve.py relies on.
"$PY" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ("httpbin", "gunicorn", "flask", "authlib", "brotlicffi", "h2")))' || {
  log "python imports still failing after install (python: $(command -v "$PY"))"; exit 1; }
log "ok"
