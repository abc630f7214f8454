#!/usr/bin/env bash
# Regenerates the client that the CourierOpenAPI tests use, from Tests/CourierOpenAPITests/
# openapi.yaml and its generator config, into Tests/CourierOpenAPITests/Generated/.
#
# swift-openapi-generator is no dependency of the package: this script builds it once in a
# package of its own outside the checkout (GENERATOR_DIR, /tmp/courier-openapi-generator by
# default) and runs it there. CI does not run it; commit what it writes.
#
#   scripts/generate-openapi-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."

root="$(pwd)"
tests="${root}/Tests/CourierOpenAPITests"
generator_dir="${GENERATOR_DIR:-/tmp/courier-openapi-generator}"
version="1.14.3"

mkdir -p "${generator_dir}"
cat > "${generator_dir}/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "courier-openapi-generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "${version}")],
    targets: []
)
MANIFEST

(cd "${generator_dir}" && swift build --product swift-openapi-generator)
rm -rf "${tests}/Generated"
mkdir -p "${tests}/Generated"
(cd "${generator_dir}" && swift run --skip-build swift-openapi-generator generate \
  --config "${tests}/openapi-generator-config.yaml" \
  --output-directory "${tests}/Generated" \
  "${tests}/openapi.yaml")
# The test target compiles only with the OpenAPI trait on, as does everything it uses.
for file in "${tests}/Generated"/*.swift; do
  { echo "#if OpenAPI"; cat "${file}"; echo "#endif"; } > "${file}.tmp" && mv "${file}.tmp" "${file}"
done
echo "generated: $(ls "${tests}/Generated" | tr '\n' ' ')"
