#!/usr/bin/env python3
"""Courier test OAuth2 authorization server + resource gateway (one command).

    python3 Tests/Servers/oauth/server.py --port P --gateway-port G \
        [--token-lifetime SECONDS] [--refresh-lifetime SECONDS] [--verbose]

Both listen on 127.0.0.1 only.  Port 0 picks a free port; the chosen ports
are printed on a ``LISTENING`` line just before ``READY``.

stdout (then nothing else is ever written there):
    LISTENING as=http://127.0.0.1:P gateway=http://127.0.0.1:G
    READY

Exits 0 on SIGTERM/SIGINT, or when stdin reaches EOF if stdin is a pipe or
socket (so a test harness that dies closes the pipe and the server follows).
A stdin that is /dev/null, a file or a terminal is not watched (a background
job would otherwise exit at once or be stopped by SIGTTIN); ``--stdin-eof``
forces either behaviour.  It also exits when its parent process goes away
(``--no-exit-with-parent`` turns that off).  See README.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import stat
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

try:
    from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

    import authserver
    import gateway
except ImportError as e:  # pragma: no cover - environment problem
    print(
        f"courier-oauth: missing dependency ({e}); run: "
        f"python3 -m pip install -r {os.path.join(HERE, 'requirements.txt')}",
        file=sys.stderr,
    )
    sys.exit(3)

HOST = "127.0.0.1"
VERBOSE = False


class QuietHandler(WSGIRequestHandler):
    # idle keep-alive connections are closed after this many seconds
    timeout = 120

    def log_request(self, code="-", size="-"):
        if VERBOSE:
            super().log_request(code, size)

    def log_error(self, format, *args):
        if VERBOSE:
            super().log_error(format, *args)


class Server(ThreadedWSGIServer):
    # a deep accept backlog: 1,000 simultaneous connects must not be dropped
    request_queue_size = 4096

    def handle_error(self, req, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)) and not VERBOSE:
            return
        super().handle_error(req, client_address)


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def port_number(text):
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be 0..65535")
    return value


def raise_fd_limit():
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 16384 if hard == resource.RLIM_INFINITY else min(hard, 16384)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def probe(port: int, path: str, deadline: float) -> None:
    """Wait until a real HTTP request on the port is answered."""
    last = None
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=1.0) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode())
                data = s.recv(64)
                if data.startswith(b"HTTP/1."):
                    return
        except OSError as e:
            last = e
        time.sleep(0.02)
    raise RuntimeError(f"port {port} did not answer: {last}")


def stdin_should_be_watched(mode: str) -> bool:
    if mode == "exit":
        return True
    if mode == "ignore":
        return False
    try:
        st = os.fstat(0)
    except OSError:
        return False
    return stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)


def main(argv=None) -> int:
    global VERBOSE
    p = argparse.ArgumentParser(description="Courier OAuth2 test authorization server + resource gateway")
    p.add_argument("--port", type=port_number, required=True, help="authorization server port (0 = pick)")
    p.add_argument("--gateway-port", type=port_number, required=True, help="resource gateway port (0 = pick)")
    p.add_argument("--token-lifetime", type=positive_int, default=3600, help="access token lifetime, seconds (default 3600)")
    p.add_argument("--refresh-lifetime", type=positive_int, default=None, help="refresh token lifetime, seconds (default: no expiry)")
    p.add_argument("--stdin-eof", choices=["auto", "exit", "ignore"], default="auto", help="exit when stdin hits EOF (auto: only if stdin is a pipe/socket)")
    p.add_argument("--exit-with-parent", action=argparse.BooleanOptionalAction, default=True,
                   help="exit when the parent process goes away (default on; --no-exit-with-parent to daemonize)")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = p.parse_args(argv)
    VERBOSE = args.verbose

    logging.getLogger("werkzeug").setLevel(logging.INFO if VERBOSE else logging.ERROR)
    if VERBOSE:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    raise_fd_limit()

    stop = threading.Event()
    reason = {"why": "?"}

    def request_stop(why):
        reason["why"] = why
        stop.set()

    signal.signal(signal.SIGTERM, lambda *_: request_stop("SIGTERM"))
    signal.signal(signal.SIGINT, lambda *_: request_stop("SIGINT"))
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, lambda *_: request_stop("SIGHUP"))

    # Bind both sockets first (port 0 => learn the real ports), then build apps.
    as_server = Server(HOST, args.port, None, handler=QuietHandler)
    gw_server = Server(HOST, args.gateway_port, None, handler=QuietHandler)
    as_url = f"http://{HOST}:{as_server.port}"
    gw_url = f"http://{HOST}:{gw_server.port}"

    store = authserver.Store(args.token_lifetime, args.refresh_lifetime)
    as_server.app = authserver.create_app(store, issuer=as_url, gateway_url=gw_url)
    gw_server.app = gateway.create_app(as_url=as_url, gateway_url=gw_url)

    threads = [
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1}, name=name, daemon=True)
        for srv, name in ((as_server, "as"), (gw_server, "gateway"))
    ]
    for t in threads:
        t.start()

    deadline = time.monotonic() + 10
    probe(as_server.port, "/healthz", deadline)
    probe(gw_server.port, "/healthz", deadline)

    if stdin_should_be_watched(args.stdin_eof):

        def watch_stdin():
            try:
                while os.read(0, 65536):
                    pass
            except OSError:
                pass
            request_stop("stdin EOF")

        threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()

    if args.exit_with_parent:
        parent = os.getppid()

        def watch_parent():
            while not stop.is_set():
                if os.getppid() != parent:
                    request_stop("parent exited")
                    return
                time.sleep(0.25)

        threading.Thread(target=watch_parent, name="parent-watch", daemon=True).start()

    sys.stdout.write(f"LISTENING as={as_url} gateway={gw_url}\nREADY\n")
    sys.stdout.flush()
    print(
        f"courier-oauth: authorization server {as_url}, gateway {gw_url}, "
        f"token lifetime {args.token_lifetime}s, pid {os.getpid()}",
        file=sys.stderr,
        flush=True,
    )

    while not stop.wait(0.5):
        pass

    print(f"courier-oauth: stopping ({reason['why']})", file=sys.stderr, flush=True)
    closer = threading.Thread(target=lambda: [s.shutdown() for s in (as_server, gw_server)], daemon=True)
    closer.start()
    closer.join(timeout=3)
    for s in (as_server, gw_server):
        try:
            s.server_close()
        except OSError:
            pass
    sys.stderr.flush()
    # daemon worker threads may be blocked on idle keep-alive sockets: leave now
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
