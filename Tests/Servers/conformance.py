#!/usr/bin/env python3
"""The HTTP server behind Courier's client conformance tests (Tests/CourierTests/Conformance).

    python3 Tests/Servers/conformance.py --http-port P --raw-port Q [--tls-port R --cert CHAIN --key KEY]

127.0.0.1 only, asyncio, one task per connection (one per stream over HTTP/2).

--http-port   plain HTTP/1.1, keep-alive; request bodies with Content-Length or chunked, chunked
              request trailers parsed (the stdlib's http.server parses neither).
--raw-port    answers every request with fixed bytes that are not, or not quite, valid HTTP, then
              closes the connection.
--tls-port    the routes of --http-port over TLS (the suite's leaf chain and key), HTTP/2 when the
              client offers `h2` through ALPN, HTTP/1.1 otherwise. Needs the `h2` package
              (Tests/Servers/conformance/requirements.txt); the stdlib suffices for the rest.

Routes of --http-port and --tls-port:

/request            200 JSON of what arrived: {"method", "params": {name: [values]} (query, in
                    order, blank values kept), "headers": {name as sent: [values]}, "body" (UTF-8),
                    "trailers": {name as sent: [values]}}
/200                200, empty body
/head_with_cl       HEAD only (else 405): 200 with Content-Length: 1000 and no body
/gzip, /deflate, /brotli
                    "TEST\\n" in that coding (Content-Encoding gzip, deflate, br) when the request's
                    Accept-Encoding names it, else identity
/identity           "TEST\\n", never encoded
/header_multivalue  200 with two X-Test fields: "one", "two"
/301, /308          that status, Location: /request
/redirect_ping      301 to /redirect_pong, which answers 301 to /redirect_ping: forever
/404                404, empty body
/999                status 999 (a valid three-digit code outside the registered range), empty body
/echo               POST only (else 405): 200, each piece of the request body sent back as one
                    response chunk as soon as it arrives; the request trailers end the response
/speak              200, then 1000 times: a one-byte chunk "A", and wait until at least one byte of
                    request body arrived. The response then ends while the request body may still
                    be open; the server reads the request body to its end afterwards.
/stall[?key=K]      reads the request, answers nothing until the client goes away
/stall_body[?key=K] 200 and 1000 bytes of "A" of a chunked body that never ends (until the client
                    goes away)
/arrived?key=K      200 once a /stall or /stall_body request with key K has arrived (at once if one
                    did), 504 if none does within 10 s: a test learns that its request reached the
                    server without sleeping
/1mb_body           200, 1 000 000 bytes of "A", Content-Length
/cookie             200, Set-Cookie: foo=<random>
/etag[?key=K]       a counter N for key K, from 0: If-None-Match: N answers 304 (ETag: N,
                    Cached: true) and moves the counter on; anything else answers 200 (ETag: N,
                    Cached: false, body N)
/cached?key=K&...    a response for an HTTP cache, counted by key K. Query: cc (Cache-Control), etag
                    (ETag), lm (Last-Modified), vary (Vary; the body then ends with the value of
                    the first field it names), error=S (every request after the first answers
                    status S), private_set_cookie=1 (adds Set-Cookie), hold=1 (a conditional
                    request waits for /cached_release?key=K, at most 30 s). A request whose
                    If-None-Match names etag, or whose If-Modified-Since is lm, answers 304 with
                    the same fields; any other answers 200 with body "vN" (N: the 200s so far)
/cached_release?key=K  lets held conditional requests of K go on
/cached_count?key=K 200 JSON {"requests": n, "conditional": n} of /cached with key K
/trailers           200 chunked, body "Response body", then the trailer fields
                    X-Trailer-One: first-value, X-Trailer-Two: second-value, X-Checksum: abc123
anything else       500 "Unknown path"

Routes of --raw-port (every answer closes the connection):

/not_http           FOOBAR (no status line at all)
/http_case          Http/1.1 200 OK (the protocol name in the wrong case)
/no_reason          HTTP/1.1 200 (no reason phrase), empty body
/204_with_cl        204 with Content-Length: 1000 and no body
/304_with_cl        304 with Content-Length: 1000 and no body
/incomplete_body    200, Content-Length: 1000, then "1234" and the connection closes
/no_length_hint     200 without Content-Length or chunked coding: "1234", delimited by the close
/conflicting_cl     200, Content-Length: 10, 4 (two different lengths), then "1234"
anything else       500
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import http
import json
import ssl
import sys
import uuid
import zlib
from urllib.parse import parse_qsl, urlsplit

HOST = "127.0.0.1"
MAX_HEAD = 64 * 1024
# How long the server waits for a request body the client is still sending after the response
# ended (/speak), or for the client to close a raw connection.
DRAIN_SECONDS = 60.0

TEST_TEXT = b"TEST\n"
# Content codings of TEST_TEXT, made once at start-up (gzip with a fixed mtime: the same bytes
# every run).
ENCODED_TEXT: dict[str, bytes] = {
    "gzip": gzip.compress(TEST_TEXT, mtime=0),
    "deflate": zlib.compress(TEST_TEXT),
}
try:
    import brotlicffi

    ENCODED_TEXT["br"] = brotlicffi.compress(TEST_TEXT)
except ImportError:  # without brotli the route answers identity, as to a client that cannot decode it
    pass

RESPONSE_TRAILERS = [("X-Trailer-One", "first-value"), ("X-Trailer-Two", "second-value"),
                     ("X-Checksum", "abc123")]


class ClientGone(Exception):
    """The client closed the connection or reset the stream."""


class Exchange:
    """One request and its response, whatever the protocol underneath."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    # Filled once the request body was read to its end.
    trailers: list[tuple[str, str]]

    def __init__(self, method: str, target: str, headers: list[tuple[str, str]]) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.trailers = []
        url = urlsplit(target)
        self.path = url.path
        self.query = url.query

    def header(self, name: str) -> str | None:
        values = [v for n, v in self.headers if n.lower() == name.lower()]
        return ", ".join(values) if values else None

    async def chunk(self) -> bytes | None:
        """The next piece of request body, or None at its end."""
        raise NotImplementedError

    async def body(self) -> bytes:
        data = bytearray()
        while (piece := await self.chunk()) is not None:
            data += piece
        return bytes(data)

    async def start(self, status: int, headers: list[tuple[str, str]] | None = None,
                    length: int | None = None) -> None:
        """Sends the response head; without `length` the body is chunked (HTTP/1.1)."""
        raise NotImplementedError

    async def write(self, data: bytes) -> None:
        raise NotImplementedError

    async def end(self, trailers: list[tuple[str, str]] | None = None) -> None:
        raise NotImplementedError

    async def until_client_gone(self) -> None:
        raise NotImplementedError

    async def respond(self, status: int, headers: list[tuple[str, str]] | None = None,
                      body: bytes = b"") -> None:
        await self.start(status, headers, length=len(body))
        if body:
            await self.write(body)
        await self.end()


# --------------------------------------------------------------------------- routes

# /etag's counters by `key` query parameter.
ETAG_COUNTERS: dict[str, int] = {}


def grouped(fields: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Fields by name (the first spelling seen), values in order; names compare without case."""
    result: dict[str, list[str]] = {}
    spelling: dict[str, str] = {}
    for name, value in fields:
        key = spelling.setdefault(name.lower(), name)
        result.setdefault(key, []).append(value)
    return result


async def route_request(ex: Exchange) -> None:
    body = await ex.body()
    params: dict[str, list[str]] = {}
    for name, value in parse_qsl(ex.query, keep_blank_values=True):
        params.setdefault(name, []).append(value)
    document = {
        "method": ex.method,
        "params": params,
        "headers": grouped(ex.headers),
        "body": body.decode("utf-8", errors="replace"),
        "trailers": grouped(ex.trailers),
    }
    await ex.respond(200, [("Content-Type", "application/json")], json.dumps(document).encode())


async def route_200(ex: Exchange) -> None:
    await ex.body()
    await ex.respond(200)


async def route_head_with_cl(ex: Exchange) -> None:
    await ex.body()
    if ex.method != "HEAD":
        await ex.respond(405)
        return
    await ex.start(200, length=1000)
    await ex.end()


def encoded_route(coding: str):
    async def route(ex: Exchange) -> None:
        await ex.body()
        accepted = [token.split(";")[0].strip().lower() for token in (ex.header("accept-encoding") or "").split(",")]
        if coding in accepted and coding in ENCODED_TEXT:
            await ex.respond(200, [("Content-Encoding", coding)], ENCODED_TEXT[coding])
        else:
            await ex.respond(200, [], TEST_TEXT)
    return route


async def route_identity(ex: Exchange) -> None:
    await ex.body()
    await ex.respond(200, [], TEST_TEXT)


async def route_header_multivalue(ex: Exchange) -> None:
    await ex.body()
    await ex.respond(200, [("X-Test", "one"), ("X-Test", "two")])


def redirect_route(status: int, location: str):
    async def route(ex: Exchange) -> None:
        await ex.body()
        await ex.respond(status, [("Location", location)])
    return route


def status_route(status: int):
    async def route(ex: Exchange) -> None:
        await ex.body()
        await ex.respond(status)
    return route


async def route_echo(ex: Exchange) -> None:
    if ex.method != "POST":
        await ex.body()
        await ex.respond(405, [], b"Incorrect method")
        return
    await ex.start(200)
    while (piece := await ex.chunk()) is not None:
        await ex.write(piece)
    await ex.end(ex.trailers)


async def route_speak(ex: Exchange) -> None:
    await ex.start(200)
    for _ in range(1000):
        await ex.write(b"A")
        received = 0
        while received == 0:
            piece = await ex.chunk()
            if piece is None:  # the client ended its body early: end the response as well
                await ex.end()
                return
            received += len(piece)
    await ex.end()
    # The request body may still be open: read it to its end (or give up after a while).
    try:
        await asyncio.wait_for(ex.body(), DRAIN_SECONDS)
    except asyncio.TimeoutError:
        raise ClientGone()


# Set when a stalled request with that key has arrived (/arrived).
ARRIVALS: dict[str, asyncio.Event] = {}


def arrived(ex: Exchange) -> None:
    key = dict(parse_qsl(ex.query)).get("key")
    if key:
        ARRIVALS.setdefault(key, asyncio.Event()).set()


async def route_arrived(ex: Exchange) -> None:
    await ex.body()
    key = dict(parse_qsl(ex.query)).get("key", "")
    try:
        await asyncio.wait_for(ARRIVALS.setdefault(key, asyncio.Event()).wait(), 10)
        await ex.respond(200)
    except asyncio.TimeoutError:
        await ex.respond(504, [], b"no such request arrived")


async def route_stall(ex: Exchange) -> None:
    await ex.body()
    arrived(ex)
    await ex.until_client_gone()


async def route_stall_body(ex: Exchange) -> None:
    await ex.body()
    await ex.start(200)
    arrived(ex)
    await ex.write(b"A" * 1000)
    await ex.until_client_gone()


async def route_1mb_body(ex: Exchange) -> None:
    await ex.body()
    await ex.respond(200, [("Content-Type", "application/octet-stream")], b"A" * 1_000_000)


async def route_cookie(ex: Exchange) -> None:
    await ex.body()
    await ex.respond(200, [("Set-Cookie", f"foo={uuid.uuid4()}")])


async def route_etag(ex: Exchange) -> None:
    await ex.body()
    key = dict(parse_qsl(ex.query)).get("key", "")
    current = ETAG_COUNTERS.get(key, 0)
    if ex.header("if-none-match") == str(current):
        ETAG_COUNTERS[key] = current + 1
        await ex.respond(304, [("ETag", str(current)), ("Cached", "true")])
    else:
        await ex.respond(200, [("ETag", str(current)), ("Cached", "false")], str(current).encode())


# /cached's counts and held-request gates by `key` query parameter.
CACHED_COUNTS: dict[str, dict[str, int]] = {}
CACHED_RELEASES: dict[str, asyncio.Event] = {}


async def route_cached(ex: Exchange) -> None:
    await ex.body()
    query = dict(parse_qsl(ex.query, keep_blank_values=True))
    key = query.get("key", "")
    counts = CACHED_COUNTS.setdefault(key, {"requests": 0, "conditional": 0, "full": 0})
    counts["requests"] += 1
    etag, modified = query.get("etag"), query.get("lm")
    inm, ims = ex.header("if-none-match"), ex.header("if-modified-since")
    if inm is not None or ims is not None:
        counts["conditional"] += 1
        if query.get("hold") == "1":
            try:
                await asyncio.wait_for(CACHED_RELEASES.setdefault(key, asyncio.Event()).wait(), 30)
            except asyncio.TimeoutError:
                pass
    fields = [(name, query[param]) for param, name in
              (("cc", "Cache-Control"), ("etag", "ETag"), ("lm", "Last-Modified"), ("vary", "Vary"))
              if param in query]
    if query.get("private_set_cookie") == "1":
        fields.append(("Set-Cookie", f"session={uuid.uuid4()}"))
    if "error" in query and counts["requests"] > 1:
        await ex.respond(int(query["error"]), fields, b"error")
        return
    if (etag is not None and inm is not None and etag in [t.strip() for t in inm.split(",")]) or \
            (etag is None and modified is not None and ims == modified):
        await ex.respond(304, fields)
        return
    counts["full"] += 1
    body = f"v{counts['full']}"
    if "vary" in query:
        body += ":" + (ex.header(query["vary"].split(",")[0].strip()) or "")
    await ex.respond(200, fields + [("Content-Type", "text/plain")], body.encode())


async def route_cached_release(ex: Exchange) -> None:
    await ex.body()
    CACHED_RELEASES.setdefault(dict(parse_qsl(ex.query)).get("key", ""), asyncio.Event()).set()
    await ex.respond(200)


async def route_cached_count(ex: Exchange) -> None:
    await ex.body()
    counts = CACHED_COUNTS.get(dict(parse_qsl(ex.query)).get("key", ""), {"requests": 0, "conditional": 0})
    document = {"requests": counts["requests"], "conditional": counts["conditional"]}
    await ex.respond(200, [("Content-Type", "application/json")], json.dumps(document).encode())


async def route_trailers(ex: Exchange) -> None:
    await ex.body()
    await ex.start(200, [("Trailer", ", ".join(name for name, _ in RESPONSE_TRAILERS))])
    await ex.write(b"Response body")
    await ex.end(RESPONSE_TRAILERS)


async def route_unknown(ex: Exchange) -> None:
    await ex.body()
    await ex.respond(500, [], b"Unknown path")


ROUTES = {
    "/request": route_request,
    "/200": route_200,
    "/head_with_cl": route_head_with_cl,
    "/gzip": encoded_route("gzip"),
    "/deflate": encoded_route("deflate"),
    "/brotli": encoded_route("br"),
    "/identity": route_identity,
    "/header_multivalue": route_header_multivalue,
    "/301": redirect_route(301, "/request"),
    "/308": redirect_route(308, "/request"),
    "/redirect_ping": redirect_route(301, "/redirect_pong"),
    "/redirect_pong": redirect_route(301, "/redirect_ping"),
    "/404": status_route(404),
    "/999": status_route(999),
    "/echo": route_echo,
    "/speak": route_speak,
    "/stall": route_stall,
    "/stall_body": route_stall_body,
    "/arrived": route_arrived,
    "/1mb_body": route_1mb_body,
    "/cookie": route_cookie,
    "/etag": route_etag,
    "/cached": route_cached,
    "/cached_release": route_cached_release,
    "/cached_count": route_cached_count,
    "/trailers": route_trailers,
}


async def dispatch(ex: Exchange) -> None:
    await ROUTES.get(ex.path, route_unknown)(ex)


def reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def bodiless(status: int) -> bool:
    return 100 <= status < 200 or status in (204, 304)


# --------------------------------------------------------------------------- HTTP/1.1

def parse_fields(lines: list[str]) -> list[tuple[str, str]]:
    fields = []
    for line in lines:
        name, colon, value = line.partition(":")
        if colon and name and name == name.strip():
            fields.append((name, value.strip(" \t")))
    return fields


class HTTP1Exchange(Exchange):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str, target: str,
                 headers: list[tuple[str, str]]) -> None:
        super().__init__(method, target, headers)
        self.reader = reader
        self.writer = writer
        self.chunked_request = "chunked" in (self.header("transfer-encoding") or "").lower()
        self.remaining = 0 if self.chunked_request else int(self.header("content-length") or "0")
        self.request_done = not self.chunked_request and self.remaining == 0
        self.chunked_response = False
        self.started = False
        self.ended = False
        self.keep_alive = (self.header("connection") or "").lower() != "close"
        self.needs_continue = "100-continue" in (self.header("expect") or "").lower() and not self.request_done

    async def chunk(self) -> bytes | None:
        if self.request_done:
            return None
        if self.needs_continue:
            self.needs_continue = False
            self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await self.writer.drain()
        try:
            if not self.chunked_request:
                data = await self.reader.read(min(self.remaining, 65536))
                if not data:
                    raise ClientGone()
                self.remaining -= len(data)
                self.request_done = self.remaining == 0
                return data
            while True:
                line = await self.reader.readuntil(b"\r\n")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    lines = []
                    while (field := await self.reader.readuntil(b"\r\n")) != b"\r\n":
                        lines.append(field[:-2].decode("latin-1"))
                    self.trailers = parse_fields(lines)
                    self.request_done = True
                    return None
                data = await self.reader.readexactly(size)
                if await self.reader.readexactly(2) != b"\r\n":
                    raise ClientGone()
                return data
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            raise ClientGone()

    async def _send(self, data: bytes) -> None:
        try:
            self.writer.write(data)
            await self.writer.drain()
        except ConnectionError:
            raise ClientGone()

    async def start(self, status: int, headers: list[tuple[str, str]] | None = None,
                    length: int | None = None) -> None:
        self.started = True
        self.status = status
        fields = list(headers or [])
        if not bodiless(status):
            if length is not None:
                fields.append(("Content-Length", str(length)))
            elif self.method != "HEAD":
                fields.append(("Transfer-Encoding", "chunked"))
                self.chunked_response = True
        if not self.keep_alive:
            fields.append(("Connection", "close"))
        head = f"HTTP/1.1 {status} {reason(status)}\r\n" + "".join(f"{n}: {v}\r\n" for n, v in fields) + "\r\n"
        await self._send(head.encode("latin-1"))

    async def write(self, data: bytes) -> None:
        if self.method == "HEAD" or bodiless(self.status) or not data:
            return
        if self.chunked_response:
            data = f"{len(data):x}\r\n".encode() + data + b"\r\n"
        await self._send(data)

    async def end(self, trailers: list[tuple[str, str]] | None = None) -> None:
        self.ended = True
        if self.chunked_response:
            await self._send(b"0\r\n" + "".join(f"{n}: {v}\r\n" for n, v in (trailers or [])).encode("latin-1")
                             + b"\r\n")

    async def until_client_gone(self) -> None:
        try:
            while await self.reader.read(65536):
                pass
        except ConnectionError:
            pass
        raise ClientGone()


async def read_head(reader: asyncio.StreamReader) -> tuple[str, str, list[tuple[str, str]]] | None:
    """The method, target and fields of the next request, or None when the connection ended."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    return parts[0], parts[1], parse_fields(lines[1:])


async def serve_http1(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while (head := await read_head(reader)) is not None:
            ex = HTTP1Exchange(reader, writer, *head)
            await dispatch(ex)
            if not ex.ended or not ex.keep_alive:
                break
            # Whatever the route left unread of the request body, before the next request.
            await asyncio.wait_for(ex.body(), DRAIN_SECONDS)
    except (ClientGone, ConnectionError, asyncio.TimeoutError):
        pass
    finally:
        await close(writer)


async def close(writer: asyncio.StreamWriter) -> None:
    try:
        writer.close()
        await writer.wait_closed()
    except (ConnectionError, ssl.SSLError):
        pass


# --------------------------------------------------------------------------- raw

def raw_answer(target: str) -> bytes:
    def lines(*items: str) -> bytes:
        return "\r\n".join(items).encode("ascii")

    answers = {
        "/not_http": b"FOOBAR",
        "/http_case": lines("Http/1.1 200 OK", "Connection: close", "", ""),
        "/no_reason": lines("HTTP/1.1 200", "Connection: close", "", ""),
        "/204_with_cl": lines("HTTP/1.1 204 No Content", "Content-Length: 1000", "Connection: close", "", ""),
        "/304_with_cl": lines("HTTP/1.1 304 Not Modified", "Content-Length: 1000", "Connection: close", "", ""),
        "/incomplete_body": lines("HTTP/1.1 200 OK", "Content-Length: 1000", "Connection: close", "", "1234"),
        "/no_length_hint": lines("HTTP/1.1 200 OK", "Connection: close", "", "1234"),
        "/conflicting_cl": lines("HTTP/1.1 200 OK", "Content-Length: 10, 4", "Connection: close", "", "1234"),
    }
    return answers.get(target, lines("HTTP/1.1 500 Internal Server Error", "Connection: close", "", ""))


async def serve_raw(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await read_head(reader)
        if head is None:
            return
        writer.write(raw_answer(head[1]))
        await writer.drain()
        # Half-close and let the client close first: closing with its bytes unread would reset
        # the connection, and the client could lose the answer.
        writer.write_eof()
        try:
            await asyncio.wait_for(reader.read(), DRAIN_SECONDS)
        except asyncio.TimeoutError:
            pass
    except ConnectionError:
        pass
    finally:
        await close(writer)


# --------------------------------------------------------------------------- HTTP/2

class HTTP2Exchange(Exchange):
    def __init__(self, connection: "HTTP2Connection", stream_id: int, headers: list[tuple[str, str]]) -> None:
        pseudo = {n: v for n, v in headers if n.startswith(":")}
        fields = [(n, v) for n, v in headers if not n.startswith(":")]
        if ":authority" in pseudo:
            fields.insert(0, ("host", pseudo[":authority"]))
        super().__init__(pseudo.get(":method", "GET"), pseudo.get(":path", "/"), fields)
        self.connection = connection
        self.stream_id = stream_id
        self.pieces: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.gone = asyncio.Event()
        self.request_done = False
        self.status = 0

    async def chunk(self) -> bytes | None:
        if self.request_done:
            return None
        getter = asyncio.ensure_future(self.pieces.get())
        gone = asyncio.ensure_future(self.gone.wait())
        await asyncio.wait([getter, gone], return_when=asyncio.FIRST_COMPLETED)
        gone.cancel()
        if not getter.done():
            getter.cancel()
            raise ClientGone()
        piece = getter.result()
        if piece is None:
            self.request_done = True
            return None
        self.connection.consumed(self.stream_id, len(piece))
        return piece

    async def start(self, status: int, headers: list[tuple[str, str]] | None = None,
                    length: int | None = None) -> None:
        self.status = status
        fields = [(":status", str(status))] + [(n.lower(), v) for n, v in (headers or [])]
        if length is not None and not bodiless(status):
            fields.append(("content-length", str(length)))
        self.connection.send_headers(self.stream_id, fields)

    async def write(self, data: bytes) -> None:
        if self.method == "HEAD" or bodiless(self.status) or not data:
            return
        await self.connection.send_data(self.stream_id, data, self.gone)

    async def end(self, trailers: list[tuple[str, str]] | None = None) -> None:
        self.connection.end_stream(self.stream_id, [(n.lower(), v) for n, v in (trailers or [])])

    async def until_client_gone(self) -> None:
        await self.gone.wait()
        raise ClientGone()


class HTTP2Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        import h2.config
        import h2.connection

        self.reader = reader
        self.writer = writer
        self.h2 = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.streams: dict[int, HTTP2Exchange] = {}
        self.window_opened = asyncio.Event()
        self.tasks: set[asyncio.Task] = set()

    def flush(self) -> None:
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)

    def consumed(self, stream_id: int, count: int) -> None:
        import h2.exceptions

        try:
            self.h2.acknowledge_received_data(count, stream_id)
        except h2.exceptions.ProtocolError:  # the stream is gone: nothing to give back
            pass
        self.flush()

    def send_headers(self, stream_id: int, fields: list[tuple[str, str]]) -> None:
        self.h2.send_headers(stream_id, fields)
        self.flush()

    async def send_data(self, stream_id: int, data: bytes, gone: asyncio.Event) -> None:
        view = memoryview(data)
        while view:
            if gone.is_set():
                raise ClientGone()
            window = min(self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size)
            if window <= 0:
                self.window_opened.clear()
                await self.window_opened.wait()
                continue
            self.h2.send_data(stream_id, bytes(view[:window]))
            self.flush()
            view = view[window:]
            try:
                await self.writer.drain()
            except ConnectionError:
                raise ClientGone()

    def end_stream(self, stream_id: int, trailers: list[tuple[str, str]]) -> None:
        if trailers:
            self.h2.send_headers(stream_id, trailers, end_stream=True)
        else:
            self.h2.end_stream(stream_id)
        self.flush()

    async def run_stream(self, ex: HTTP2Exchange) -> None:
        import h2.exceptions

        try:
            await dispatch(ex)
        except (ClientGone, ConnectionError, h2.exceptions.ProtocolError):
            pass
        finally:
            self.streams.pop(ex.stream_id, None)

    async def serve(self) -> None:
        import h2.events

        self.h2.initiate_connection()
        self.flush()
        try:
            while data := await self.reader.read(65536):
                for event in self.h2.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        ex = HTTP2Exchange(self, event.stream_id, list(event.headers))
                        self.streams[event.stream_id] = ex
                        task = asyncio.ensure_future(self.run_stream(ex))
                        self.tasks.add(task)
                        task.add_done_callback(self.tasks.discard)
                    elif isinstance(event, h2.events.DataReceived):
                        # Padding is given back at once, the data once a route read it.
                        padding = event.flow_controlled_length - len(event.data)
                        if (ex := self.streams.get(event.stream_id)) is not None:
                            ex.pieces.put_nowait(event.data)
                        else:
                            padding += len(event.data)
                        if padding:
                            self.consumed(event.stream_id, padding)
                    elif isinstance(event, h2.events.TrailersReceived):
                        if (ex := self.streams.get(event.stream_id)) is not None:
                            ex.trailers = list(event.headers)
                    elif isinstance(event, h2.events.StreamEnded):
                        if (ex := self.streams.get(event.stream_id)) is not None:
                            ex.pieces.put_nowait(None)
                    elif isinstance(event, h2.events.StreamReset):
                        if (ex := self.streams.get(event.stream_id)) is not None:
                            ex.gone.set()
                    elif isinstance(event, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
                        self.window_opened.set()
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                self.flush()
                await self.writer.drain()
        except ConnectionError:
            pass
        finally:
            for ex in self.streams.values():
                ex.gone.set()
            self.window_opened.set()
            for task in list(self.tasks):
                task.cancel()
            await close(self.writer)


async def serve_tls(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    ssl_object = writer.get_extra_info("ssl_object")
    if ssl_object is not None and ssl_object.selected_alpn_protocol() == "h2":
        await HTTP2Connection(reader, writer).serve()
    else:
        await serve_http1(reader, writer)


# --------------------------------------------------------------------------- main

async def main_async(args: argparse.Namespace) -> None:
    servers = []
    if args.http_port is not None:
        servers.append(await asyncio.start_server(serve_http1, HOST, args.http_port, limit=MAX_HEAD))
    if args.raw_port is not None:
        servers.append(await asyncio.start_server(serve_raw, HOST, args.raw_port, limit=MAX_HEAD))
    if args.tls_port is not None:
        import h2  # noqa: F401  (fail at start-up, not at the first connection)

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        context.set_alpn_protocols(["h2", "http/1.1"])
        servers.append(await asyncio.start_server(serve_tls, HOST, args.tls_port, ssl=context, limit=MAX_HEAD))
    for server in servers:
        for sock in server.sockets:
            print(f"conformance listening on {HOST}:{sock.getsockname()[1]}", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--http-port", type=int)
    parser.add_argument("--raw-port", type=int)
    parser.add_argument("--tls-port", type=int)
    parser.add_argument("--cert", help="PEM chain for --tls-port")
    parser.add_argument("--key", help="PEM key for --tls-port")
    args = parser.parse_args()
    if args.tls_port is not None and not (args.cert and args.key):
        parser.error("--tls-port needs --cert and --key")
    try:
        asyncio.run(main_async(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
