#!/usr/bin/env bash
# Courier's demo command (the README's): starts the local servers, then runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh

work="$(mktemp -d)"
ready="$work/ready.json"
python3 Tests/Servers/serve.py --ready-file "$ready" --no-stdin >"$work/serve.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

for _ in $(seq 1 150); do
  [[ -s "$ready" ]] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log"; echo "demo: the servers failed to start" >&2; exit 1; }
  sleep 0.2
done
[[ -s "$ready" ]] || { cat "$work/serve.log"; echo "demo: the servers did not start in 30 s" >&2; exit 1; }

# The demo needs no trait; every script turns them all on, so that they share one resolution and
# one build of the package.
swift run -c release --enable-all-traits CourierDemo "$ready"
