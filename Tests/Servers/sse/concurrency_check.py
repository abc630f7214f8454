#!/usr/bin/env python3
"""Checks that the SSE server (server.py) holds many event streams open at once.

    python3 Tests/Servers/sse/concurrency_check.py --port P [--streams 1000] [--pid SERVER_PID]

Loopback only and bounded: opens N streams to /events?count=3&interval=MS on 127.0.0.1:P,
waits until the server reports all N open at the same time (its /stats `open`), reads
each stream to its end, and gives up after --timeout seconds (60). Prints what it measured
and exits 0 when every stream got its three events, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
import uuid

HOST = "127.0.0.1"


async def get_json(port: int, path: str) -> dict:
    """One GET on its own connection, the JSON body decoded (Content-Length framed)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
    data = await reader.read(-1)
    writer.close()
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


async def one_stream(port: int, path: str, first_event: asyncio.Event, got: list[int]) -> int:
    """Reads one event stream to its end; returns how many `id:` lines it carried."""
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nAccept: text/event-stream\r\n\r\n".encode())
    body = b""
    while not body.endswith(b"0\r\n\r\n"):
        chunk = await reader.read(65536)
        if not chunk:
            break
        body += chunk
        if b"id: 1" in body and not first_event.is_set():
            got.append(1)
            first_event.set()
    writer.close()
    return body.count(b"id: ")


def rss_kib(pid: int) -> int | None:
    """The resident set size of `pid` in KiB, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


async def run(args: argparse.Namespace) -> int:
    key = f"load-{uuid.uuid4().hex[:8]}"
    path = f"/events?count=3&interval={args.interval_ms}&key={key}"
    t0 = time.monotonic()
    firsts = [asyncio.Event() for _ in range(args.streams)]
    got: list[int] = []
    tasks = [asyncio.create_task(one_stream(args.port, path, firsts[i], got)) for i in range(args.streams)]
    peak_open, rss_peak = 0, 0
    all_open_at = None
    while not all(t.done() for t in tasks):
        stats = await get_json(args.port, f"/stats?key={key}")
        peak_open = max(peak_open, stats["open"])
        if all_open_at is None and stats["open"] >= args.streams:
            all_open_at = time.monotonic() - t0
        if args.pid:
            rss_peak = max(rss_peak, rss_kib(args.pid) or 0)
        await asyncio.sleep(0.1)
    counts = [t.result() for t in tasks]
    elapsed = time.monotonic() - t0
    final = await get_json(args.port, f"/stats?key={key}")
    ok = all(c == 3 for c in counts)
    print(f"streams={args.streams} all_complete={ok} peak_open={peak_open} "
          f"all_open_after_s={all_open_at if all_open_at is None else round(all_open_at, 2)} "
          f"elapsed_s={elapsed:.2f} events_sent={final['events_sent']} completed={final['completed']}"
          + (f" server_rss_peak_mib={rss_peak / 1024:.1f}" if args.pid else ""))
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--interval-ms", type=int, default=3000, help="between a stream's events")
    ap.add_argument("--pid", type=int, help="the server's pid, to report its memory")
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        return asyncio.run(asyncio.wait_for(run(args), args.timeout))
    except TimeoutError:
        print(f"gave up after {args.timeout} s", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
