#!/usr/bin/env python3
"""The server-sent events server Courier's event tests run against.

    python3 Tests/Servers/sse/server.py --port P

127.0.0.1 only. The events are written by sse-starlette's EventSourceResponse on uvicorn
(one process, asyncio, the h11 protocol, no access log): an SSE implementation that is not
Courier's own. Packages pinned in Tests/Servers/sse/requirements.txt.

Every route takes an optional key=K; statistics are kept per key (default key: "default"),
so tests that run at the same time do not see each other's counts.

GET /events?count=N&size=S&lines=L&type=T&retry=MS&drop_every=D&ping=SEC&interval=MS&sep=crlf|lf|cr
    events with ids 1...N (count 10), each `id: n`, `event: T` (tick) and data that starts
    with "n:" ("n:" then ":1" ... ":L" lines with lines=L), padded with "x" to S bytes.
    Resumes after the request's Last-Event-ID; a Last-Event-ID >= N gets 204 No Content.
    retry: a `retry: MS` field first, once per connection. drop_every=D: after D events on one
    connection (and more to come) the connection is closed without the chunked body's end.
    ping: heartbeat comments every SEC seconds (sse-starlette's ping; none without it).
    interval: milliseconds between events. sep: the line ending (sse-starlette's default CRLF).
    After event N the stream ends cleanly.
GET /heartbeat?ping=SEC&after=SEC&count=N
    only heartbeat comments every `ping` seconds (1), then after `after` seconds (3) N events
    (ids 1...N, 1), then the end.
GET /nocontent                      204
GET /notsse                         200 application/json
GET /status?code=C                  status C with a short text/plain body
POST /chat  {"prompt": "...", "tokens": K}
    K events `data: {"delta":"w<i> "}` (no id, no event name), then `data: [DONE]`, then the end.
GET /raw?b64=B&split=A,B,...&pause_ms=M
    the bytes B (base64, standard or URL-safe alphabet, padding optional) as a text/event-stream
    body, written in pieces of the sizes listed (the rest in one last piece), M ms apart.
GET /stats?key=K                    JSON statistics of key K
GET|POST /reset[?key=K]             forgets key K (every key without one)
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import json
import logging
import resource
import sys

import uvicorn
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

HOST = "127.0.0.1"
SEPARATORS = {"crlf": "\r\n", "lf": "\n", "cr": "\r"}
MAX_COUNT = 1_000_000
MAX_SIZE = 1 << 20


class DropConnection(Exception):
    """Raised from an event generator to close the connection without ending the body.

    uvicorn closes the transport when an application fails after its response started: the
    client sees the body cut short (no last chunk), which is what a dropped stream looks like.
    """


class QuietDrops(logging.Filter):
    """Keeps uvicorn from logging a traceback for every connection dropped on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, DropConnection):
                return False
            if isinstance(exc, BaseExceptionGroup):
                if any(isinstance(e, DropConnection) for e in exc.exceptions):
                    return False
            exc = exc.__cause__ or exc.__context__
        return True


class Stats:
    """Per-key counters, shared by every route (one event loop, so no lock)."""

    def __init__(self) -> None:
        self.keys: dict[str, dict] = {}

    def of(self, key: str) -> dict:
        """The counters of `key`, made on first use."""
        return self.keys.setdefault(key, {
            "connections": 0,        # requests answered by a streaming route (204s included)
            "last_event_ids": [],    # each connection's Last-Event-ID header, in order (None: absent)
            "events_sent": 0,        # events written (retry-only blocks and pings not counted)
            "drops": 0,              # connections closed on purpose without the body's end
            "completed": 0,          # streams that ended cleanly after their last event
            "no_content": 0,         # reconnects answered 204
            "open": 0,               # streams running now
            "client_gone": 0,        # streams the client closed before their end
            "chat_prompts": [],      # the prompts POST /chat received
        })


STATS = Stats()


def number(request: Request, name: str, default: float, low: float = 0, high: float = MAX_COUNT) -> float:
    """Query parameter `name` as a number clamped to [low, high], or `default`."""
    try:
        value = float(request.query_params.get(name, default))
    except ValueError:
        return default
    return min(max(value, low), high)


def key_of(request: Request) -> str:
    """The statistics key of a request."""
    return request.query_params.get("key", "default")


def last_event_id(request: Request) -> str | None:
    """The request's Last-Event-ID header, or None."""
    return request.headers.get("last-event-id")


def event_data(n: int, size: int, lines: int) -> str:
    """The data of event n: "n:" (or L lines "n:1" ... "n:L"), padded with "x" to `size` bytes."""
    text = "\n".join(f"{n}:{i}" for i in range(1, lines + 1)) if lines > 0 else f"{n}:"
    return text + "x" * max(0, size - len(text))


async def events(request: Request) -> Response:
    """GET /events: a numbered sequence that resumes after Last-Event-ID."""
    stats = STATS.of(key_of(request))
    header = last_event_id(request)
    stats["connections"] += 1
    stats["last_event_ids"].append(header)
    count = int(number(request, "count", 10))
    size = int(number(request, "size", 0, high=MAX_SIZE))
    lines = int(number(request, "lines", 0, high=10_000))
    retry = request.query_params.get("retry")
    drop_every = int(number(request, "drop_every", 0))
    ping = number(request, "ping", 0, high=3600)
    interval = number(request, "interval", 0, high=600_000) / 1000
    kind = request.query_params.get("type", "tick")
    sep = SEPARATORS.get(request.query_params.get("sep", "crlf"), "\r\n")
    try:
        first = max(1, int(header) + 1) if header is not None else 1
    except ValueError:
        first = 1  # not a number: start over
    if first > count:
        stats["no_content"] += 1
        return Response(status_code=204)

    async def stream():
        sent = 0
        stats["open"] += 1
        try:
            if retry is not None and retry.isdigit():
                yield ServerSentEvent(retry=int(retry), sep=sep)
            for n in range(first, count + 1):
                if n > first and interval > 0:
                    await asyncio.sleep(interval)
                yield ServerSentEvent(event_data(n, size, lines), id=str(n), event=kind, sep=sep)
                sent += 1
                stats["events_sent"] += 1
                if drop_every > 0 and sent % drop_every == 0 and n < count:
                    # Let the transport take the event first: the drop comes after it.
                    await asyncio.sleep(0.01)
                    stats["drops"] += 1
                    raise DropConnection()
            stats["completed"] += 1
        except asyncio.CancelledError:
            stats["client_gone"] += 1
            raise
        finally:
            stats["open"] -= 1

    return EventSourceResponse(stream(), ping=ping, sep=sep)


async def heartbeat(request: Request) -> Response:
    """GET /heartbeat: heartbeat comments only, then a few events after a while."""
    stats = STATS.of(key_of(request))
    stats["connections"] += 1
    stats["last_event_ids"].append(last_event_id(request))
    ping = number(request, "ping", 1, low=0.01, high=3600)
    after = number(request, "after", 3, high=3600)
    count = int(number(request, "count", 1))

    async def stream():
        stats["open"] += 1
        try:
            await asyncio.sleep(after)
            for n in range(1, count + 1):
                yield ServerSentEvent(f"{n}:", id=str(n), event="tick")
                stats["events_sent"] += 1
            stats["completed"] += 1
        except asyncio.CancelledError:
            stats["client_gone"] += 1
            raise
        finally:
            stats["open"] -= 1

    return EventSourceResponse(stream(), ping=ping)


async def nocontent(request: Request) -> Response:
    """GET /nocontent: 204, the way a server tells an event source to stop."""
    STATS.of(key_of(request))["no_content"] += 1
    return Response(status_code=204)


async def notsse(request: Request) -> Response:
    """GET /notsse: a 200 that is not an event stream."""
    return JSONResponse({"not": "an event stream"})


async def status(request: Request) -> Response:
    """GET /status?code=C: that status with a short body."""
    code = int(number(request, "code", 500, low=200, high=599))
    return PlainTextResponse(f"status {code}\n", status_code=code)


async def chat(request: Request) -> Response:
    """POST /chat: the way language-model APIs stream: JSON deltas, then [DONE]."""
    stats = STATS.of(key_of(request))
    try:
        body = json.loads(await request.body())
        tokens = min(max(int(body.get("tokens", 5)), 0), MAX_COUNT)
        prompt = str(body.get("prompt", ""))
    except (ValueError, TypeError, AttributeError):
        return JSONResponse({"error": "the body must be JSON {\"prompt\": ..., \"tokens\": K}"}, status_code=400)
    stats["connections"] += 1
    stats["last_event_ids"].append(last_event_id(request))
    stats["chat_prompts"].append(prompt)

    async def stream():
        for i in range(1, tokens + 1):
            yield ServerSentEvent(json.dumps({"delta": f"w{i} "}, separators=(",", ":")))
            stats["events_sent"] += 1
        yield ServerSentEvent("[DONE]")
        stats["completed"] += 1

    return EventSourceResponse(stream(), ping=0)


def decode_base64(text: str) -> bytes:
    """Standard or URL-safe base64, padding optional ('+' that a query turned into ' ' too)."""
    text = text.replace(" ", "+").replace("-", "+").replace("_", "/").rstrip("=")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


async def raw(request: Request) -> Response:
    """GET /raw: given bytes as an event stream, in pieces of given sizes, for chunk boundaries."""
    stats = STATS.of(key_of(request))
    try:
        data = decode_base64(request.query_params.get("b64", ""))
        sizes = [int(s) for s in request.query_params.get("split", "").split(",") if s.strip()]
    except (ValueError, binascii.Error):
        return PlainTextResponse("bad b64 or split\n", status_code=400)
    if any(s <= 0 for s in sizes):
        return PlainTextResponse("split sizes must be > 0\n", status_code=400)
    pause = number(request, "pause_ms", 0, high=60_000) / 1000
    stats["connections"] += 1
    stats["last_event_ids"].append(last_event_id(request))
    pieces, offset = [], 0
    for s in sizes:
        if offset >= len(data):
            break
        pieces.append(data[offset:offset + s])
        offset += s
    if offset < len(data):
        pieces.append(data[offset:])

    async def body():
        for i, piece in enumerate(pieces):
            if i > 0 and pause > 0:
                await asyncio.sleep(pause)
            yield piece

    return StreamingResponse(body(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})


async def stats(request: Request) -> Response:
    """GET /stats?key=K: the counters of K."""
    return JSONResponse(STATS.of(key_of(request)))


async def reset(request: Request) -> Response:
    """GET or POST /reset[?key=K]: forgets K, or every key."""
    if "key" in request.query_params:
        STATS.keys.pop(key_of(request), None)
    else:
        STATS.keys.clear()
    return JSONResponse({"reset": True})


app = Starlette(routes=[
    Route("/events", events),
    Route("/heartbeat", heartbeat),
    Route("/nocontent", nocontent),
    Route("/notsse", notsse),
    Route("/status", status),
    Route("/chat", chat, methods=["POST"]),
    Route("/raw", raw),
    Route("/stats", stats),
    Route("/reset", reset, methods=["GET", "POST"]),
])


def raise_file_limit() -> None:
    """Every open stream is a descriptor: take the hard limit (1,000 streams need more than 1024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
        except (ValueError, OSError):
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log-level", default="warning")
    args = ap.parse_args()
    raise_file_limit()
    config = uvicorn.Config(app, host=HOST, port=args.port, http="h11", loop="asyncio", access_log=False,
                            log_level=args.log_level, backlog=4096, timeout_graceful_shutdown=1)
    # After Config has set up logging, which would otherwise replace the filter.
    logging.getLogger("uvicorn.error").addFilter(QuietDrops())
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
