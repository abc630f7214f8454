#!/usr/bin/env python3
"""A small forward HTTP proxy for Courier's tests (Python stdlib only, threaded).

    python3 Tests/Servers/proxy.py --port P [--auth-port Q] --log FILE

- Absolute-form requests (`GET http://127.0.0.1:8080/path HTTP/1.1`) are forwarded
  to the origin with hop-by-hop headers removed and `Via: 1.1 courier-proxy` added;
  the response is relayed (keep-alive with the client when the framing allows it).
- `CONNECT host:port` opens a tunnel (HTTPS through the proxy): the TLS session is
  end-to-end between client and origin, the proxy only copies bytes.
- Only targets on 127.0.0.1 / localhost are allowed; anything else gets 403
  (no DNS lookups, no traffic leaves the machine).
- On `--auth-port` every request needs `Proxy-Authorization: Basic` with
  proxyuser:proxypass (`--user`, `--password`); otherwise 407 with
  `Proxy-Authenticate: Basic realm="courier-proxy"`.
- One JSON line per request or tunnel is appended to `--log`, *before* the status
  line goes back to the client (a client that has its response can read its line):
  {"time", "listener" ("open"/"auth"), "client_port", "method", "target",
   "proxy_authorization" (header present: true/false, never the value),
   "status" (what the proxy answered: the origin's status, 200 for an
   established tunnel, 403/407/502/400 for refusals)}.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import select
import socket
import socketserver
import sys
import threading
import time
from urllib.parse import urlsplit

ALLOWED_HOSTS = {"127.0.0.1", "localhost"}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization",
              "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"}
MAX_HEAD = 64 * 1024
IDLE_TIMEOUT = 120.0


class ProtocolError(Exception):
    pass


class RequestLog:
    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = threading.Lock()
        open(path, "a").close()

    def write(self, **entry: object) -> None:
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **entry}
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self.lock:
            with open(self.path, "a") as f:
                f.write(line)
                f.flush()


class Conn:
    """A client socket with a read buffer."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def read_head(self) -> bytes | None:
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                if self.buf.strip():
                    raise ProtocolError("connection closed inside a request head")
                return None
            self.buf += chunk
            if len(self.buf) > MAX_HEAD:
                raise ProtocolError("request head too large")
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        return head

    def read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(min(1 << 20, max(65536, n - len(self.buf))))
            if not chunk:
                raise ProtocolError("connection closed inside a request body")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ProtocolError("connection closed inside a chunked body")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def read_chunked(self) -> bytes:
        parts = []
        while True:
            size = int(self.read_line().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.read_line():  # trailers
                    pass
                return b"".join(parts)
            parts.append(self.read_exact(size))
            self.read_line()


def parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise ProtocolError(f"bad request line {lines[0]!r}")
    method, target, version = parts
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise ProtocolError(f"bad header line {line!r}")
        headers.append((name.strip(), value.strip()))
    return method, target, version, headers


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def split_host_port(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    return host.lower(), int(port) if port else default_port


class ProxyHandler(socketserver.BaseRequestHandler):
    server: "ProxyServer"

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(IDLE_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Conn(sock)
        try:
            while True:
                head = conn.read_head()
                if head is None:
                    return
                if not self.handle_one(conn, head):
                    return
        except (OSError, ProtocolError, ValueError, http.client.HTTPException) as e:
            if not isinstance(e, (ConnectionResetError, BrokenPipeError, TimeoutError)):
                print(f"proxy: {self.client_address}: {e!r}", file=sys.stderr, flush=True)

    # -- helpers
    def log(self, method: str, target: str, has_auth: bool, status: int) -> None:
        self.server.request_log.write(listener=self.server.listener, client_port=self.client_address[1],
                                      method=method, target=target, proxy_authorization=has_auth,
                                      status=status)

    def reply(self, status: int, reason: str, extra: list[tuple[str, str]] = (), body: bytes = b"",
              close: bool = False) -> None:
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{k}: {v}" for k, v in extra]
        lines.append(f"Content-Length: {len(body)}")
        lines.append("Content-Type: text/plain")
        if close:
            lines.append("Connection: close")
        self.request.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def authorized(self, headers: list[tuple[str, str]]) -> bool:
        if not self.server.credentials:
            return True
        value = header(headers, "proxy-authorization") or ""
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            return base64.b64decode(token.strip(), validate=True).decode() == self.server.credentials
        except (ValueError, UnicodeDecodeError):
            return False

    # -- one request; returns whether to keep the client connection
    def handle_one(self, conn: Conn, head: bytes) -> bool:
        method, target, version, headers = parse_head(head)
        has_auth = header(headers, "proxy-authorization") is not None
        body = b""
        if method != "CONNECT":
            # Read the request body first, so a refusal leaves the connection usable.
            if (header(headers, "transfer-encoding") or "").lower().endswith("chunked"):
                body = conn.read_chunked()
            else:
                body = conn.read_exact(int(header(headers, "content-length") or "0"))
        client_close = ((header(headers, "connection") or header(headers, "proxy-connection") or "").lower() == "close"
                        or version == "HTTP/1.0")

        if method == "CONNECT":
            host, port = split_host_port(target, 443)
        else:
            url = urlsplit(target)
            if url.scheme.lower() != "http" or not url.netloc:
                self.log(method, target, has_auth, 400)
                self.reply(400, "Bad Request", body=b"absolute-form http:// target required\n", close=True)
                return False
            host, port = split_host_port(url.netloc, 80)

        if not self.authorized(headers):
            self.log(method, target, has_auth, 407)
            self.reply(407, "Proxy Authentication Required",
                       [("Proxy-Authenticate", 'Basic realm="courier-proxy"')],
                       b"proxy authentication required\n", close=client_close)
            return not client_close
        if host not in ALLOWED_HOSTS:
            self.log(method, target, has_auth, 403)
            self.reply(403, "Forbidden", body=f"target {host} not allowed\n".encode(), close=client_close)
            return not client_close
        connect_host = "127.0.0.1" if host == "localhost" else host

        if method == "CONNECT":
            return self.tunnel(conn, target, has_auth, connect_host, port)
        return self.forward(conn, method, target, version, headers, body, has_auth, connect_host, port,
                            client_close)

    def tunnel(self, conn: Conn, target: str, has_auth: bool, host: str, port: int) -> bool:
        try:
            upstream = socket.create_connection((host, port), timeout=10)
        except OSError as e:
            self.log("CONNECT", target, has_auth, 502)
            self.reply(502, "Bad Gateway", body=f"cannot connect to {target}: {e}\n".encode(), close=True)
            return False
        self.log("CONNECT", target, has_auth, 200)
        with upstream:
            upstream.settimeout(None)
            self.request.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if conn.buf:
                upstream.sendall(conn.buf)
                conn.buf = b""
            client = self.request
            client.settimeout(None)
            peers = {client: upstream, upstream: client}
            open_ = {client, upstream}
            while open_:
                readable, _, _ = select.select(list(open_), [], [], IDLE_TIMEOUT)
                if not readable:
                    return False
                for s in readable:
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if data:
                        try:
                            peers[s].sendall(data)
                        except OSError:
                            return False
                    else:
                        open_.discard(s)
                        try:
                            peers[s].shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
        return False

    def forward(self, conn: Conn, method: str, target: str, version: str, headers: list[tuple[str, str]],
                body: bytes, has_auth: bool, host: str, port: int, client_close: bool) -> bool:
        url = urlsplit(target)
        path = url.path or "/"
        if url.query:
            path += "?" + url.query
        listed = {t.strip().lower() for t in (header(headers, "connection") or "").split(",")}
        origin = http.client.HTTPConnection(host, port, timeout=IDLE_TIMEOUT)
        try:
            try:
                origin.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
                has_host = False
                for k, v in headers:
                    lk = k.lower()
                    if lk in HOP_BY_HOP or lk in listed or lk == "content-length":
                        continue
                    has_host |= lk == "host"
                    origin.putheader(k, v)
                if not has_host:
                    origin.putheader("Host", url.netloc)
                origin.putheader("Via", f"{version[5:] if version.startswith('HTTP/') else '1.1'} courier-proxy")
                if body or method in ("POST", "PUT", "PATCH"):
                    origin.putheader("Content-Length", str(len(body)))
                origin.putheader("Connection", "close")
                origin.endheaders(body or None)
                resp = origin.getresponse()
            except OSError as e:
                self.log(method, target, has_auth, 502)
                self.reply(502, "Bad Gateway", body=f"cannot reach {url.netloc}: {e}\n".encode(), close=True)
                return False

            self.log(method, target, has_auth, resp.status)
            out = [f"HTTP/1.1 {resp.status} {resp.reason}"]
            resp_listed = {t.strip().lower() for t in (resp.getheader("connection") or "").split(",")}
            length = None
            for k, v in resp.getheaders():
                lk = k.lower()
                if lk in HOP_BY_HOP or lk in resp_listed:
                    continue
                if lk == "content-length":
                    length = v
                out.append(f"{k}: {v}")
            no_body = method == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
            chunked = False
            close = client_close
            if not no_body and length is None:
                if version == "HTTP/1.1":
                    chunked = True
                    out.append("Transfer-Encoding: chunked")
                else:
                    close = True
            out.append("Connection: close" if close else "Connection: keep-alive")
            self.request.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
            if no_body:
                return not close
            sent = 0
            broken = False
            while True:
                try:
                    data = resp.read1(65536)
                except (http.client.IncompleteRead, OSError):
                    broken, data = True, b""
                if not data:
                    break
                sent += len(data)
                if chunked:
                    self.request.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                else:
                    self.request.sendall(data)
            if broken or (length is not None and sent < int(length)):
                # The origin broke off mid-body: close without finishing the framing,
                # so the client sees a short body just as it would from the origin.
                return False
            if chunked:
                self.request.sendall(b"0\r\n\r\n")
            return not close
        finally:
            origin.close()


class ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, port: int, listener: str, request_log: RequestLog, credentials: str | None) -> None:
        self.listener = listener
        self.request_log = request_log
        self.credentials = credentials
        super().__init__((os.environ.get("COURIER_PROXY_HOST", "127.0.0.1"), port), ProxyHandler)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True, help="the open proxy (no authentication)")
    ap.add_argument("--auth-port", type=int, help="the same proxy, requiring Basic proxy authentication")
    ap.add_argument("--user", default="proxyuser")
    ap.add_argument("--password", default="proxypass")
    ap.add_argument("--log", required=True, help="JSON lines, one per request or tunnel")
    args = ap.parse_args()

    request_log = RequestLog(args.log)
    servers = [ProxyServer(args.port, "open", request_log, None)]
    if args.auth_port:
        servers.append(ProxyServer(args.auth_port, "auth", request_log, f"{args.user}:{args.password}"))
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(f"proxy listening on {', '.join(str(s.server_address[1]) for s in servers)}", file=sys.stderr, flush=True)
    try:
        servers[0].serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
