#!/usr/bin/env python3
"""Attributes the samples of a `perf record --call-graph dwarf` profile of a load client
to Courier's per-request stages, in microseconds of CPU per request.

    perf script -i courier.perf -F tid,ip,sym,dso | swift demangle --simplified \
        | Scripts/perf_breakdown.py --frequency 2999 --requests 62938

Each sample goes to the first rule (in the order below) that matches any frame of its
stack, so the stages do not overlap and add up to the whole process. A second table splits
the same samples by where the leaf frame is (kernel, libcurl, malloc, retain/release, ...).
"""
import argparse
import collections
import re
import sys

# (label, regex on a demangled frame). Most specific first.
RULES = [
    ("loop: receiveHeader (header line -> HTTPField, HTTPFields.append)", r"CurlTransfer\.receiveHeader"),
    ("loop: receiveBody (copy into ResponseBuffer / stream offer)", r"CurlTransfer\.receiveBody"),
    ("loop: configureHeaders (HTTPFields -> curl_slist)", r"CurlTransfer\.configureHeaders"),
    ("loop: configure (curl_easy_setopt x N + message strings)", r"CurlTransfer\.configure"),
    ("loop: curl_easy_reset (recycle)", r"curl_easy_reset"),
    ("loop: metrics (curl_easy_getinfo x 10)", r"CurlTransfer\.metrics"),
    ("loop: complete (Response, resume continuation)", r"CurlTransfer\.complete"),
    ("loop: curl_multi_remove_handle", r"curl_multi_remove_handle"),
    ("loop: curl_multi_add_handle", r"curl_multi_add_handle"),
    ("loop: curl_multi_poll (wait)", r"curl_multi_poll"),
    ("loop: curl_multi_perform (libcurl HTTP + socket I/O)", r"curl_multi_perform"),
    ("loop: collectCompletions (other)", r"CurlMultiLoop\.collectCompletions"),
    ("loop: start (other: easy handle pick, bookkeeping)", r"CurlMultiLoop\.start"),
    ("loop: run (other: inbox, dictionary)", r"CurlMultiLoop\.run"),
    ("task: DPoP proof: ES256 signature (swift-crypto, BoringSSL ECDSA)", r"DPoPKey\.sign|ECDSA_|ecdsa_|P256\.Signing"),
    ("task: DPoP proof: jti (16 random bytes)", r"ClientAssertionJWT\.randomID"),
    ("task: DPoP proof: claims, ath SHA-256, base64url", r"DPoPProof\."),
    ("task: DPoP: sendProven (other: nonce, target URI, header fields)", r"BearerTokenMiddleware\.sendProven"),
    ("task: bearer middleware (broker token lookup, Authorization)", r"BearerTokenMiddleware|TokenBroker"),
    ("task: Session.resolve (base URL through Foundation.URL)", r"Session\.resolve"),
    ("task: Session.prepare (other: User-Agent, default fields, lock)", r"Session\.prepare"),
    ("task: CurlTransfer.init (URL string)", r"CurlTransfer\.init"),
    ("task: submit / perform (inbox lock, curl_multi_wakeup)", r"CurlMultiLoop\.(submit|perform)\("),
    ("task: CurlTransport.execute (other: continuation, cancellation handler)", r"CurlTransport\.execute"),
    ("task: Session.send (other: context, pipeline, Response copy)", r"Session\.(send|stream)"),
    ("task: response body stream (consumer side)", r"ResponseBodyStream"),
    ("harness: request loop (outcome, latency record)", r"PhaseRunner|LoadRunner|closure #1 in main"),
    ("loop: runJobs (other: running task jobs on the loop thread)", r"CurlMultiLoop\.runJobs"),
    ("runtime: Swift concurrency (task switch, enqueue, job run)", r"swift_task_|swift_job_run|swift::AsyncTask|swift_continuation|runJobInEstablishedExecutorContext"),
    ("runtime: dispatch worker (idle, wake-ups)", r"_dispatch_worker_thread|_dispatch_|start_wqthread"),
    ("startup and exit (dynamic loader, init)", r"_dl_start|_dl_init|dl_main|__libc_start_main|exit_mmap|do_exit"),
]

LEAF_CLASSES = [
    ("kernel", lambda sym, dso: "kernel" in dso),
    ("malloc/free", lambda sym, dso: "libc.so" in dso and re.search(r"malloc|free|_int_|consolidate|unlink_chunk|sysmalloc|calloc|realloc|tcache", sym)),
    ("memcpy/memmove", lambda sym, dso: re.search(r"mem(cpy|move|set)", sym)),
    ("libc other", lambda sym, dso: "libc.so" in dso),
    ("libcurl", lambda sym, dso: "libcurl" in dso),
    ("Swift retain/release/alloc", lambda sym, dso: re.search(r"swift_(retain|release|allocObject|deallocObject|slowAlloc|slowDealloc|bridgeObject|isUniquely)|RefCounts|_swift_release_dealloc", sym)),
    ("libswiftCore other (String, Array, hashing)", lambda sym, dso: "libswiftCore" in dso),
    ("libswift_Concurrency", lambda sym, dso: "Concurrency" in dso),
    ("Foundation", lambda sym, dso: "Foundation" in dso),
    ("dispatch", lambda sym, dso: "dispatch" in dso),
    ("client executable (Courier, HTTPTypes, harness)", lambda sym, dso: "LoadClient" in dso or "CourierMicro" in dso),
    ("vdso (clock_gettime)", lambda sym, dso: "vdso" in dso),
    ("other", lambda sym, dso: True),
]


def samples(stream):
    stack = []
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if stack:
                yield stack
            stack = []
            continue
        if not line.startswith("\t") and not line.startswith(" "):
            if stack:
                yield stack
            stack = []
            continue
        match = re.match(r"\s*[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$", line)
        if match:
            stack.append((match.group(1), match.group(2)))
    if stack:
        yield stack


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--frequency", type=float, required=True, help="perf record -F")
    parser.add_argument("--requests", type=float, required=True, help="requests in the profiled process, warm-up included")
    parser.add_argument("--top", type=int, default=0, help="also list the top N leaf symbols")
    args = parser.parse_args()

    by_rule = collections.Counter()
    by_leaf = collections.Counter()
    by_symbol = collections.Counter()
    by_rule_leaf = collections.defaultdict(collections.Counter)
    total = 0
    compiled = [(label, re.compile(pattern)) for label, pattern in RULES]
    for stack in samples(sys.stdin):
        total += 1
        label = "other"
        for rule_label, pattern in compiled:
            if any(pattern.search(sym) for sym, _ in stack):
                label = rule_label
                break
        by_rule[label] += 1
        leaf_sym, leaf_dso = stack[0]
        # perf names inlined frames' DSO "inlined": take the first real one below.
        for _, dso in stack:
            if dso != "inlined":
                leaf_dso = dso
                break
        for leaf_label, test in LEAF_CLASSES:
            if test(leaf_sym, leaf_dso):
                by_leaf[leaf_label] += 1
                by_rule_leaf[label][leaf_label] += 1
                break
        by_symbol[(leaf_sym[:90], leaf_dso.split("/")[-1])] += 1

    scale = 1e6 / args.frequency / args.requests
    print(f"{total} samples, {total / args.frequency:.3f} s CPU, {total * scale:.1f} µs CPU per request\n")
    print("| Stage (first match from the most specific) | µs/req | % |")
    print("|---|--:|--:|")
    for label, count in by_rule.most_common():
        print(f"| {label} | {count * scale:.2f} | {100 * count / total:.1f} |")
    print("\n| Leaf frame is in | µs/req | % |")
    print("|---|--:|--:|")
    for label, count in by_leaf.most_common():
        print(f"| {label} | {count * scale:.2f} | {100 * count / total:.1f} |")
    print("\n| Stage ≥ 5 % | split by leaf (µs/req) |")
    print("|---|---|")
    for label, count in by_rule.most_common():
        if count < 0.05 * total:
            continue
        parts = ", ".join(f"{leaf} {n * scale:.2f}" for leaf, n in by_rule_leaf[label].most_common() if n * scale >= 0.05)
        print(f"| {label} | {parts} |")
    if args.top:
        print("\n| Leaf symbol | DSO | µs/req |")
        print("|---|---|--:|")
        for (sym, dso), count in by_symbol.most_common(args.top):
            print(f"| {sym} | {dso} | {count * scale:.2f} |")


if __name__ == "__main__":
    main()
