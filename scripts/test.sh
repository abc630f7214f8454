#!/usr/bin/env bash
# Courier's test command (the README's, and CI's through .ci/run).
# Installs what is missing, checks that the documentation samples are current, the code is
# formatted and the core names nothing of the layers above it, builds (the samples included)
# with every package trait on, checks the package as a service's dependency, runs the whole
# suite against the real servers the suite starts on 127.0.0.1, runs the concurrency suites
# again under ThreadSanitizer, runs every fuzz target briefly, builds the docs, and checks the
# public API against its baseline.
#
#   scripts/test.sh              # everything
#   COURIER_SKIP_TSAN=1 scripts/test.sh   # skip the ThreadSanitizer pass
#   COURIER_ASAN=1 scripts/test.sh        # add an AddressSanitizer pass (another full build)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh

echo "== documentation samples are current"
# Every ```swift block of README.md and Documentation.docc is compiled as part of the build
# (the DocSamples test target); the generated file must match the Markdown it comes from.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  python3 scripts/extract-samples.py
  mapfile -t sample_files < <(python3 scripts/extract-samples.py --outputs)
  if ! git diff --exit-code -- "${sample_files[@]}" || [[ -n "$(git ls-files --others --exclude-standard -- "${sample_files[@]}")" ]]; then
    echo "test: ${sample_files[*]} did not match the docs: run scripts/extract-samples.py and commit the result" >&2
    exit 1
  fi
else
  python3 scripts/extract-samples.py --check   # not a git checkout: compare with the file on disk
fi

echo "== format (swift-format, .swift-format)"
scripts/format.sh --lint

echo "== build (warnings are errors)"
# Every trait on: the products behind them (CourierPostgres, CourierOpenAPI, …) and their tests.
swift build --build-tests --enable-all-traits -Xswiftc -warnings-as-errors

echo "== layers: the core names nothing of the auth layer or the clients, and compiles without them"
scripts/check-layers.sh --compile

echo "== release build (the optimizer sees what a debug build does not)"
# The library alone, as a service builds it (`--product` would build every target: SwiftPM
# does not build an automatic library product on its own).
swift build -c release --target Courier --enable-all-traits -Xswiftc -warnings-as-errors

echo "== dependencies"
scripts/check-dependencies.sh

scripts/build-examples.sh   # Examples/CourierService, which the example tests start
echo "== tests"
# Serial: the memory measurements (RSS while streaming 64 MiB) must not see other tests.
# CourierPostgresTests start their PostgreSQL (and the OAuth2 servers behind TLS) through
# Tests/Servers/serve.py --only postgres,oauth,oauth_tls, and it stops when the tests exit.
# CourierSQLiteTests start the OAuth2 servers behind TLS the same way (--only oauth,oauth_tls)
# and, when run as root, mount a 512 KiB tmpfs under the temporary directory for the time of
# one test (a full disk), unmounted when it ends.
swift test --skip-build --enable-all-traits --no-parallel

if [[ "${COURIER_SKIP_TSAN:-0}" != "1" ]]; then
  echo "== concurrency tests under ThreadSanitizer"
  scripts/sanitize.sh thread
fi
if [[ "${COURIER_ASAN:-0}" == "1" ]]; then
  echo "== lifetime tests under AddressSanitizer"
  scripts/sanitize.sh address
fi
echo "== fuzz smoke: every parser of untrusted bytes under libFuzzer + AddressSanitizer, 20 s each"
scripts/fuzz.sh all 20

echo "== documentation (broken symbol links fail)"
scripts/build-docs.sh

echo "== public API: no breaking change against the baseline"
scripts/check-api.sh

echo "== all tests passed"
