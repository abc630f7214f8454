#!/usr/bin/env bash
# Builds the DocC archive from the root Documentation.docc; fails on any broken link.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package --enable-all-traits dump-symbol-graph --minimum-access-level public --emit-extension-block-symbols >/dev/null
graphs="$(swift build --show-bin-path)/../symbolgraph"
rm -rf .build/doc-graphs && mkdir -p .build/doc-graphs
find "$graphs" -maxdepth 1 \( -name 'Courier.symbols.json' -o -name 'Courier@*.symbols.json' \) -exec cp {} .build/doc-graphs/ \;
docc convert Documentation.docc --additional-symbol-graph-dir .build/doc-graphs \
  --fallback-display-name Courier --fallback-bundle-identifier org.courier.Courier \
  --output-path .build/Courier.doccarchive --warnings-as-errors
echo "docs: .build/Courier.doccarchive"
