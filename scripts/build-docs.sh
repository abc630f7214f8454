#!/usr/bin/env bash
# Builds the documentation of every library product into one DocC archive,
# .build/Courier.doccarchive; any warning (a broken link, an unknown parameter) fails it.
#
# One archive per module, merged: Courier from the root Documentation.docc, every other
# library from its own catalog, Sources/<Module>/<Module>.docc. The modules link to Courier's
# pages and Courier's landing page links to theirs, so Courier is converted twice: once, its
# warnings not yet counted, only to give the modules something to link to; then, with their
# archives to link to, with warnings as errors like the rest.
#
#   scripts/build-docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(CourierPostgres CourierSQLite CourierOpenAPI CourierServiceLifecycle CourierTesting)
out=.build/docs
archive=.build/Courier.doccarchive

# Every trait on (a product whose trait is off is an empty module) and the compiler flags of
# scripts/test.sh's build, which the dump then reuses.
swift package --enable-all-traits -Xswiftc -warnings-as-errors dump-symbol-graph \
  --minimum-access-level public --emit-extension-block-symbols >/dev/null
graphs="$(swift build --show-bin-path)/../symbolgraph"
rm -rf "$out" "$archive"
mkdir -p "$out"

# convert MODULE CATALOG [docc options…]: the module's archive, $out/MODULE.doccarchive, from
# its symbol graphs, $out/graphs/MODULE.
convert() {
  local module="$1" catalog="$2"
  shift 2
  docc convert "$catalog" --additional-symbol-graph-dir "$out/graphs/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.courier.$module" \
    --enable-experimental-external-link-support --output-path "$out/$module.doccarchive" "$@"
}

for module in Courier "${modules[@]}"; do
  mkdir -p "$out/graphs/$module"
  find "$graphs" -maxdepth 1 \( -name "$module.symbols.json" -o -name "$module@*.symbols.json" \) \
    -exec cp {} "$out/graphs/$module/" \;
done

# Every public symbol has a doc comment (docc does not warn about one without).
python3 - "$out/graphs" <<'PY'
import json, pathlib, sys
missing = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("*/*.symbols.json")):
    for symbol in json.loads(path.read_text())["symbols"]:
        synthesized = "::SYNTHESIZED::" in symbol["identifier"]["precise"]
        if symbol["kind"]["identifier"] != "swift.extension" and not synthesized and not symbol.get("docComment"):
            missing.append(f"{path.parent.name}: {'.'.join(symbol['pathComponents'])}")
if missing:
    sys.exit("build-docs: public symbols without a doc comment:\n  " + "\n  ".join(missing))
PY

# Courier's pages to link to; its own warnings are counted in the last conversion.
convert Courier Documentation.docc >"$out/Courier-links.log" 2>&1 || {
  cat "$out/Courier-links.log" >&2
  exit 1
}
mv "$out/Courier.doccarchive" "$out/Courier-links.doccarchive"

dependencies=()
archives=()
for module in "${modules[@]}"; do
  convert "$module" "Sources/$module/$module.docc" --warnings-as-errors --dependency "$out/Courier-links.doccarchive"
  dependencies+=(--dependency "$out/$module.doccarchive")
  archives+=("$out/$module.doccarchive")
done
convert Courier Documentation.docc --warnings-as-errors "${dependencies[@]}"

docc merge "$out/Courier.doccarchive" "${archives[@]}" --output-path "$archive" \
  --synthesized-landing-page-name Courier --synthesized-landing-page-kind Package
echo "docs: $archive"
