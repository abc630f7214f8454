#!/usr/bin/env bash
# Checks that Courier's core names no type of the layers above it (Documentation.docc/Articles/
# Design.md, "Layers"), so that the core could be a module of its own.
#
#   scripts/check-layers.sh             # the names (no build needed)
#   scripts/check-layers.sh --compile   # also type-check the core alone, after a debug build
#
# The layers above are the auth layer (Sources/Courier/Auth) and the clients
# (Sources/Courier/Clients); their types are every type they declare at the top level of a file
# (a nested type is named through its parent, `ResourceAccess.RequestKind`). A core file names
# one when the name is a word of its code (comments left out) or of a ``symbol link`` in its
# doc comments; prose may say "user client". What a layer above needs the core to carry goes
# through the core's own types (RequestAttributes, ErrorAttribute), which the layer extends.
#
# `--compile` also compiles the core's files alone, as a module of their own, with the flags of
# the last debug build of `Courier` (from .build/debug.yaml): it fails on any use of the layers
# above, a member they declare (`error.oauthError`) as well as a type, as a split module would.
set -euo pipefail
cd "$(dirname "$0")/.."

CORE=(Session Middleware Transport Response Errors Tasks Requests Security Support Observability Events Cookies Cache)
ABOVE=(Auth Clients)

names="$(
  grep -rhoE '^(public |package |internal |private |fileprivate )?(final )?(struct|class|enum|actor|protocol|typealias) [A-Z][A-Za-z0-9_]*' \
    "${ABOVE[@]/#/Sources/Courier/}" --include='*.swift' | awk '{ print $NF }' | sort -u | paste -sd'|'
)"
if [[ -z "$names" ]]; then
  echo "layers: found no type in ${ABOVE[*]}" >&2
  exit 1
fi

found=0
while IFS= read -r -d '' file; do
  # Code: each line without its `//` comment. Links: the ``…`` spans of its comments.
  hits="$(
    {
      sed -E 's#//.*$##' "$file" | grep -nwE "$names" || true
      grep -nE '^\s*//' "$file" | grep -oE '^[0-9]+:|``[^`]+``' | awk '/^[0-9]+:$/ { line = $0; next } { print line $0 }' |
        grep -wE "$names" || true
    } | sort -n -u
  )"
  if [[ -n "$hits" ]]; then
    found=1
    while IFS= read -r hit; do echo "layers: $file:$hit" >&2; done <<<"$hits"
  fi
done < <(find "${CORE[@]/#/Sources/Courier/}" -name '*.swift' -print0 | sort -z)

if [[ "$found" == 1 ]]; then
  echo "layers: the core names a type of the layers above it (${ABOVE[*]}); carry the value in a" \
    "RequestAttribute or an ErrorAttribute that the layer above declares" >&2
  exit 1
fi
echo "layers: the core (${CORE[*]}) names no type of ${ABOVE[*]}"

[[ "${1:-}" == "--compile" ]] || exit 0
# The core's files, type-checked as a module of their own with the flags SwiftPM compiled
# `Courier` with: its search paths, C module maps, defines, language mode and features.
mapfile -d '' core_files < <(find "${CORE[@]/#/Sources/Courier/}" -name '*.swift' -print0 | sort -z)
mapfile -t command < <(
  python3 - "$(dirname "$(dirname "$(swift build --show-bin-path)")")/debug.yaml" <<'PYTHON'
import json, sys

manifest = open(sys.argv[1]).read()
start = manifest.index('"C.Courier-')
line = next(l for l in manifest[start:].splitlines() if l.strip().startswith("args:"))
args = json.loads(line.strip()[len("args:"):])
kept, i = [args[0]], 1
with_value = {"-I", "-Xcc", "-target", "-module-cache-path", "-swift-version", "-enable-upcoming-feature",
              "-enable-experimental-feature", "-package-name"}
while i < len(args):
    arg = args[i]
    if arg in with_value:
        kept += args[i:i + 2]
        i += 2
        continue
    if arg.startswith(("-D", "-I")) or arg == "-parse-as-library":
        kept.append(arg)
    i += 1
print("\n".join(kept))
PYTHON
)
if [[ ${#command[@]} -lt 2 ]]; then
  echo "layers: no compile command for Courier in .build/debug.yaml: build first (swift build)" >&2
  exit 1
fi
if ! "${command[@]}" -typecheck -module-name CourierLayerCheck "${core_files[@]}"; then
  echo "layers: the core does not compile without ${ABOVE[*]}: it uses something they declare" >&2
  exit 1
fi
echo "layers: the core (${#core_files[@]} files) compiles as a module of its own"
