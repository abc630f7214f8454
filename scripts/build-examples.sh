#!/usr/bin/env bash
# Builds the example packages under Examples/ with warnings as errors. The tests that run an
# example (Tests/CourierTests/Examples) start the binary this leaves in the example's
# .build/debug, so scripts/test.sh runs this before the tests.
#
#   scripts/build-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== examples (warnings are errors)"
swift build --package-path Examples/CourierService -Xswiftc -warnings-as-errors
