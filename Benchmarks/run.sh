#!/usr/bin/env bash
# The one command for Courier's benchmarks.
#
#   Benchmarks/run.sh              quick load run (~4 min): table to stdout and Benchmarks/RESULTS.md
#   Benchmarks/run.sh --full       full load run (5 s runs, 3 rounds, ~35 min)
#   Benchmarks/run.sh micro        micro benchmarks (ordo-one/benchmark); table to Benchmarks/RESULTS-micro.md
#   Benchmarks/run.sh check        the allocation counts of Session.send (null transport and the curl path)
#                                  against Thresholds/: fails on a regression or an unrecorded improvement
#   Benchmarks/run.sh thresholds   records the current counts in Thresholds/ (after an intended change)
#   Benchmarks/run.sh serve        start only the nginx (for profiling a client by hand)
#   Benchmarks/run.sh soak [N]     N (1,000,000) GETs at 64 in flight, RSS and fds every 50,000 → RESULTS-soak.md
#   Benchmarks/run.sh faults       the fault matrix: one line per broken server → RESULTS-faults.md
#   Benchmarks/run.sh store [FLAGS] the SQLite token store: 1,000,000 users' tokens, read and CAS-write p50/p99,
#                                  RSS of a process serving 50,000 users (~5 min, ~1 GB of disk) → RESULTS-store.md
#   Benchmarks/run.sh stream       streamed against buffered 1 MiB bodies (courier, courier-stream, curl; h1, h2;
#                                  c1–c256; 3 rounds of 2 s; ~6 min) → RESULTS-stream.md
#   Benchmarks/run.sh sse          server-sent events: the C floor (and Courier's SSE client once there) reading an
#                                  event stream of 10,000 events of 1 KiB (h1, h2; c1, c16; 3 rounds) → RESULTS-sse.md
#   Benchmarks/run.sh dpop         what auth costs a request: Session.send, ResourceAccess with a bearer token and with a
#                                  DPoP proof (courier, courier-access, courier-dpop; h1s, h2; 1 KiB; c16, c64;
#                                  3 rounds of 3 s; ~3 min) → RESULTS-dpop.md
#
# Any other flag goes to LoadHarness (`Benchmarks/run.sh --help` lists them), for example
#   Benchmarks/run.sh --clients courier,curl --protocols h1 --sizes 1k --concurrency 64
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
invocation="Benchmarks/run.sh${*:+ $*}"

# The head of a RESULTS-*.md file: title, command, machine, commit, date; then any extra lines.
report_header() {
    echo "# $1"
    echo
    echo '```'
    echo "$invocation"
    echo '```'
    echo
    echo "- Machine: $(uname -srm), $(nproc) CPUs; $(swift --version 2>&1 | head -1)"
    echo "- Courier: commit $(cat "$here/../.snapshot-commit" 2>/dev/null || git -C "$here/.." rev-parse --short HEAD)"
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    shift
    for line in "$@"; do echo "- $line"; done
    echo
}

# The fixed matrices: the flags of a load run, then any given after the mode.
if [[ "${1:-}" == "stream" ]]; then
    shift
    set -- --clients courier,courier-stream,curl --protocols h1,h2 --sizes 1m --concurrency 1,16,64,256 \
        --rounds 3 --seconds 2 --skip-memory --title "Courier streamed against buffered bodies" \
        --output "$here/RESULTS-stream.md" "$@"
elif [[ "${1:-}" == "sse" ]]; then
    shift
    set -- --clients curl-sse,courier-sse --protocols h1,h2 --sizes sse --concurrency 1,16 \
        --rounds 3 --seconds 2 --skip-memory --title "Courier server-sent events" \
        --output "$here/RESULTS-sse.md" "$@"
elif [[ "${1:-}" == "dpop" ]]; then
    shift
    # h1s: HTTP/1.1 over TLS, as secured resource access needs HTTPS. The request cap is high
    # so that the seconds bound each run.
    set -- --clients courier,courier-access,courier-dpop --protocols h1s,h2 --sizes 1k --concurrency 16,64 \
        --rounds 3 --seconds 3 --small-requests 1000000 --skip-memory \
        --title "Courier: what a bearer token and a DPoP proof cost a request" \
        --output "$here/RESULTS-dpop.md" "$@"
fi

# Starts the harness's nginx for the micro benchmarks of the curl path (CourierMicro/CurlPath.swift)
# and exports its origins; it stops when this script exits.
start_micro_server() {
    swift build -c release --package-path "$here" --product LoadHarness >&2
    local bin
    bin="$(swift build -c release --package-path "$here" --show-bin-path)"
    serve_out="$(mktemp /tmp/courier-micro-serve-XXXXXX)"   # global: the EXIT trap removes it
    "$bin/LoadHarness" serve --bin-dir "$bin" --seconds 1800 > "$serve_out" 2> "$serve_out.err" &
    micro_server=$!
    trap 'kill $micro_server 2>/dev/null || true; wait $micro_server 2>/dev/null || true; rm -f "$serve_out" "$serve_out.err"' EXIT
    for _ in $(seq 300); do grep -q '^WORK=' "$serve_out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^WORK=' "$serve_out" || { echo "run.sh: the harness's nginx did not start" >&2; cat "$serve_out.err" >&2; exit 1; }
    COURIER_MICRO_HTTP1="$(sed -n 's/^HTTP1=//p' "$serve_out")"
    COURIER_MICRO_TLS="$(sed -n 's/^TLS=//p' "$serve_out")"
    COURIER_MICRO_CA="$(sed -n 's/^CA=//p' "$serve_out")"
    export COURIER_MICRO_HTTP1 COURIER_MICRO_TLS COURIER_MICRO_CA
}

# The benchmarks whose allocation counts have thresholds in Thresholds/ (`run.sh check`).
checked_benchmarks='^(Session\.send\.middleware0|Session\.send\.curl\.h1|Session\.send\.curl\.h2|Session\.send\.curl\.h1\.executor|SwiftLoop\.curl\.h1|SwiftLoop\.curl\.h1\.executor)$'

if [[ "${1:-}" == "check" || "${1:-}" == "thresholds" ]]; then
    # check: runs the benchmarks that have thresholds and fails (exit 2 or 4) when an allocation
    # count is above its threshold, or below it (then update the threshold: `run.sh thresholds`).
    mode="$1"
    shift
    cd "$here"
    touch "$here/Package.swift"
    swift build -c release --package-path "$here" --product CourierMicro >&2
    start_micro_server
    # Default scheduling: allocation counts do not depend on it, and under SCHED_FIFO on one CPU
    # the benchmark plugin's own threads (which spin while they wait) can starve that CPU.
    scheduler=()
    if [[ $mode == check ]]; then
        "${scheduler[@]}" swift package --disable-sandbox benchmark thresholds check --target CourierMicro \
            --filter "$checked_benchmarks" --path "$here/Thresholds" --no-progress "$@"
    else
        "${scheduler[@]}" swift package --disable-sandbox --allow-writing-to-package-directory benchmark \
            thresholds update --target CourierMicro --filter "$checked_benchmarks" --path "$here/Thresholds" \
            --no-progress "$@"
    fi
    exit $?
fi

if [[ "${1:-}" == "micro" ]]; then
    shift
    cd "$here"
    # Build at normal priority, then measure on CPU 1 at the highest nice priority (as root) so
    # that other work on the machine rarely preempts the benchmark: see README.md. Not SCHED_FIFO:
    # the benchmark plugin runs in the same process tree, and its threads, which spin while they
    # wait for the benchmark, could starve the one CPU they share with it.
    touch "$here/Package.swift"   # see below: makes SwiftPM see new files of the root package
    swift build -c release --package-path "$here" --product CourierMicro >&2
    start_micro_server
    scheduler=()
    if [[ $(id -u) == 0 ]]; then scheduler=(nice -n -20 taskset -c 1); fi
    # --disable-sandbox: the benchmark plugin runs the benchmark executable.
    "${scheduler[@]}" swift package --disable-sandbox benchmark --target CourierMicro --no-progress --format markdown "$@" | tee "$here/.micro.out"
    {
        report_header "Courier micro benchmarks" "Scheduling: ${scheduler[*]:-default}"
        sed 's/\x1b\[[0-9;]*m//g' "$here/.micro.out"   # no terminal colours in the file
    } > "$here/RESULTS-micro.md"
    rm -f "$here/.micro.out"
    exit 0
fi

if [[ "${1:-}" == "store" ]]; then
    shift
    touch "$here/Package.swift"   # see below: makes SwiftPM see new files of the root package
    swift build -c release --package-path "$here" --product StoreBenchmark >&2
    bin="$(swift build -c release --package-path "$here" --show-bin-path)"
    # Default scheduling: the store's cost is mostly its fsync, which no scheduler shortens, and
    # the fill would hold a CPU for minutes under SCHED_FIFO. The header records the load.
    header="$(report_header "Courier SQLite token store" "Scheduling: default (shared machine)")"   # the load before
    "$bin/StoreBenchmark" "$@" > "$here/.store.out"
    {
        echo "$header"
        echo "- Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo
        cat "$here/.store.out"
    } | tee "$here/RESULTS-store.md"
    rm -f "$here/.store.out"
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
# The soak and the fault matrix need only their own executables; the rest builds everything.
case "${1:-}" in
    soak) products=(LoadHarness CourierLoadClient) ;;
    faults) products=(FaultMatrixClient) ;;
    *) products=() ;;
esac
if [[ ${#products[@]} -eq 0 ]]; then
    swift build -c release --package-path "$here" >&2
else
    for product in "${products[@]}"; do swift build -c release --package-path "$here" --product "$product" >&2; done
fi
bin="$(swift build -c release --package-path "$here" --show-bin-path)"

if [[ "${1:-}" == "soak" ]]; then
    requests="${2:-1000000}"
    serve_out="$(mktemp)"
    "$bin/LoadHarness" serve --bin-dir "$bin" --package-dir "$here" --seconds 3600 >"$serve_out" 2>/dev/null &
    serve_pid=$!
    trap 'kill $serve_pid 2>/dev/null; rm -f "$serve_out"' EXIT
    for _ in $(seq 100); do grep -q '^WORK=' "$serve_out" && break; sleep 0.2; done
    origin="$(sed -n 's/^HTTP1=//p' "$serve_out")"
    [[ -n "$origin" ]] || { echo "run.sh: the server did not start" >&2; exit 1; }
    {
        report_header "Courier soak run"
        echo "$requests GETs of 1 KiB over HTTP/1.1 at 64 in flight on one \`Session\` (default configuration), at most 30 minutes."
        echo
        taskset -c 1 "$bin/CourierLoadClient" --url "$origin/bytes/1k" --concurrency 64 --connections 64 \
            --requests "$requests" --seconds 1800 --expect-bytes 1024 --mode soak
    } | tee "$here/RESULTS-soak.md"
    exit 0
fi

if [[ "${1:-}" == "faults" ]]; then
    ready="$(mktemp)"
    python3 "$here/../Tests/Servers/serve.py" --ready-file "$ready" --only nginx,faults --no-stdin >/dev/null 2>&1 &
    servers_pid=$!
    trap 'kill $servers_pid 2>/dev/null; rm -f "$ready"' EXIT
    for _ in $(seq 300); do [[ -s "$ready" ]] && break; sleep 0.2; done
    [[ -s "$ready" ]] || { echo "run.sh: the test servers did not start" >&2; exit 1; }
    read -r faults http https attacker ca < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = d["urls"]
print(u["faults"], u["nginx_http"], u["nginx_https"], u["nginx_attacker"], d["pki"]["ca_bundle"])' "$ready")
    {
        report_header "Courier fault matrix"
        echo "One session on one CurlTransport (connect timeout 2 s, deadline 5 s, stall timeout 2 s, no retries"
        echo "unless a case says otherwise) against Tests/Servers: nginx and the fault server."
        echo
        "$bin/FaultMatrixClient" --faults "$faults" --http "$http" --https "$https" --attacker "$attacker" --ca "$ca"
    } | tee "$here/RESULTS-faults.md"
    exit 0
fi

if [[ "${1:-}" == "serve" ]]; then
    shift
    exec "$bin/LoadHarness" serve --bin-dir "$bin" --package-dir "$here" "$@"
fi
exec "$bin/LoadHarness" run --bin-dir "$bin" --package-dir "$here" --invocation "$invocation" "$@"
