#!/usr/bin/env bash
# Formats the Swift sources with swift-format (configuration: .swift-format), or checks them.
#
#   scripts/format.sh          # rewrite in place
#   scripts/format.sh --lint   # only check; exit 1 on any finding (what scripts/test.sh runs)
#
# The samples files are generated from the docs (scripts/extract-samples.py --outputs lists
# them) and left as generated, as is the OpenAPI client that scripts/generate-openapi-client.sh
# writes.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files 'Package.swift' 'Sources/*.swift' 'Tests/*.swift' 'Examples/CourierDemo/*.swift' \
  'Examples/CourierService/*.swift' \
  'Benchmarks/Package.swift' 'Benchmarks/Sources/*.swift' 'Benchmarks/Benchmarks/*.swift' \
  'Fuzz/Package.swift' 'Fuzz/Sources/*.swift' |
  grep -v -x -F -f <(python3 scripts/extract-samples.py --outputs) | grep -v '^Tests/CourierOpenAPITests/Generated/')

if [[ "${1:-}" == "--lint" ]]; then
  swift format lint --strict --parallel "${files[@]}"
else
  swift format format --in-place --parallel "${files[@]}"
fi
