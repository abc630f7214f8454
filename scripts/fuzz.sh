#!/usr/bin/env bash
# Builds Courier's fuzz targets (Fuzz/, a package of its own) with libFuzzer and AddressSanitizer
# and runs one or all of them.
#
#   scripts/fuzz.sh                     # every target, 20 s each (the CI smoke)
#   scripts/fuzz.sh FuzzXML 600         # one target for 10 minutes
#   scripts/fuzz.sh all 600             # every target for 10 minutes each
#
# Each target starts from its seed corpus (Fuzz/Corpus/<target>, committed) and keeps what it
# finds in Fuzz/.corpus/<target> (not committed). A crash, a leak or a hang (an input that takes
# more than 10 s) stops the run with a non-zero status and leaves the input in
# Fuzz/.artifacts/; reproduce it with `Fuzz/.build/debug/<target> <file>`.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-all}"
seconds="${2:-20}"
mapfile -t all < <(grep -o '"Fuzz[A-Za-z]*"' Fuzz/Package.swift | tr -d '"' | grep -v '^FuzzSupport$' | sort -u)
if [[ "$target" == "all" ]]; then targets=("${all[@]}"); else targets=("$target"); fi

echo "fuzz: building ${targets[*]}" >&2
# (gold warns once per sanitizer helper symbol that it cannot export it: harmless, and filtered.)
swift build --package-path Fuzz --scratch-path Fuzz/.build -c debug -Xswiftc -sanitize=fuzzer,address 2>&1 \
  | grep -v 'Cannot export local symbol' >&2
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "fuzz: the build failed" >&2; exit 1; }
bin="$(swift build --package-path Fuzz --scratch-path Fuzz/.build -c debug --show-bin-path)"

export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# Swift's own crash backtracer reads the stack in a way AddressSanitizer reports as an
# underflow: leave crashes to the sanitizer.
export SWIFT_BACKTRACE=enable=no
mkdir -p Fuzz/.artifacts
for name in "${targets[@]}"; do
  [[ -x "$bin/$name" ]] || { echo "fuzz: no target $name (have: ${all[*]})" >&2; exit 2; }
  mkdir -p "Fuzz/.corpus/$name" "Fuzz/Corpus/$name"
  dictionary=()
  [[ -f "Fuzz/Dictionaries/$name.dict" ]] && dictionary=(-dict="Fuzz/Dictionaries/$name.dict")
  echo "== $name, $seconds s" >&2
  log="Fuzz/.artifacts/$name.log"
  status=0
  "$bin/$name" "Fuzz/.corpus/$name" "Fuzz/Corpus/$name" "${dictionary[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="Fuzz/.artifacts/$name-" -print_final_stats=1 >"$log" 2>&1 || status=$?
  grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY)|Test unit written|Fatal error|Precondition failed' "$log" >&2 || true
  if [[ $status -ne 0 ]]; then
    echo "fuzz: $name failed (status $status); its log is $log, the input in Fuzz/.artifacts/" >&2
    exit 1
  fi
done
echo "fuzz: ${#targets[@]} target(s) ran $seconds s each without a finding" >&2
