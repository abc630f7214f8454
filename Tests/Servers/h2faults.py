#!/usr/bin/env python3
"""A small HTTP/2 server over TLS that refuses streams on demand, for Courier's retry tests.

    python3 Tests/Servers/h2faults.py --port P --cert CHAIN.pem --key KEY.pem

HTTP/2 only (ALPN `h2`), TLS 1.2-1.3, 127.0.0.1 only; built on the `h2` package
(Tests/Servers/h2faults/requirements.txt) and asyncio, one event loop for every
connection. Each accepted connection gets a serial number (1, 2, ...). Request bodies
are read in full and acknowledged (WINDOW_UPDATE), also on streams that were refused.

Streams to /refuse-once and /refuse-always are counted per `key=K` query parameter (both
paths share a key's counters), so tests never share counters. Routes (any method):

/refuse-once?key=K
    The first stream with key K is answered with RST_STREAM(REFUSED_STREAM) as soon as
    its HEADERS arrive, before any of its body is read: the request was not processed.
    Later streams with key K get 200 with JSON {"method", "path", "attempt": how many
    streams with K arrived so far (this one included), "connection": this connection's
    serial, "body_length": bytes of request body}.
/refuse-always?key=K
    Every stream is refused with RST_STREAM(REFUSED_STREAM).
/stats?key=K
    JSON {"streams": streams with key K that arrived, "processed": of those, the ones
    answered 200 (a refused stream never is), "refused", "connections": the serial of each
    stream's connection in arrival order, "log": [{"attempt", "connection", "stream",
    "method", "path", "outcome": "refused" | "processed" | "open" | "reset"}]}.
    Without a key: {"connections": connections accepted so far}.

Anything else: 200 `ok` (text/plain). A /refuse-* request without a key: 400.

One line per connection and per stream goes to stdout (serve.py sends it to the service's
log). SIGTERM/SIGINT: close the listener and every connection, exit 0.

A client that reaches the port without negotiating `h2` gets an HTTP/1.1 505 and the
connection closes, unless it starts with the HTTP/2 connection preface (prior knowledge).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import ssl
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from h2.errors import ErrorCodes

HOST = "127.0.0.1"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
REFUSING_PATHS = ("/refuse-once", "/refuse-always")


def error_name(code: object) -> str:
    try:
        return ErrorCodes(code).name
    except ValueError:
        return str(code)


def log(msg: str) -> None:
    now = time.time()
    print(f"{time.strftime('%H:%M:%S', time.localtime(now))}.{int(now * 1000) % 1000:03d} {msg}", flush=True)


@dataclass
class KeyRecord:
    streams: int = 0
    processed: int = 0
    refused: int = 0
    log: list[dict] = field(default_factory=list)

    def document(self) -> dict:
        return {"streams": self.streams, "processed": self.processed, "refused": self.refused,
                "connections": [entry["connection"] for entry in self.log],
                "log": self.log}


class State:
    def __init__(self) -> None:
        self.connections = 0
        self.keys: dict[str, KeyRecord] = {}
        self.open: set["H2Protocol"] = set()


STATE = State()


@dataclass
class Stream:
    stream_id: int
    method: str
    path: str
    query: dict[str, str]
    entry: dict | None  # this stream's line in its key's log, if it has a key
    body_length: int = 0


class H2Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.conn: h2.connection.H2Connection | None = None
        self.serial = 0
        self.peer = ""
        self.streams: dict[int, Stream] = {}
        self.pending: dict[int, bytes] = {}  # response bytes waiting for flow-control window
        self.first_bytes = b""  # without ALPN h2: what arrived before the protocol was clear

    # -- asyncio
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        STATE.connections += 1
        self.serial = STATE.connections
        STATE.open.add(self)
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        ssl_object = transport.get_extra_info("ssl_object")
        alpn = ssl_object.selected_alpn_protocol() if ssl_object else None
        log(f"connection {self.serial} from {self.peer}: {ssl_object.version() if ssl_object else 'no TLS'}, "
            f"ALPN {alpn or 'none'}")
        if alpn == "h2":
            self.start_h2()

    def connection_lost(self, exc: Exception | None) -> None:
        STATE.open.discard(self)
        for stream in self.streams.values():
            if stream.entry is not None and stream.entry["outcome"] == "open":
                stream.entry["outcome"] = "reset"
        self.streams.clear()
        self.pending.clear()
        log(f"connection {self.serial} closed")

    def data_received(self, data: bytes) -> None:
        if self.conn is None:
            # No ALPN h2: speak HTTP/2 only to a client that starts with its preface.
            self.first_bytes += data
            n = min(len(self.first_bytes), len(PREFACE))
            if self.first_bytes[:n] != PREFACE[:n]:
                body = b"this server speaks HTTP/2 only (ALPN h2)\n"
                self.write(b"HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Type: text/plain\r\n"
                           b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                log(f"connection {self.serial}: not HTTP/2, answered 505")
                self.close()
                return
            if n < len(PREFACE):
                return
            data, self.first_bytes = self.first_bytes, b""
            self.start_h2()
        assert self.conn is not None
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as e:
            log(f"connection {self.serial}: protocol error: {e}")
            self.flush()
            self.close()
            return
        for event in events:
            self.handle(event)
        self.flush()

    # -- HTTP/2
    def start_h2(self) -> None:
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        self.flush()

    def flush(self) -> None:
        if self.conn is not None:
            out = self.conn.data_to_send()
            if out:
                self.write(out)

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def handle(self, event: h2.events.Event) -> None:
        conn = self.conn
        assert conn is not None
        if isinstance(event, h2.events.RequestReceived):
            self.request(event)
        elif isinstance(event, h2.events.DataReceived):
            # Hand the window back for every byte, also on a refused stream.
            if event.flow_controlled_length:
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.body_length += len(event.data or b"")
        elif isinstance(event, h2.events.StreamEnded):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                self.respond(stream)
        elif isinstance(event, h2.events.StreamReset):
            stream = self.streams.pop(event.stream_id, None)
            self.pending.pop(event.stream_id, None)
            if stream is not None:
                log(f"connection {self.serial} stream {event.stream_id}: reset by the client "
                    f"({error_name(event.error_code)})")
                if stream.entry is not None and stream.entry["outcome"] == "open":
                    stream.entry["outcome"] = "reset"
        elif isinstance(event, h2.events.WindowUpdated):
            for stream_id in list(self.pending):
                self.send_pending(stream_id)
        elif isinstance(event, h2.events.ConnectionTerminated):
            log(f"connection {self.serial}: GOAWAY from the client ({error_name(event.error_code)}, "
                f"last stream {event.last_stream_id})")
            self.flush()
            self.close()

    def request(self, event: h2.events.RequestReceived) -> None:
        assert self.conn is not None
        headers = dict(event.headers or [])
        method = headers.get(":method", "")
        url = urlsplit(headers.get(":path", "/"))
        path = url.path
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        key = query.get("key")
        stream_id = event.stream_id
        entry = None
        record = None
        if key is not None and path in REFUSING_PATHS:
            record = STATE.keys.setdefault(key, KeyRecord())
            record.streams += 1
            entry = {"attempt": record.streams, "connection": self.serial, "stream": stream_id,
                     "method": method, "path": path, "outcome": "open"}
            record.log.append(entry)

        if record is not None and entry is not None and (
                path == "/refuse-always" or (path == "/refuse-once" and entry["attempt"] == 1)):
            self.conn.reset_stream(stream_id, ErrorCodes.REFUSED_STREAM)
            record.refused += 1
            entry["outcome"] = "refused"
            log(f"connection {self.serial} stream {stream_id}: {method} {headers.get(':path')} "
                f"-> RST_STREAM(REFUSED_STREAM) (key {key} attempt {entry['attempt']})")
            return
        self.streams[stream_id] = Stream(stream_id, method, path, query, entry)
        # The answer goes out once the request's END_STREAM has arrived (StreamEnded).

    def respond(self, stream: Stream) -> None:
        query_key = stream.query.get("key")
        if stream.path in REFUSING_PATHS and query_key is None:
            status, body, ctype = 400, b"key required\n", "text/plain"
        elif stream.path in REFUSING_PATHS:
            assert stream.entry is not None
            status, ctype = 200, "application/json"
            body = json.dumps({"method": stream.method, "path": stream.path,
                               "attempt": stream.entry["attempt"], "connection": self.serial,
                               "body_length": stream.body_length}).encode()
        elif stream.path == "/stats":
            status, ctype = 200, "application/json"
            if query_key is None:
                body = json.dumps({"connections": STATE.connections}).encode()
            else:
                body = json.dumps(STATE.keys.get(query_key, KeyRecord()).document()).encode()
        else:
            status, body, ctype = 200, b"ok", "text/plain"
        if stream.entry is not None:
            STATE.keys[query_key].processed += 1  # type: ignore[index]
            stream.entry["outcome"] = "processed"
        log(f"connection {self.serial} stream {stream.stream_id}: {stream.method} {stream.path}"
            f"{'?key=' + query_key if query_key else ''} body {stream.body_length} -> {status}")
        self.send(stream.stream_id, status, ctype, body, head=stream.method == "HEAD")
        del self.streams[stream.stream_id]

    def send(self, stream_id: int, status: int, ctype: str, body: bytes, head: bool = False) -> None:
        assert self.conn is not None
        self.conn.send_headers(stream_id, [(":status", str(status)), ("content-type", ctype),
                                           ("content-length", str(len(body))), ("server", "courier-h2faults")],
                               end_stream=head)
        if head:
            return
        self.pending[stream_id] = body
        self.send_pending(stream_id)

    def send_pending(self, stream_id: int) -> None:
        """Sends as much of the stream's body as the flow-control windows allow."""
        conn = self.conn
        assert conn is not None
        body = self.pending.get(stream_id)
        if body is None:
            return
        try:
            while True:
                window = min(conn.local_flow_control_window(stream_id), conn.max_outbound_frame_size)
                if body and window <= 0:
                    self.pending[stream_id] = body
                    return
                chunk, body = body[:window], body[window:]
                conn.send_data(stream_id, chunk, end_stream=not body)
                if not body:
                    break
        except h2.exceptions.StreamClosedError:
            pass
        self.pending.pop(stream_id, None)


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    # RFC 9113 9.2: no renegotiation, no compression.
    context.options |= ssl.OP_NO_COMPRESSION | getattr(ssl, "OP_NO_RENEGOTIATION", 0)
    return context


def quiet_handshake_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """Port probes and clients that reject the certificate close during the handshake."""
    exc = context.get("exception")
    if isinstance(exc, (ssl.SSLError, ConnectionError, TimeoutError)):
        log(f"TLS: {context.get('message', '')}: {exc!r}")
        return
    loop.default_exception_handler(context)


async def serve(port: int, cert: str, key: str) -> None:
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(quiet_handshake_errors)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    server = await loop.create_server(H2Protocol, HOST, port, ssl=tls_context(cert, key),
                                      reuse_address=True, backlog=1024, ssl_handshake_timeout=10)
    bound = server.sockets[0].getsockname()[1]
    log(f"h2faults listening on https://{HOST}:{bound} (ALPN h2)")
    await stop.wait()
    log("stopping")
    server.close()
    for protocol in list(STATE.open):
        if protocol.conn is not None:
            protocol.conn.close_connection()  # GOAWAY(NO_ERROR)
            protocol.flush()
        protocol.close()
    await asyncio.sleep(0.1)  # let the GOAWAYs and close_notify alerts go out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert", required=True, help="PEM: the leaf certificate followed by its chain")
    parser.add_argument("--key", required=True, help="PEM: the leaf's private key")
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.cert, args.key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
