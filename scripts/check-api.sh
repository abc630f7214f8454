#!/usr/bin/env bash
# Fails when the public API of Courier or CourierTesting breaks compatibility with the
# baseline: the commit in scripts/api-baseline (tagged api-0.4.0 where tags travel).
# A deliberate break moves the baseline in the same change, so it is always a decision.
#
#   scripts/check-api.sh
set -euo pipefail
cd "$(dirname "$0")/.."

baseline="$(tr -d '[:space:]' < scripts/api-baseline)"
if ! git cat-file -e "${baseline}^{commit}" 2>/dev/null; then
  echo "check-api: the baseline commit ${baseline} is not in this clone (a shallow clone?); fetch it with" >&2
  echo "check-api:   git fetch --unshallow   (or: git fetch origin ${baseline})" >&2
  exit 1
fi
swift package --enable-all-traits diagnose-api-breaking-changes "$baseline" --products Courier CourierTesting
