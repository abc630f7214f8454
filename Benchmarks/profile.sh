#!/usr/bin/env bash
# Profiles one load client with perf (DWARF call graphs) against the harness's nginx and
# prints where its CPU goes per request, by Courier stage (Scripts/perf_breakdown.py).
#
#   Benchmarks/profile.sh [--tls] [--size 1k|1m] [--concurrency 64] [--seconds 3] [CLIENT [MODE]]
#   CLIENT: CourierLoadClient (default), CurlFloorClient, AHCLoadClient, URLSessionLoadClient
#   MODE:   send (default), executor, stream, access and dpop (ResourceAccess; with --tls),
#           courier-options (CurlFloorClient)
#
# Needs root (SCHED_FIFO, perf). The perf data stays in /tmp/courier-profile-*/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tls=0 size=1k concurrency=64 seconds=3
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tls) tls=1; shift ;;
        --size) size="$2"; shift 2 ;;
        --concurrency) concurrency="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        *) break ;;
    esac
done
client="${1:-CourierLoadClient}"
mode="${2:-send}"
frequency=2999

# SwiftPM does not notice files added to the root package (a path dependency) in an existing
# .build until this manifest changes: touch it so that the build plan is made anew.
touch "$here/Package.swift"
swift build -c release --package-path "$here" >&2
bin="$(swift build -c release --package-path "$here" --show-bin-path)"
out="$(mktemp -d /tmp/courier-profile-XXXXXX)"
"$bin/LoadHarness" serve --bin-dir "$bin" --seconds 600 > "$out/serve.txt" 2> "$out/serve.err" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^WORK=' "$out/serve.txt" 2>/dev/null && break; sleep 0.1; done
origin="$(sed -n 's/^HTTP1=//p' "$out/serve.txt")"
[[ $tls == 1 ]] && origin="$(sed -n 's/^TLS=//p' "$out/serve.txt")"
ca="$(sed -n 's/^CA=//p' "$out/serve.txt")"
bytes=1024; requests=1000000; [[ $size == 1m ]] && { bytes=1048576; requests=100000; }
warmup=$(( concurrency * 2 > 500 ? concurrency * 2 : 500 ))

# perf itself runs above the client's FIFO priority, or it loses samples.
chrt -f 20 perf record -q -m 8192 -e cpu-clock -F $frequency --call-graph dwarf,65528 -o "$out/perf.data" -- \
    chrt -f 10 taskset -c 1 "$bin/$client" --url "$origin/bytes/$size" --concurrency "$concurrency" \
    --connections "$concurrency" --requests "$requests" --seconds "$seconds" --warmup-requests "$warmup" \
    --warmup-seconds 0.5 --expect-bytes "$bytes" --ca "$ca" --mode "$mode" | tee "$out/result.txt"
measured="$(sed -n 's/.*"requests":\([0-9]*\).*/\1/p' "$out/result.txt")"
echo "profile of $client --mode $mode, $origin/bytes/$size, concurrency $concurrency: $out/perf.data"
perf script -i "$out/perf.data" -F tid,ip,sym,dso 2>/dev/null | swift demangle --simplified \
    | python3 "$here/Scripts/perf_breakdown.py" --frequency $frequency --requests $(( measured + warmup )) --top 25
