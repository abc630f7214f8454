#!/usr/bin/env bash
# The one command for Courier's benchmarks.
#
#   Benchmarks/run.sh              quick load run (~4 min): table to stdout and Benchmarks/RESULTS.md
#   Benchmarks/run.sh --full       full load run (5 s runs, 3 rounds, ~35 min)
#   Benchmarks/run.sh micro        micro benchmarks (ordo-one/benchmark); table to Benchmarks/RESULTS-micro.md
#   Benchmarks/run.sh serve        start only the nginx (for profiling a client by hand)
#
# Any other flag goes to LoadHarness (`Benchmarks/run.sh --help` lists them), for example
#   Benchmarks/run.sh --clients courier,curl --protocols h1 --sizes 1k --concurrency 64
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
invocation="Benchmarks/run.sh${*:+ $*}"

if [[ "${1:-}" == "micro" ]]; then
    shift
    cd "$here"
    # Build at normal priority, then measure on CPU 1 under SCHED_FIFO (as root) so that other
    # work on the machine does not preempt the benchmark: see README.md.
    touch "$here/Package.swift"   # see below: makes SwiftPM see new files of the root package
    swift build -c release --package-path "$here" --product CourierMicro >&2
    scheduler=()
    if [[ $(id -u) == 0 ]]; then scheduler=(chrt -f 10 taskset -c 1); fi
    # --disable-sandbox: the benchmark plugin runs the benchmark executable.
    "${scheduler[@]}" swift package --disable-sandbox benchmark --target CourierMicro --no-progress --format markdown "$@" | tee "$here/.micro.out"
    {
        echo "# Courier micro benchmarks"
        echo
        echo '```'
        echo "$invocation"
        echo '```'
        echo
        echo "- Machine: $(uname -srm), $(nproc) CPUs; $(swift --version 2>&1 | head -1)"
        echo "- Courier: commit $(cat "$here/../.snapshot-commit" 2>/dev/null || git -C "$here/.." rev-parse --short HEAD)"
        echo "- Scheduling: ${scheduler[*]:-default}"
        echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo
        sed 's/\x1b\[[0-9;]*m//g' "$here/.micro.out"   # no terminal colours in the file
    } > "$here/RESULTS-micro.md"
    rm -f "$here/.micro.out"
    exit 0
fi

command -v nginx >/dev/null || PATH="$PATH:/usr/sbin"
for tool in nginx openssl taskset curl-config; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is required (apt-get install nginx openssl util-linux libcurl4-openssl-dev)" >&2; exit 1; }
done

echo "run.sh: building the harness (release)…" >&2
# SwiftPM does not notice files added to the root package (a path dependency) in an existing
# .build until this manifest changes: touch it so that the build plan is made anew.
touch "$here/Package.swift"
swift build -c release --package-path "$here" >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)"

if [[ "${1:-}" == "serve" ]]; then
    shift
    exec "$bin/LoadHarness" serve --bin-dir "$bin" --package-dir "$here" "$@"
fi
exec "$bin/LoadHarness" run --bin-dir "$bin" --package-dir "$here" --invocation "$invocation" "$@"
