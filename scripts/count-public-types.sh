#!/usr/bin/env bash
# Counts the top-level public types of Courier's library products (Courier, CourierTesting)
# from the symbol graph: the figure the API is kept under (at most 45).
#
#   scripts/count-public-types.sh          # the count
#   scripts/count-public-types.sh --list   # and the names
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/public-types
rm -rf "$out"; mkdir -p "$out"
swift build --target Courier --enable-all-traits -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$out" >/dev/null
swift build --target CourierTesting --enable-all-traits -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$out" >/dev/null
python3 - "$out" "${1:-}" <<'PY'
import json, sys, glob
kinds = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.actor", "swift.typealias"}
names = set()
for path in glob.glob(sys.argv[1] + "/Courier*.symbols.json"):
    if "@" in path:
        continue
    for symbol in json.load(open(path))["symbols"]:
        if symbol["kind"]["identifier"] in kinds and len(symbol["pathComponents"]) == 1 \
                and symbol["accessLevel"] == "public":
            names.add(symbol["pathComponents"][0])
if sys.argv[2] == "--list":
    print("\n".join(sorted(names)))
print(len(names))
PY
