#!/usr/bin/env bash
# Checks Courier's package as a service's dependency, through the consumer packages of
# Tests/Consumers (each depends on this checkout by path):
#
#   VaporJWT      Courier beside Vapor and JWT (which needs swift-crypto 4) resolves.
#   CourierOnly   a service of the `Courier` product alone checks out exactly EXPECTED below:
#                 a new package there is a decision, made by changing this list.
#   SwiftCrypto3  Courier builds against swift-crypto 3, the lowest major it accepts (the
#                 root package builds against the newest), with its traits off: every product
#                 and the `courier` command build as a consumer without the traits gets them.
#
#   scripts/check-dependencies.sh
set -euo pipefail
cd "$(dirname "$0")/.."
consumers="$(pwd)/Tests/Consumers"

# What `Courier` needs: swift-http-types and swift-log (its API), swift-crypto (token
# encryption, PKCE, client assertions) with swift-asn1 (swift-crypto's own), swift-metrics and
# swift-distributed-tracing (observability).
EXPECTED="swift-asn1 swift-crypto swift-distributed-tracing swift-http-types swift-log swift-metrics"

started=$SECONDS
step() {
  printf 'dependencies: %s\n' "$*" >&2
  started=$SECONDS
}
passed() { printf 'dependencies:   ok (%d s)\n' "$((SECONDS - started))" >&2; }
fail() { printf 'dependencies: %s\n' "$*" >&2; exit 1; }

step "Courier + Vapor + JWT resolve together"
rm -f "$consumers/VaporJWT/Package.resolved"
swift package resolve --package-path "$consumers/VaporJWT" >/dev/null ||
  fail "Tests/Consumers/VaporJWT did not resolve (swift package resolve --package-path Tests/Consumers/VaporJWT)"
passed

step "a consumer of Courier alone checks out: $EXPECTED"
rm -rf "$consumers/CourierOnly/.build" "$consumers/CourierOnly/Package.resolved"
swift package resolve --package-path "$consumers/CourierOnly" >/dev/null
checked_out="$(ls "$consumers/CourierOnly/.build/checkouts" | sort | tr '\n' ' ' | sed 's/ $//')"
if [[ "$checked_out" != "$EXPECTED" ]]; then
  fail "Tests/Consumers/CourierOnly checked out [$checked_out], expected [$EXPECTED]: a dependency that \`Courier\` does not need goes under a trait (Package.swift); one it needs goes into EXPECTED"
fi
passed

step "Courier builds against swift-crypto 3"
rm -f "$consumers/SwiftCrypto3/Package.resolved"
swift build --package-path "$consumers/SwiftCrypto3" -Xswiftc -warnings-as-errors
# The command too, without its trait: it only says how to build it.
swift build --package-path "$consumers/SwiftCrypto3" --product courier -Xswiftc -warnings-as-errors
grep -q '"version" : "3\.' <(grep -A6 '"identity" : "swift-crypto"' "$consumers/SwiftCrypto3/Package.resolved") ||
  fail "Tests/Consumers/SwiftCrypto3 did not resolve swift-crypto 3"
passed
