#!/usr/bin/env python3
"""A small HTTP/1.1 server that misbehaves on purpose, for Courier's retry and fault tests.

    python3 Tests/Servers/faults.py --port P [--tls-port T --cert CHAIN --key KEY]

With `--tls-port`, the same routes are served over TLS (HTTP/1.1 only) on a second port.

Python stdlib only, one thread per connection, 127.0.0.1 only. Connections are kept alive
unless the request says `Connection: close`. Routes (query parameters are optional):

/reuse-dies[?key=K&barrier=N&wait=S]
    The first request on a connection is answered 200 (keep-alive, a small body); any later
    request on the same connection is read in full and then the connection is reset (RST,
    SO_LINGER 0) without an answer: every pooled connection dies when it is reused, as
    connections an idle timeout closed. With `barrier=N` a first request is answered only
    once N first requests with the same key have arrived (or after S, 10, seconds), so N concurrent
    requests hold N connections: the head goes at once (so that a client waiting to
    multiplex learns the connection is HTTP/1.1 and opens others), the body after the barrier.
/status/{code}[?key=K&fail=N&retry_after=S&retry_after_date=S]
    Answers `code`. With `fail=N`, only the first N requests with key K get `code`, later
    ones 200. `retry_after=S` adds `Retry-After: S` (delta seconds, sent as given);
    `retry_after_date=S` adds an HTTP-date S seconds after the next whole second.
/oauth-error/{code}[?key=K&error=E&retry_after=S]
    Answers `code` with a JSON OAuth error body (RFC 6749 section 5.2), `{"error": E}`
    (E is `temporarily_unavailable` by default), as a token endpoint that is overloaded or
    down for maintenance does; `retry_after=S` adds `Retry-After: S` as given.
/reset[?key=K&fail=N]
    Reads the request, then resets the connection without answering; with `fail=N` only the
    first N requests with key K, later ones 200.
/hang[?key=K&seconds=S]
    Reads the request and answers nothing for S (30) seconds.
/admin/stats[?key=K]
    JSON: {"connections": accepted connections, "requests": all requests, "dropped": requests
    answered with a reset, "paths": {path: requests}, "key": {"requests", "answered",
    "dropped", "methods": [...], "times": [arrival, wall-clock seconds], "answer_times":
    [...], "retry_after_dates": [the dates sent, seconds]}} (the key entry only with `key=K`).
/raw?answer=A
    Answers bytes that are not a valid HTTP response, then closes: `not-http` (`HELLO WORLD`),
    `bad-case` (`Http/1.1 200 OK`), `status-1000`, `status-99`, `status-0` (out of 100-999),
    `no-status` (a head of fields only), `two-lengths` (`Content-Length` 4 and 10 over a 4-byte
    body), `no-reason` (`HTTP/1.1 200`, valid).
/stall-after?bytes=N[&seconds=S]
    A head announcing N + 1 MiB bytes, N body bytes, then nothing for S (30) seconds.
/encoding?kind=K
    A body the client cannot decode: `unknown` (`Content-Encoding: br2`), `corrupt` (gzip
    whose compressed bytes are damaged).
/trailers
    A chunked body `Response body` with the trailer fields `X-Trailer-One: first-value`,
    `X-Trailer-Two: second-value` and `X-Checksum: abc123`.
/echo-trailers
    JSON {"method", "body", "headers", "trailers"} of the request, its chunked body's trailer
    fields included (names lowercased).
/speak?rounds=N[&key=K]
    Full duplex, for a chunked request body: the head at once, then N times one chunk `A`
    followed by one byte read from the request body; then the last chunk, while the request
    body is still open; then the rest of the request body is read to its end (the key's
    `request_ended` turns true; `echoed` counts the bytes read).
/answer-first?bytes=N[&gzip=1&key=K]
    Answers at once, before reading the request body: N bytes (`0123456789abcdef` repeated)
    with a Content-Length (gzip-compressed with `gzip=1`); then reads the request body to its
    end (the key's `request_ended` turns true, `echoed` counts its bytes).
/no-read?seconds=S
    Reads the request head and not its body, answers nothing for S (30) seconds: an upload
    stalls once the socket buffers are full.
POST /admin/reset
    Forgets every counter and key.

Anything else: 404.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import math
import socket
import ssl
import struct
import sys
import threading
import time
import zlib
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
MAX_HEAD = 64 * 1024


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.reset()

    def reset(self) -> None:
        self.connections = 0
        self.requests = 0
        self.dropped = 0
        self.paths: dict[str, int] = {}
        self.keys: dict[str, dict] = {}
        self.arrivals: dict[str, int] = {}  # barrier counts per key

    def key(self, key: str) -> dict:
        return self.keys.setdefault(key, {"requests": 0, "answered": 0, "dropped": 0, "methods": [],
                                          "times": [], "answer_times": [], "retry_after_dates": [],
                                          "echoed": 0, "request_ended": False,
                                          "acknowledged": 0})


STATS = Stats()


# Routes whose handler reads the request body itself (or never).
STREAMING_PATHS = {"/speak", "/no-read", "/answer-first"}


class Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.trailers: dict[str, str] = {}
        url = urlsplit(target)
        self.path = url.path
        self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self.index = 0  # the how-manieth request of its key

    def int_arg(self, name: str, default: int) -> int:
        try:
            return int(self.query.get(name, default))
        except ValueError:
            return default


class Connection:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        self.served = 0

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def read_request(self) -> Request | None:
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEAD or not self._fill():
                return None
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        trailers: dict[str, str] = {}
        if urlsplit(parts[1]).path in STREAMING_PATHS:
            pass
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            read = self._read_chunked()
            if read is None:
                return None
            body, trailers = read
        else:
            length = int(headers.get("content-length", "0") or "0")
            while len(self.buf) < length:
                if not self._fill():
                    return None
            body, self.buf = self.buf[:length], self.buf[length:]
        request = Request(parts[0], parts[1], headers, body)
        request.trailers = trailers
        return request

    def read_exactly(self, count: int) -> bytes | None:
        while len(self.buf) < count:
            if not self._fill():
                return None
        data, self.buf = self.buf[:count], self.buf[count:]
        return data

    def read_line(self) -> bytes | None:
        while b"\r\n" not in self.buf:
            if not self._fill():
                return None
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def read_chunk(self, trailers: dict[str, str] | None = None) -> bytes | None:
        """One chunk of a chunked body: its data, or b"" for the last chunk, whose trailer
        section is read (into `trailers`, names lowercased)."""
        line = self.read_line()
        if line is None:
            return None
        size = int(line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while True:  # the trailer section ends with an empty line
                field = self.read_line()
                if field is None:
                    return None
                if not field:
                    return b""
                if trailers is not None:
                    name, _, value = field.decode("latin-1").partition(":")
                    trailers[name.strip().lower()] = value.strip()
        data = self.read_exactly(size + 2)
        return None if data is None else data[:size]

    def _read_chunked(self) -> tuple[bytes, dict[str, str]] | None:
        body = b""
        trailers: dict[str, str] = {}
        while True:
            chunk = self.read_chunk(trailers)
            if chunk is None:
                return None
            if not chunk:
                return body, trailers
            body += chunk

    def send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
             close: bool = False) -> None:
        reason = {200: "OK", 404: "Not Found"}.get(status, "Status")
        headers = headers or {}
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
        if not any(name.lower() == "content-type" for name in headers):
            lines.append("Content-Type: text/plain")
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if close:
            lines.append("Connection: close")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def reset(self) -> None:
        """Closes the connection with a RST instead of a FIN."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


def count(request: Request) -> dict | None:
    """Counts an arriving request; returns its key's entry (under the lock) when it has a key."""
    with STATS.lock:
        STATS.requests += 1
        STATS.paths[request.path] = STATS.paths.get(request.path, 0) + 1
        key = request.query.get("key")
        if key is None:
            return None
        entry = STATS.key(key)
        entry["requests"] += 1
        request.index = entry["requests"]
        entry["methods"].append(request.method)
        entry["times"].append(time.time())
        return entry


def answered(entry: dict | None) -> None:
    if entry is not None:
        with STATS.lock:
            entry["answered"] += 1
            entry["answer_times"].append(time.time())


def dropped(entry: dict | None) -> None:
    with STATS.lock:
        STATS.dropped += 1
        if entry is not None:
            entry["dropped"] += 1


def failing(request: Request, entry: dict | None) -> bool:
    """Whether this request is among the first `fail` of its key (every request without `fail`)."""
    if "fail" not in request.query:
        return True
    return entry is not None and request.index <= request.int_arg("fail", 0)


def hold(conn: Connection, request: Request) -> None:
    """Answers nothing more for `seconds` (30) seconds, or until the client closes."""
    conn.sock.settimeout(float(request.int_arg("seconds", 30)))
    try:
        conn.sock.recv(1)
    except OSError:
        pass


def read_rest_of_body(conn: Connection, request: Request, entry: dict | None) -> bool:
    """Reads what is left of a request body a handler did not read up front, counting its bytes
    in the key's `echoed` and setting `request_ended` at its end; False when the connection
    closed first."""
    def echoed(count: int) -> None:
        if entry is not None:
            with STATS.lock:
                entry["echoed"] += count

    if request.headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            chunk = conn.read_chunk()
            if chunk is None:
                return False
            if chunk == b"":
                break
            echoed(len(chunk))
    else:
        length = int(request.headers.get("content-length", "0") or "0")
        if conn.read_exactly(length) is None:
            return False
        echoed(length)
    if entry is not None:
        with STATS.lock:
            entry["request_ended"] = True
    return True


def handle(conn: Connection) -> None:
    while True:
        request = conn.read_request()
        if request is None:
            return
        close = request.headers.get("connection", "").lower() == "close"
        if request.path == "/admin/reset" and request.method == "POST":
            with STATS.lock:
                STATS.reset()
            conn.send(200, b"reset", close=close)
        elif request.path == "/admin/stats":
            with STATS.lock:
                stats = {"connections": STATS.connections, "requests": STATS.requests,
                         "dropped": STATS.dropped, "paths": dict(STATS.paths)}
                key = request.query.get("key")
                if key is not None:
                    stats["key"] = json.loads(json.dumps(STATS.key(key)))
            conn.send(200, json.dumps(stats).encode(), {"Content-Type": "application/json"}, close=close)
        else:
            entry = count(request)
            if request.path == "/reuse-dies":
                if conn.served > 0:
                    dropped(entry)
                    conn.reset()
                    return
                barrier = request.int_arg("barrier", 0)
                if barrier > 0:
                    # The head at once (a client learns the connection is HTTP/1.1 and opens
                    # more rather than wait to multiplex), the body once all have arrived.
                    body = b"fresh connection"
                    conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                      + f"Content-Length: {len(body)}\r\n\r\n".encode())
                    key = request.query.get("key", "")
                    with STATS.lock:
                        STATS.arrivals[key] = STATS.arrivals.get(key, 0) + 1
                        STATS.lock.notify_all()
                        STATS.lock.wait_for(lambda: STATS.arrivals.get(key, 0) >= barrier,
                                            timeout=request.int_arg("wait", 10))
                    answered(entry)
                    conn.sock.sendall(body)
                else:
                    answered(entry)
                    conn.send(200, b"fresh connection", close=close)
            elif request.path.startswith("/status/"):
                try:
                    code = int(request.path.split("/")[2])
                except (IndexError, ValueError):
                    code = 400
                headers: dict[str, str] = {}
                if failing(request, entry):
                    if "retry_after" in request.query:
                        headers["Retry-After"] = request.query["retry_after"]
                    if "retry_after_date" in request.query:
                        when = math.ceil(time.time()) + request.int_arg("retry_after_date", 0)
                        headers["Retry-After"] = email.utils.formatdate(when, usegmt=True)
                        if entry is not None:
                            with STATS.lock:
                                entry["retry_after_dates"].append(when)
                else:
                    code = 200
                answered(entry)
                conn.send(code, f"status {code}".encode(), headers, close=close)
            elif request.path.startswith("/oauth-error/"):
                try:
                    code = int(request.path.split("/")[2])
                except (IndexError, ValueError):
                    code = 400
                headers = {"Content-Type": "application/json", "Cache-Control": "no-store"}
                if "retry_after" in request.query:
                    headers["Retry-After"] = request.query["retry_after"]
                body = json.dumps({"error": request.query.get("error", "temporarily_unavailable")})
                answered(entry)
                conn.send(code, body.encode(), headers, close=close)
            elif request.path == "/reset":
                if failing(request, entry):
                    dropped(entry)
                    conn.reset()
                    return
                answered(entry)
                conn.send(200, b"not reset", close=close)
            elif request.path == "/truncated-chunked":
                # A chunked body cut off: two chunks, then the connection closes without
                # the last chunk.
                conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                  b"Transfer-Encoding: chunked\r\n\r\n"
                                  b"10\r\n0123456789abcdef\r\n10\r\n0123456789abcdef\r\n")
                dropped(entry)
                return
            elif request.path == "/slow-loris":
                # The head one byte every `interval` ms (500), for at most `seconds` (30).
                head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                        + b"X-Padding: " + b"x" * 4096 + b"\r\nContent-Length: 2\r\n\r\nok")
                deadline = time.time() + request.int_arg("seconds", 30)
                for byte in head:
                    if time.time() > deadline:
                        break
                    conn.sock.sendall(bytes([byte]))
                    time.sleep(request.int_arg("interval", 500) / 1000)
                dropped(entry)
                return
            elif request.path == "/redirect-loop":
                answered(entry)
                conn.send(302, b"again", {"Location": request.target}, close=close)
            elif request.path == "/gzip-bomb":
                # `Content-Encoding: gzip` over `mib` MiB (1024) of zeros, compressed on the
                # fly (about 1 KiB on the wire per MiB decoded), chunked.
                conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                  b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n")
                compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
                zeros = bytes(1 << 20)

                def chunk(data: bytes) -> None:
                    if data:
                        conn.sock.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")

                for _ in range(request.int_arg("mib", 1024)):
                    chunk(compressor.compress(zeros))
                chunk(compressor.flush())
                conn.sock.sendall(b"0\r\n\r\n")
                answered(entry)
            elif request.path == "/raw":
                answers = {
                    "not-http": b"HELLO WORLD\r\n",
                    "bad-case": b"Http/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                    "status-1000": b"HTTP/1.1 1000 Big\r\nContent-Length: 2\r\n\r\nok",
                    "status-99": b"HTTP/1.1 099 Small\r\nContent-Length: 2\r\n\r\nok",
                    "status-0": b"HTTP/1.1 000 None\r\nContent-Length: 2\r\n\r\nok",
                    "no-status": b"Content-Length: 2\r\n\r\nok",
                    "no-reason": b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
                    "two-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 10\r\n\r\n1234",
                }
                conn.sock.sendall(answers.get(request.query.get("answer", ""), b"?"))
                answered(entry)
                return
            elif request.path == "/stall-after":
                sent = request.int_arg("bytes", 0)
                conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                  + f"Content-Length: {sent + (1 << 20)}\r\n\r\n".encode() + b"x" * sent)
                answered(entry)
                hold(conn, request)
                return
            elif request.path == "/encoding":
                if request.query.get("kind") == "unknown":
                    body, encoding = b"not decodable", "br2"
                else:
                    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
                    good = compressor.compress(b"a body that will be damaged " * 64) + compressor.flush()
                    body, encoding = good[:10] + bytes(b ^ 0x5A for b in good[10:]), "gzip"
                answered(entry)
                conn.send(200, body, {"Content-Encoding": encoding}, close=close)
            elif request.path == "/trailers":
                answered(entry)
                conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                  b"Transfer-Encoding: chunked\r\nTrailer: X-Trailer-One, X-Trailer-Two, X-Checksum\r\n\r\n"
                                  b"8\r\nResponse\r\n5\r\n body\r\n0\r\n"
                                  b"X-Trailer-One: first-value\r\nX-Trailer-Two: second-value\r\n"
                                  b"X-Checksum: abc123\r\n\r\n")
            elif request.path == "/echo-trailers":
                answered(entry)
                echo = {"method": request.method, "body": request.body.decode("latin-1"),
                        "headers": request.headers, "trailers": request.trailers}
                conn.send(200, json.dumps(echo).encode(), {"Content-Type": "application/json"}, close=close)
            elif request.path == "/speak":
                conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                  b"Transfer-Encoding: chunked\r\n\r\n")
                pending = b""
                for _ in range(request.int_arg("rounds", 10)):
                    conn.sock.sendall(b"1\r\nA\r\n")
                    while not pending:
                        chunk = conn.read_chunk()
                        if not chunk:  # the request body ended or the connection closed
                            return
                        pending += chunk
                    pending = pending[1:]
                    if entry is not None:
                        with STATS.lock:
                            entry["echoed"] += 1
                conn.sock.sendall(b"0\r\n\r\n")
                answered(entry)
                if not read_rest_of_body(conn, request, entry):  # it goes on until the client ends it
                    return
            elif request.path == "/answer-first":
                size = request.int_arg("bytes", 0)
                body = (b"0123456789abcdef" * (size // 16 + 1))[:size]
                headers = {"Content-Type": "application/octet-stream"}
                if request.query.get("gzip") == "1":
                    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
                    body = compressor.compress(body) + compressor.flush()
                    headers["Content-Encoding"] = "gzip"
                conn.send(200, body, headers)
                answered(entry)
                if not read_rest_of_body(conn, request, entry):
                    return
            elif request.path == "/no-read":
                time.sleep(float(request.int_arg("seconds", 30)))
                return
            elif request.path == "/events":
                # Server-sent events one at a time: event n goes out as its own chunk, then the
                # server waits until the key's `acknowledged` reaches n (the client's `/ack`) or
                # `wait` seconds (10) pass; then it closes without the last chunk, so a client
                # that held an event back sees a truncated body instead of the next event.
                key = request.query.get("key", "")
                wait = float(request.int_arg("wait", 10))
                conn.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                  b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
                for number in range(1, request.int_arg("count", 5) + 1):
                    event = f"id: {number}\ndata: event {number}\n\n".encode()
                    conn.sock.sendall(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                    with STATS.lock:
                        acknowledged = STATS.lock.wait_for(
                            lambda: STATS.key(key)["acknowledged"] >= number, timeout=wait)
                    if not acknowledged:
                        dropped(entry)
                        return
                conn.sock.sendall(b"0\r\n\r\n")
                answered(entry)
            elif request.path == "/ack":
                with STATS.lock:
                    STATS.key(request.query.get("key", ""))["acknowledged"] += 1
                    STATS.lock.notify_all()
                answered(entry)
                conn.send(200, b"acknowledged", close=close)
            elif request.path == "/hang":
                hold(conn, request)
                return
            else:
                answered(entry)
                conn.send(404, b"no such route", close=close)
        conn.served += 1
        if close:
            return


def serve_connection(sock: socket.socket) -> None:
    try:
        handle(Connection(sock))
    except (OSError, ValueError):
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass


def serve_tls_connection(sock: socket.socket, context: ssl.SSLContext) -> None:
    try:
        sock.settimeout(10)
        tls = context.wrap_socket(sock, server_side=True)
        tls.settimeout(None)
    except (OSError, ValueError):
        sock.close()
        return
    serve_connection(tls)


def listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((HOST, port))
    listener.listen(1024)
    return listener


def accept(listener: socket.socket, context: ssl.SSLContext | None) -> None:
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with STATS.lock:
            STATS.connections += 1
        if context is None:
            threading.Thread(target=serve_connection, args=(sock,), daemon=True).start()
        else:
            threading.Thread(target=serve_tls_connection, args=(sock, context), daemon=True).start()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-port", type=int, default=None)
    parser.add_argument("--cert", help="PEM: the leaf certificate followed by its chain")
    parser.add_argument("--key", help="PEM: the leaf's private key")
    args = parser.parse_args()
    listener = listen(args.port)
    print(f"faults listening on {HOST}:{listener.getsockname()[1]}", flush=True)
    if args.tls_port is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(args.cert, args.key)
        context.set_alpn_protocols(["http/1.1"])
        tls_listener = listen(args.tls_port)
        print(f"faults listening with TLS on {HOST}:{tls_listener.getsockname()[1]}", flush=True)
        threading.Thread(target=accept, args=(tls_listener, context), daemon=True).start()
    accept(listener, None)


if __name__ == "__main__":
    sys.exit(main())
