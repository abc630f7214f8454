#!/usr/bin/env python3
"""Supervisor for the real servers Courier's tests run against.

    python3 Tests/Servers/serve.py --ready-file PATH [--only nginx,httpbin,oauth]
                                   [--with postgres] [--keep] [--no-stdin]

Everything listens on 127.0.0.1 only, on free ports picked at start-up.
What it does, in order:

  1. makes a work dir (tempfile), a test PKI with the `openssl` CLI (EC P-256),
     and the test files served under /bytes/;
  2. starts the services in SERVICES (httpbin under gunicorn, nginx with eight
     server blocks, the OAuth2 server if Tests/Servers/oauth/server.py exists,
     the forward proxy Tests/Servers/proxy.py, the fault server Tests/Servers/faults.py,
     the HTTP/2 fault server Tests/Servers/h2faults.py, the conformance server
     Tests/Servers/conformance.py, the server-sent events server Tests/Servers/sse/server.py;
     PostgreSQL only when asked for with --with postgres or --only),
     plus an in-process raw-socket upstream that nginx proxies /truncated,
     /stall and /echo to;
  3. waits until every port accepts connections, then writes PATH atomically
     (JSON, schema in Tests/Servers/README.md);
  4. runs until stdin reaches EOF (the test process died or closed its pipe),
     its parent exits, or SIGTERM/SIGINT/SIGHUP; then stops every child's whole
     process group and session, and whatever else is still below it, and removes
     the work dir (unless --keep).

No orphans: children run in their own sessions with PR_SET_PDEATHSIG=SIGTERM;
this supervisor is a child subreaper, so what a server leaves behind stays below
it; a write to a stdout or stderr whose reader is gone never stops it from
stopping; and a small janitor process (this file with --janitor, in its own
session) kills every child group and session, and every process it saw below
the supervisor, and removes the work dir if this supervisor is killed with SIGKILL.

Use --no-stdin when running it by hand in the background (then only signals stop it).
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import glob
import hashlib
import importlib.util
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
HERE = os.path.dirname(os.path.abspath(__file__))
OAUTH_SERVER = os.path.join(HERE, "oauth", "server.py")
PROXY_SERVER = os.path.join(HERE, "proxy.py")
FAULTS_SERVER = os.path.join(HERE, "faults.py")
H2FAULTS_SERVER = os.path.join(HERE, "h2faults.py")
CONFORMANCE_SERVER = os.path.join(HERE, "conformance.py")
SSE_SERVER = os.path.join(HERE, "sse", "server.py")
PROXY_USER, PROXY_PASSWORD = "proxyuser", "proxypass"
READY_TIMEOUT = float(os.environ.get("COURIER_SERVERS_READY_TIMEOUT", "30"))
SCHEMA_VERSION = 1


def log(msg: str) -> None:
    emit(f"[serve.py {os.getpid()} {time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}] {msg}",
         sys.stderr)


def emit(text: str, stream) -> None:
    """Writes a line, and never raises.

    stdout and stderr may be a pipe the test process reads: once it has exited, every
    write fails (EPIPE). A failed write must not take down the thread that was about to
    stop the servers, so the output goes to /dev/null from then on.
    """
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):
        silence_output()


def silence_output() -> None:
    """Points stdout and stderr at /dev/null (what is still buffered goes there too)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
    except OSError:
        pass


class StartupError(Exception):
    pass


class Shutdown(BaseException):
    """Raised from signal handlers to unwind into cleanup."""


# --------------------------------------------------------------------------- children

_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _child_preexec(parent_pid: int) -> Callable[[], None]:
    """Runs in the forked child before exec: die (SIGTERM) when the supervisor dies."""

    def setup() -> None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent_pid:  # the supervisor died before prctl
            os._exit(1)

    return setup


@dataclass(frozen=True)
class ProcEntry:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int  # start time in clock ticks since boot: tells a reused pid apart
    zombie: bool


def process_table() -> list[ProcEntry]:
    """Every process /proc shows, or [] when it cannot be read."""
    try:
        pids = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    table = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        # utime stime cutime cstime priority nice threads itrealvalue starttime ...;
        # comm may contain spaces and parens.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 20:
            continue
        table.append(ProcEntry(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]),
                               fields[0] == b"Z"))
    return table


def descendants(root: int, table: list[ProcEntry] | None = None) -> list[ProcEntry]:
    """The processes below `root` in the process tree (not `root` itself)."""
    table = process_table() if table is None else table
    children: dict[int, list[ProcEntry]] = {}
    for e in table:
        children.setdefault(e.ppid, []).append(e)
    found: list[ProcEntry] = []
    todo = [root]
    while todo:
        for e in children.get(todo.pop(), []):
            found.append(e)
            todo.append(e.pid)
    return found


def members(ids: list[int], table: list[ProcEntry] | None = None) -> list[ProcEntry]:
    """Live (non-zombie) processes whose process group or session is one of `ids`.

    Each child runs in a session of its own whose id is its pid, so this finds a
    child and everything it started, also what moved to a process group of its own.
    (killpg(pgid, 0) alone also counts zombies, e.g. gunicorn workers orphaned by a
    SIGKILLed master wait for a parent to reap them.)
    """
    wanted = set(ids)
    table = process_table() if table is None else table
    return [e for e in table if not e.zombie and (e.pgid in wanted or e.sid in wanted)]


def group_alive(pgid: int) -> bool:
    """True while the process group or session has a member that is not a zombie."""
    return bool(members([pgid]))


def signal_members(ids: list[int], sig: int | dict[int, int]) -> None:
    """Signals each process group in `ids`, and every process in those groups and sessions."""
    def pick(i: int) -> int:
        return sig.get(i, signal.SIGTERM) if isinstance(sig, dict) else sig
    for pgid in ids:
        try:
            os.killpg(pgid, pick(pgid))
        except (ProcessLookupError, PermissionError):
            pass
    for e in members(ids):
        key = e.sid if e.sid in ids else e.pgid
        try:
            os.kill(e.pid, pick(key))
        except (ProcessLookupError, PermissionError):
            pass


def kill_groups(pgids: list[int], grace: float, reap: Callable[[], None] = lambda: None,
                signals: dict[int, int] | None = None) -> None:
    """Signal each process group and session (SIGTERM unless `signals` says otherwise),
    wait up to `grace` seconds, then SIGKILL what is left.

    `reap` must wait() for our own children: a zombie still counts as a group member.
    """
    signal_members(pgids, signals or {})
    deadline = time.monotonic() + grace
    alive = list(pgids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        reap()
        alive = [g for g in alive if group_alive(g)]
    if alive:
        signal_members(alive, signal.SIGKILL)


def kill_remembered(seen: dict[int, int]) -> None:
    """SIGKILLs each pid in `seen` (pid -> start time) that is still the same process."""
    current = {e.pid: e for e in process_table()}
    for pid, start in seen.items():
        e = current.get(pid)
        if e and e.start == start and not e.zombie:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def janitor_main() -> int:
    """Runs in its own session. Reads commands on stdin; on EOF cleans up what is left.

    Commands: `pgid N` (watch a child group), `release N` (it was reaped),
    `path P` (remove on cleanup), `done` (the supervisor cleaned up itself).

    While it waits it notes every process below the supervisor (pid and start time):
    the supervisor is a child subreaper, so whatever a server starts stays below it even
    when its own parent exits. If the supervisor dies without `done`, the janitor stops
    every child group and session, then SIGKILLs each noted process that is still alive
    (one that left its group and session would otherwise outlive everything).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    supervisor = os.getppid()
    pgids: list[int] = []
    paths: list[str] = []
    seen: dict[int, int] = {}
    done = False
    buffered = b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.5)
        if supervisor != 1:
            for e in descendants(supervisor):
                if e.pid != os.getpid() and not e.zombie:
                    seen.setdefault(e.pid, e.start)
        if not readable:
            continue
        try:
            chunk = os.read(0, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            break
        buffered += chunk
        *lines, buffered = buffered.split(b"\n")
        for line in lines:
            cmd, _, arg = line.decode(errors="replace").strip().partition(" ")
            if cmd == "pgid":
                pgids.append(int(arg))
            elif cmd == "release":
                pgids = [g for g in pgids if g != int(arg)]
            elif cmd == "path":
                paths.append(arg)
            elif cmd == "done":
                done = True
    if done and not pgids:
        return 0
    kill_groups(pgids, grace=2.0)
    kill_remembered(seen)
    for p in paths:
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.exists(p):
            try:
                os.unlink(p)
            except OSError:
                pass
    return 0


# --------------------------------------------------------------------------- PKI

def openssl(*args: str, cwd: str, stdin: bytes | None = None) -> bytes:
    r = subprocess.run(["openssl", *args], cwd=cwd, input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise StartupError(f"openssl {' '.join(args)} failed: {r.stderr.decode(errors='replace')}")
    return r.stdout


EXT_ROOT = """basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
"""
EXT_INTERMEDIATE = """basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""
EXT_SERVER = """basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = {san}
"""
EXT_CLIENT = """basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""
# Minimal `openssl ca` setup, used only for the expired leaf (x509 -req in
# OpenSSL 3.0 cannot set an arbitrary notBefore/notAfter).
CA_CONF = """[ ca ]
default_ca = expired_ca
[ expired_ca ]
database = {dir}/ca-index.txt
new_certs_dir = {dir}
serial = {dir}/ca-serial
default_md = sha256
policy = any_policy
unique_subject = no
copy_extensions = none
[ any_policy ]
commonName = supplied
"""


#: The password of pki/client.p12 (test fixture; the file is made fresh at every start).
CLIENT_P12_PASSWORD = "courier-p12-test"


def make_pki(work: str) -> dict[str, str]:
    d = os.path.join(work, "pki")
    os.makedirs(d)

    def write(name: str, text: str) -> str:
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    ext_root = write("root.ext", EXT_ROOT)
    ext_inter = write("intermediate.ext", EXT_INTERMEDIATE)
    ext_server = write("server.ext", EXT_SERVER.format(san="IP:127.0.0.1, DNS:localhost"))
    ext_other = write("other.ext", EXT_SERVER.format(san="DNS:other.example"))
    ext_client = write("client.ext", EXT_CLIENT)
    def key_and_csr(name: str, cn: str) -> None:
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{name}.key", "-subj", f"/O=Courier Tests/CN={cn}", "-out", f"{name}.csr",
                cwd=d)
        os.chmod(os.path.join(d, f"{name}.key"), 0o600)

    def sign(name: str, cn: str, ext: str, issuer: str | None, serial: int) -> str:
        key_and_csr(name, cn)
        args = ["x509", "-req", "-in", f"{name}.csr", "-out", f"{name}.pem", "-days", "3650",
                "-sha256", "-set_serial", str(1000 + serial), "-extfile", ext]
        if issuer is None:
            args += ["-signkey", f"{name}.key"]
        else:
            args += ["-CA", f"{issuer}.pem", "-CAkey", f"{issuer}.key"]
        openssl(*args, cwd=d)
        return os.path.join(d, f"{name}.pem")

    def expired() -> None:
        # Same chain as the leaf, but valid only 2020-01-01 .. 2021-01-01.
        write("ca.cnf", CA_CONF.format(dir=d))
        write("ca-index.txt", "")
        write("ca-serial", "1F00\n")
        key_and_csr("expired", "127.0.0.1")
        openssl("ca", "-batch", "-notext", "-config", "ca.cnf", "-cert", "intermediate.pem",
                "-keyfile", "intermediate.key", "-in", "expired.csr", "-out", "expired.pem",
                "-startdate", "20200101000000Z", "-enddate", "20210101000000Z",
                "-extfile", ext_server, cwd=d)

    # Three levels; the certificates within a level are made in parallel.
    levels: list[list[Callable[[], object]]] = [
        [  # roots: the trusted one, an independent "attacker" root, the client CA
            lambda: sign("root", "Courier Test Root CA", ext_root, None, 1),
            lambda: sign("attacker-root", "Courier Attacker Root CA", ext_root, None, 2),
            lambda: sign("client-ca", "Courier Test Client CA", ext_root, None, 3),
        ],
        [
            lambda: sign("intermediate", "Courier Test Intermediate CA", ext_inter, "root", 4),
            # A leaf that is perfect for 127.0.0.1 except that it chains to the attacker root.
            lambda: sign("attacker-leaf", "127.0.0.1", ext_server, "attacker-root", 5),
            lambda: sign("client", "courier-test-client", ext_client, "client-ca", 6),
            lambda: sign("untrusted-client", "courier-untrusted-client", ext_client, "attacker-root", 7),
        ],
        [
            lambda: sign("leaf", "127.0.0.1", ext_server, "intermediate", 8),
            lambda: sign("wronghost", "other.example", ext_other, "intermediate", 9),
            expired,
        ],
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for level in levels:
            for fut in [pool.submit(fn) for fn in level]:
                fut.result()

    def cat(out: str, *names: str) -> str:
        path = os.path.join(d, out)
        with open(path, "w") as f:
            for n in names:
                with open(os.path.join(d, n)) as src:
                    f.write(src.read())
        return path

    cat("leaf-chain.pem", "leaf.pem", "intermediate.pem")
    cat("wronghost-chain.pem", "wronghost.pem", "intermediate.pem")
    cat("expired-chain.pem", "expired.pem", "intermediate.pem")
    cat("client-chain.pem", "client.pem")
    cat("ca-bundle.pem", "root.pem")
    # The client identity again as one password-protected PKCS#12 file (a test-only password).
    openssl("pkcs12", "-export", "-in", "client.pem", "-inkey", "client.key", "-name", "courier-test-client",
            "-passout", f"pass:{CLIENT_P12_PASSWORD}", "-out", "client.p12", cwd=d)
    os.chmod(os.path.join(d, "client.p12"), 0o600)

    p = lambda name: os.path.join(d, name)  # noqa: E731
    return {
        "dir": d,
        "ca_bundle": p("ca-bundle.pem"),
        "root_ca": p("root.pem"),
        "root_ca_key": p("root.key"),
        "intermediate_ca": p("intermediate.pem"),
        "intermediate_ca_key": p("intermediate.key"),
        "leaf_cert": p("leaf.pem"),
        "leaf_key": p("leaf.key"),
        "leaf_chain": p("leaf-chain.pem"),
        "attacker_ca": p("attacker-root.pem"),
        "attacker_cert": p("attacker-leaf.pem"),
        "attacker_key": p("attacker-leaf.key"),
        "expired_cert": p("expired.pem"),
        "expired_key": p("expired.key"),
        "expired_chain": p("expired-chain.pem"),
        "wronghost_cert": p("wronghost.pem"),
        "wronghost_key": p("wronghost.key"),
        "wronghost_chain": p("wronghost-chain.pem"),
        "client_ca": p("client-ca.pem"),
        "client_cert": p("client.pem"),
        "client_key": p("client.key"),
        "untrusted_client_cert": p("untrusted-client.pem"),
        "untrusted_client_key": p("untrusted-client.key"),
        "client_p12": p("client.p12"),
        "client_p12_password": CLIENT_P12_PASSWORD,
    }


def spki_pins(pki: dict[str, str]) -> dict[str, str]:
    """base64(SHA-256(SubjectPublicKeyInfo DER)), the form curl takes after `sha256//`."""
    import base64
    out = {}
    for name, keyfile in (("leaf", "leaf_key"), ("intermediate", "intermediate_ca_key"),
                          ("root", "root_ca_key"), ("attacker_leaf", "attacker_key"),
                          ("wronghost", "wronghost_key"), ("expired", "expired_key")):
        der = openssl("pkey", "-in", pki[keyfile], "-pubout", "-outform", "DER", cwd=pki["dir"])
        out[name] = base64.b64encode(hashlib.sha256(der).digest()).decode()
    return out


# --------------------------------------------------------------------------- files

def make_files(work: str) -> dict[str, dict]:
    """Deterministic contents (seeded), so hashes are the same on every run."""
    d = os.path.join(work, "files")
    os.makedirs(d)
    rng = random.Random(0x436F7572)  # "Cour"
    block = rng.randbytes(1 << 20)
    files: dict[str, dict] = {}

    def add(name: str, data_blocks, size: int, url: str) -> None:
        path = os.path.join(d, name)
        h = hashlib.sha256()
        with open(path, "wb") as f:
            for chunk in data_blocks:
                f.write(chunk)
                h.update(chunk)
        assert os.path.getsize(path) == size
        files[name] = {"path": path, "size": size, "sha256": h.hexdigest(), "url_path": url}

    add("0", [], 0, "/bytes/0")
    add("1k", [block[:1024]], 1024, "/bytes/1k")
    add("1m", [block], 1 << 20, "/bytes/1m")

    def big():
        # Each 1 MiB block is stamped with its index so reordered chunks change the hash.
        for i in range(64):
            b = bytearray(block)
            b[0:8] = i.to_bytes(8, "big")
            yield bytes(b)

    add("64m", big(), 64 << 20, "/bytes/64m")
    add("slow", [block[:256 * 1024]], 256 * 1024, "/slow")
    files.update(make_encoded_files(work, d))
    return files


def compressible_payload() -> bytes:
    """~300 KiB of seeded JSON lines: compresses well, the same on every run."""
    rng = random.Random(0x7A737464)  # "zstd"
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    lines = []
    for i in range(3000):
        tags = ",".join(f'"{rng.choice(words)}"' for _ in range(rng.randint(1, 4)))
        lines.append(f'{{"id":{i},"name":"item-{i:05d}","price":{rng.randint(1, 99999) / 100:.2f},'
                     f'"tags":[{tags}],"note":"{rng.choice(words)} {rng.choice(words)} {rng.choice(words)}"}}\n')
    return "".join(lines).encode()


def zstd_raw_frame(data: bytes) -> bytes:
    """A valid zstd frame made of raw (stored) blocks, for machines without the zstd CLI.

    RFC 8878: magic, Frame_Header_Descriptor 0xA0 (single segment, 4-byte content
    size, no checksum, no dictionary), then blocks of at most 128 KiB, each with a
    3-byte little-endian header (Last_Block bit, Block_Type 0 = Raw, Block_Size).
    """
    assert len(data) < 1 << 32
    out = bytearray(b"\x28\xb5\x2f\xfd")
    out.append(0xA0)
    out += len(data).to_bytes(4, "little")
    blocks = [data[i:i + (128 << 10)] for i in range(0, len(data), 128 << 10)] or [b""]
    for n, block in enumerate(blocks):
        last = 1 if n == len(blocks) - 1 else 0
        out += (last | (0 << 1) | (len(block) << 3)).to_bytes(3, "little")
        out += block
    return bytes(out)


def make_encoded_files(work: str, files_dir: str) -> dict[str, dict]:
    """The payload served content-encoded under /encoded/ (see nginx_conf).

    /encoded/zstd  the payload pre-compressed (zstd CLI if installed, else a raw-block
                   frame built here), served as-is with `Content-Encoding: zstd`
    /encoded/gzip  the payload, gzipped on the fly by nginx (`gzip on`) when the
                   client sends `Accept-Encoding: gzip`
    The payload itself is also at /bytes/payload.json (identity).
    """
    payload = compressible_payload()
    plain = os.path.join(files_dir, "payload.json")
    with open(plain, "wb") as f:
        f.write(payload)
    enc_dir = os.path.join(work, "encoded")
    os.makedirs(enc_dir, exist_ok=True)
    zst = os.path.join(enc_dir, "payload.json.zst")
    encoder = "python raw blocks"
    if shutil.which("zstd"):
        r = subprocess.run(["zstd", "-q", "-9", "-f", "--no-progress", "-o", zst, plain],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode == 0 and os.path.exists(zst):
            ver = subprocess.run(["zstd", "-V"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
            m = re.search(r"v(\d+(?:\.\d+)+)", ver)
            encoder = f"zstd CLI {m.group(1)}" if m else "zstd CLI"
        else:
            log(f"zstd CLI failed ({r.stderr.decode(errors='replace').strip()}); using raw blocks")
    if encoder == "python raw blocks":
        with open(zst, "wb") as f:
            f.write(zstd_raw_frame(payload))
    with open(zst, "rb") as f:
        encoded = f.read()
    base = {"path": plain, "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    return {
        "payload": {**base, "url_path": "/bytes/payload.json"},
        "zstd": {**base, "url_path": "/encoded/zstd", "content_encoding": "zstd",
                 "encoded_path": zst, "encoded_size": len(encoded),
                 "encoded_sha256": hashlib.sha256(encoded).hexdigest(), "encoder": encoder},
        "gzip": {**base, "url_path": "/encoded/gzip", "content_encoding": "gzip", "encoder": "nginx gzip"},
    }


# --------------------------------------------------------------------------- raw upstream

class RawUpstream:
    """Plain-socket HTTP/1.x upstream that nginx proxies to.

    /truncated[?size=N&send=M]  Content-Length N (1 MiB), sends M (64 KiB) bytes, closes.
    /stall[?seconds=S]          headers (Content-Length 1024), then nothing for S (30) s.
    /stall-headers[?seconds=S]  reads the request, sends nothing for S (30) s.
    /late[?seconds=S]           reads the request, answers after S (2) s: a slow backend.
    /echo                       JSON: method, uri, headers, length, sha256 of the body.
    /echo/raw                   the request body back, same Content-Type.
    """

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((HOST, 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.block = random.Random(7).randbytes(64 * 1024)

    def start(self) -> None:
        threading.Thread(target=self._accept_loop, name="raw-upstream", daemon=True).start()

    def stop(self) -> None:
        self.stopping.set()
        try:
            self.sock.close()
        except OSError:
            pass

    def _accept_loop(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle_safely, args=(conn,), daemon=True).start()

    def _handle_safely(self, conn: socket.socket) -> None:
        try:
            with conn:
                self._handle(conn)
        except OSError:
            pass
        except Exception as e:  # keep serving; a test will see the failed request
            log(f"raw upstream error: {e!r}")

    def _wait(self, conn: socket.socket, seconds: float) -> None:
        """Sleep up to `seconds`, returning early if the peer closes or we stop."""
        deadline = time.monotonic() + seconds
        while not self.stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([conn], [], [], min(left, 0.5))
            if r:
                try:
                    if not conn.recv(65536):
                        return
                except OSError:
                    return

    def _handle(self, conn: socket.socket) -> None:
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
            if len(buf) > 1 << 20:
                return
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, uri, _version = (lines[0].split(" ") + ["", "", ""])[:3]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        url = urlsplit(uri)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        path = url.path

        def num(name: str, default: float) -> float:
            try:
                return float(query.get(name, default))
            except ValueError:
                return default

        # Read the body (nginx buffers request bodies and always sends Content-Length).
        length = int(headers.get("content-length", "0") or "0")
        h = hashlib.sha256()
        body_parts: list[bytes] = []
        keep_body = path == "/echo/raw"
        got = 0
        pending = rest
        while True:
            if pending:
                piece = pending[: length - got]
                got += len(piece)
                h.update(piece)
                if keep_body:
                    body_parts.append(piece)
            if got >= length:
                break
            pending = conn.recv(min(1 << 20, length - got))
            if not pending:
                break

        if path == "/truncated":
            size, send = int(num("size", 1 << 20)), int(num("send", 64 * 1024))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         + f"Content-Length: {size}\r\nConnection: close\r\n\r\n".encode())
            sent = 0
            while sent < send:
                n = min(len(self.block), send - sent)
                conn.sendall(self.block[:n])
                sent += n
            time.sleep(0.05)  # let nginx forward the bytes before it sees the close
            conn.shutdown(socket.SHUT_RDWR)
        elif path == "/stall":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"Content-Length: 1024\r\nConnection: close\r\n\r\n")
            self._wait(conn, num("seconds", 30))
        elif path == "/stall-headers":
            self._wait(conn, num("seconds", 30))
        elif path == "/late":
            self._wait(conn, num("seconds", 2))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                         b"Connection: close\r\n\r\nlate\n")
        elif path == "/echo/raw":
            body = b"".join(body_parts)
            ctype = headers.get("content-type", "application/octet-stream")
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                         "Connection: close\r\n\r\n".encode("latin-1") + body)
        elif path.startswith("/echo"):
            payload = json.dumps({
                "method": method, "uri": uri, "headers": headers,
                "length": got, "sha256": h.hexdigest(),
            }).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         + f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                         + payload)
        else:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


# --------------------------------------------------------------------------- nginx

NGINX_SERVERS = ["http", "https", "mtls", "attacker", "expired", "wronghost", "tls12", "goaway"]


def find_nginx() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"):
        if os.access(p, os.X_OK):
            return p
    return None


def nginx_version(binary: str) -> tuple[int, ...]:
    out = subprocess.run([binary, "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
    try:
        return tuple(int(x) for x in out.split("/")[1].split()[0].split("."))
    except (IndexError, ValueError):
        return (1, 22, 0)


def nginx_conf(ctx: "Context", ports: dict[str, int], version: tuple[int, ...]) -> str:
    w = ctx.work
    pki = ctx.pki
    files_dir = os.path.join(w, "files")
    raw = ctx.upstream.port
    httpbin = ctx.ports.get("httpbin", {}).get("http")
    # `listen ... http2` is deprecated from 1.25.1 in favour of `http2 on;`.
    new_h2 = version >= (1, 25, 1)

    def locations(https_port: int | None) -> str:
        loc = f"""
        location = / {{ default_type text/plain; return 200 "courier test server\\n"; }}
        location /bytes/ {{
            alias {files_dir}/;
            types {{ }}
            default_type application/octet-stream;
        }}
        location = /slow {{
            alias {files_dir}/slow;
            types {{ }}
            default_type application/octet-stream;
            limit_rate 64k;
        }}
        location = /truncated {{
            proxy_pass http://courier_raw;
            proxy_buffering off;
        }}
        location ~ ^/(stall|stall-headers|late)$ {{
            proxy_pass http://courier_raw;
            proxy_buffering off;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
        }}
        location /echo {{
            proxy_pass http://courier_raw;
            proxy_set_header Host $http_host;
            proxy_set_header X-Courier-Protocol $server_protocol;
            proxy_request_buffering on;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
        location = /redirect/same-origin {{ return 302 /httpbin/headers; }}
        location = /redirect/to-http {{ return 302 http://{HOST}:{ports['http']}/httpbin/headers; }}
        location = /redirect/to-https {{ return 302 https://{HOST}:{ports['https']}/httpbin/headers; }}
        location = /redirect/cross-origin {{ return 302 https://localhost:{ports['https']}/httpbin/headers; }}
        location = /redirect/to-attacker {{ return 302 https://{HOST}:{ports['attacker']}/httpbin/headers; }}
        location = /redirect/same-origin-301 {{ return 301 /echo; }}
        location = /redirect/same-origin-302 {{ return 302 /echo; }}
        location = /redirect/same-origin-303 {{ return 303 /echo; }}
        location = /redirect/same-origin-307 {{ return 307 /echo; }}
        location = /redirect/same-origin-308 {{ return 308 /echo; }}
        location = /redirect/cross-origin-307 {{ return 307 https://localhost:{ports['https']}/echo; }}
        location = /redirect/cross-origin-401 {{ return 302 https://localhost:{ports['https']}/unauthorized; }}
        location = /redirect/via-other-origin-401 {{ return 302 https://localhost:{ports['https']}/redirect/back-401; }}
        location = /redirect/back-401 {{ return 302 https://{HOST}:{ports['https']}/unauthorized; }}
        location = /unauthorized {{
            add_header WWW-Authenticate 'Bearer error="invalid_token"' always;
            return 401;
        }}
        location = /encoded/zstd {{
            alias {w}/encoded/payload.json.zst;
            types {{ }}
            default_type application/json;
            gzip off;
            add_header Content-Encoding zstd always;
            add_header Vary Accept-Encoding always;
        }}
        location = /encoded/gzip {{
            alias {files_dir}/payload.json;
            types {{ }}
            default_type application/json;
            gzip on;
            gzip_types application/json;
            gzip_min_length 0;
            gzip_comp_level 6;
            gzip_vary on;
        }}
"""
        if httpbin:
            loc += f"""
        location /httpbin/ {{
            proxy_pass http://courier_httpbin/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_read_timeout 1h;
        }}
"""
        return loc

    def server(name: str, tls: dict | None) -> str:
        port = ports[name]
        if tls is None:
            listen = f"listen {HOST}:{port};"
            ssl = ""
        else:
            listen = f"listen {HOST}:{port} ssl http2;" if not new_h2 else f"listen {HOST}:{port} ssl;\n        http2 on;"
            ssl = f"""
        ssl_certificate {tls['cert']};
        ssl_certificate_key {tls['key']};
        ssl_protocols {tls.get('protocols', 'TLSv1.2 TLSv1.3')};
"""
            if tls.get("keepalive_requests"):
                # nginx >= 1.19.7: also caps the requests (streams) of an HTTP/2
                # connection; the last one is followed by GOAWAY.
                ssl += f"""        keepalive_requests {tls['keepalive_requests']};
"""
            if tls.get("client_ca"):
                ssl += f"""        ssl_client_certificate {tls['client_ca']};
        ssl_verify_client on;
        ssl_verify_depth 2;
"""
        return f"""
    server {{
        {listen}
        server_name _;
        access_log {ctx.access_logs[name]} courier;
{ssl}{locations(port)}
    }}
"""

    servers = [
        server("http", None),
        server("https", {"cert": pki["leaf_chain"], "key": pki["leaf_key"]}),
        server("mtls", {"cert": pki["leaf_chain"], "key": pki["leaf_key"], "client_ca": pki["client_ca"]}),
        server("attacker", {"cert": pki["attacker_cert"], "key": pki["attacker_key"]}),
        server("expired", {"cert": pki["expired_chain"], "key": pki["expired_key"]}),
        server("wronghost", {"cert": pki["wronghost_chain"], "key": pki["wronghost_key"]}),
        server("tls12", {"cert": pki["leaf_chain"], "key": pki["leaf_key"], "protocols": "TLSv1.2"}),
        server("goaway", {"cert": pki["leaf_chain"], "key": pki["leaf_key"], "keepalive_requests": 5}),
    ]
    tmp = os.path.join(w, "nginx-tmp")
    user = "user root root;\n" if os.geteuid() == 0 else ""
    httpbin_upstream = (f"    upstream courier_httpbin {{ server {HOST}:{httpbin}; keepalive 16; }}\n"
                        if httpbin else "")
    return f"""# generated by Tests/Servers/serve.py
{user}worker_processes 1;
master_process on;
daemon off;
pid {w}/nginx.pid;
error_log {w}/logs/nginx-error.log info;

events {{
    worker_connections 4096;
}}

http {{
    default_type application/octet-stream;
    types {{
        text/plain txt;
        application/json json;
    }}
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 75s;
    keepalive_requests 100000;
    client_max_body_size 0;
    absolute_redirect off;
    server_tokens off;

    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;

    map $http_authorization $courier_authorization {{ "" "no"; default "yes"; }}
    log_format courier escape=json '{{"time":"$time_iso8601","remote_port":"$remote_port",'
        '"method":"$request_method","uri":"$request_uri","protocol":"$server_protocol",'
        '"status":$status,"bytes_sent":$bytes_sent,"body_bytes_sent":$body_bytes_sent,'
        '"request_length":$request_length,"request_time":$request_time,'
        '"connection":$connection,"connection_requests":$connection_requests,'
        '"completion":"$request_completion","ssl_protocol":"$ssl_protocol",'
        '"ssl_client_verify":"$ssl_client_verify","ssl_client_subject":"$ssl_client_s_dn",'
        '"authorization":"$courier_authorization","user_agent":"$http_user_agent"}}';

    ssl_session_cache shared:courier_ssl:1m;

    upstream courier_raw {{ server {HOST}:{raw}; }}
{httpbin_upstream}{''.join(servers)}}}
"""


# --------------------------------------------------------------------------- services

@dataclass
class Context:
    """What a launcher can use. Ports of every service are picked before any starts."""
    work: str
    ports: dict[str, dict[str, int]]
    pki: dict[str, str] = field(default_factory=dict)
    access_logs: dict[str, str] = field(default_factory=dict)
    upstream: RawUpstream | None = None
    args: argparse.Namespace | None = None

    def log_file(self, name: str) -> str:
        return os.path.join(self.work, "logs", f"{name}.log")


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str] | None = None
    cwd: str | None = None


@dataclass
class ServiceSpec:
    """One supervised service.

    name:      key in the ready file's "services"
    ports:     names of the ports to allocate (each gets a free 127.0.0.1 port)
    launch:    builds the command line from the Context (ctx.ports[name][port])
    required:  if False, a failure to start is reported in the ready file's
               "errors" instead of failing the whole start-up
    available: returns None if the service can run here, else why not (skipped
               silently when optional, an error when required)
    stop_signal: sent to the process group to stop it (SIGKILL follows after 3 s)
    probe:     port name -> HTTP path; that port counts as ready only once a GET of
               the path answers with a status < 500 (else: once it accepts a connection)
    info:      extra keys for this service's entry in the ready file
    ready:     port name -> check; that port counts as ready only once the check
               returns True (for services that do not speak HTTP)
    default:   started without --only; False: only when named in --only or --with
    urls:      entries for the ready file's "urls" (TestServers.swift reads
               nginx_*, httpbin, oauth, gateway from there)
    """
    name: str
    ports: list[str]
    launch: Callable[[Context], Launch]
    required: bool = True
    available: Callable[[], str | None] = lambda: None
    probe: dict[str, str] = field(default_factory=dict)
    stop_signal: int = signal.SIGTERM
    info: Callable[[Context], dict] = lambda ctx: {}
    urls: Callable[[Context], dict[str, str]] = lambda ctx: {}
    ready: dict[str, Callable[[Context], bool]] = field(default_factory=dict)
    default: bool = True


def _need_module(*mods: str) -> Callable[[], str | None]:
    def check() -> str | None:
        missing = [m for m in mods if importlib.util.find_spec(m) is None]
        if missing:
            return (f"python module(s) {', '.join(missing)} not installed for {sys.executable}: "
                    "run scripts/bootstrap.sh")
        return None
    return check


def _gunicorn_extra_args() -> list[str]:
    # Newer gunicorn opens a control socket at ~/.gunicorn/gunicorn.ctl by
    # default; two test processes would fight over it.
    spec = importlib.util.find_spec("gunicorn")
    try:
        cfg = os.path.join(os.path.dirname(spec.origin), "config.py")  # type: ignore[union-attr]
        with open(cfg) as f:
            if "no-control-socket" in f.read():
                return ["--no-control-socket"]
    except (OSError, AttributeError, TypeError):
        pass
    return []


def launch_httpbin(ctx: Context) -> Launch:
    port = ctx.ports["httpbin"]["http"]
    return Launch(
        argv=[sys.executable, "-m", "gunicorn", "-b", f"{HOST}:{port}",
              "-w", "2", "-k", "gthread", "--threads", "16",
              "--timeout", "120", "--graceful-timeout", "1", "--keep-alive", "75",
              "--log-level", "warning", *_gunicorn_extra_args(), "httpbin:app"],
        cwd=ctx.work,
    )


def launch_nginx(ctx: Context) -> Launch:
    binary = find_nginx()
    assert binary
    ports = ctx.ports["nginx"]
    for name in NGINX_SERVERS:
        ctx.access_logs[name] = os.path.join(ctx.work, "logs", f"access-{name}.log")
        open(ctx.access_logs[name], "a").close()
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(ctx.work, "nginx-tmp", sub), exist_ok=True)
    conf = os.path.join(ctx.work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(nginx_conf(ctx, ports, nginx_version(binary)))
    return Launch(argv=[binary, "-p", ctx.work, "-c", conf, "-e", os.path.join(ctx.work, "logs", "nginx-error.log")],
                  cwd=ctx.work)


def nginx_info(ctx: Context) -> dict:
    return {
        "access_logs": dict(ctx.access_logs),
        "error_log": os.path.join(ctx.work, "logs", "nginx-error.log"),
        "config": os.path.join(ctx.work, "nginx.conf"),
    }


def launch_oauth(ctx: Context) -> Launch:
    p = ctx.ports["oauth"]
    lifetime = os.environ.get("COURIER_OAUTH_TOKEN_LIFETIME", "3600")
    env = dict(os.environ)
    # Everything else it may want (TLS material, a scratch dir) without new flags.
    env.update({
        "COURIER_SERVERS_WORK_DIR": ctx.work,
        "COURIER_TLS_CERT_CHAIN": ctx.pki.get("leaf_chain", ""),
        "COURIER_TLS_KEY": ctx.pki.get("leaf_key", ""),
        "COURIER_TLS_CA_BUNDLE": ctx.pki.get("ca_bundle", ""),
    })
    return Launch(
        argv=[sys.executable, OAUTH_SERVER, "--port", str(p["oauth"]),
              "--gateway-port", str(p["gateway"]), "--token-lifetime", lifetime],
        env=env, cwd=os.path.dirname(OAUTH_SERVER),
    )


def proxy_request_log(ctx: Context) -> str:
    return os.path.join(ctx.work, "logs", "proxy-requests.jsonl")


def launch_proxy(ctx: Context) -> Launch:
    p = ctx.ports["proxy"]
    return Launch(
        argv=[sys.executable, PROXY_SERVER, "--port", str(p["open"]), "--auth-port", str(p["auth"]),
              "--user", PROXY_USER, "--password", PROXY_PASSWORD, "--log", proxy_request_log(ctx)],
        cwd=ctx.work,
    )


def launch_faults(ctx: Context) -> Launch:
    return Launch(argv=[sys.executable, FAULTS_SERVER, "--port", str(ctx.ports["faults"]["http"]),
                        "--tls-port", str(ctx.ports["faults"]["https"]),
                        "--cert", ctx.pki["leaf_chain"], "--key", ctx.pki["leaf_key"]], cwd=ctx.work)


def launch_h2faults(ctx: Context) -> Launch:
    return Launch(argv=[sys.executable, H2FAULTS_SERVER, "--port", str(ctx.ports["h2faults"]["https"]),
                        "--cert", ctx.pki["leaf_chain"], "--key", ctx.pki["leaf_key"]], cwd=ctx.work)


def launch_conformance(ctx: Context) -> Launch:
    p = ctx.ports["conformance"]
    return Launch(argv=[sys.executable, CONFORMANCE_SERVER, "--http-port", str(p["http"]), "--raw-port", str(p["raw"]),
                        "--tls-port", str(p["tls"]), "--cert", ctx.pki["leaf_chain"], "--key", ctx.pki["leaf_key"]],
                  cwd=ctx.work)


def launch_sse(ctx: Context) -> Launch:
    return Launch(argv=[sys.executable, SSE_SERVER, "--port", str(ctx.ports["sse"]["http"])], cwd=ctx.work)


def launch_oauth_tls(ctx: Context) -> Launch:
    """A TLS front (nginx, the suite's leaf certificate) for the OAuth2 servers: a secured
    Courier client sends credentials over TLS only. One server block per upstream."""
    binary = find_nginx()
    assert binary
    if "oauth" not in ctx.ports:
        raise StartupError("oauth_tls needs the oauth service (--only ...,oauth,oauth_tls)")
    d = os.path.join(ctx.work, "oauth-tls")
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(d, "tmp", sub), exist_ok=True)
    new_h2 = nginx_version(binary) >= (1, 25, 1)

    def server(port: int, upstream: int) -> str:
        listen = f"listen {HOST}:{port} ssl;\n        http2 on;" if new_h2 else f"listen {HOST}:{port} ssl http2;"
        return f"""
    server {{
        {listen}
        ssl_certificate {ctx.pki['leaf_chain']};
        ssl_certificate_key {ctx.pki['leaf_key']};
        ssl_protocols TLSv1.2 TLSv1.3;
        location / {{
            proxy_pass http://{HOST}:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_read_timeout 1h;
        }}
    }}
"""

    user = "user root root;\n" if os.geteuid() == 0 else ""
    upstream = ctx.ports["oauth"]
    front = ctx.ports["oauth_tls"]
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""# generated by Tests/Servers/serve.py
{user}worker_processes 1;
master_process on;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 8192; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    http2_max_concurrent_streams 256;
    keepalive_requests 100000;
{server(front["oauth"], upstream["oauth"])}{server(front["gateway"], upstream["gateway"])}}}
""")
    return Launch(argv=[binary, "-p", d, "-c", conf, "-e", os.path.join(d, "error.log")], cwd=d)


# PostgreSQL: a throw-away cluster (initdb) in the work dir, trust authentication on
# 127.0.0.1 for the role `courier`, no TLS, durability off (fsync, synchronous_commit).
# PostgreSQL refuses to run as root: as root, initdb, postgres and pg_ctl run as the
# `postgres` system user (Debian's postgresql package creates it) through runuser.
POSTGRES_USER = "courier"
POSTGRES_DATABASE = "postgres"


def find_postgres_bin() -> str | None:
    """The directory with initdb, postgres and pg_ctl: $COURIER_POSTGRES_BIN, else the newest
    /usr/lib/postgresql/*/bin, else PATH."""
    candidates = [os.environ.get("COURIER_POSTGRES_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda d: [int(x) for x in re.findall(r"\d+", d)], reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(os.path.dirname(initdb))
    for d in candidates:
        if d and all(os.access(os.path.join(d, b), os.X_OK) for b in ("initdb", "postgres", "pg_ctl")):
            return d
    return None


def postgres_run_as() -> list[str]:
    """The prefix that runs a PostgreSQL program: nothing, or runuser to `postgres` as root."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def postgres_available() -> str | None:
    if find_postgres_bin() is None:
        return "PostgreSQL (initdb, postgres, pg_ctl) not found: run scripts/bootstrap.sh"
    if os.geteuid() == 0:
        import pwd
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, but there is no `postgres` user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root, but runuser is missing"
    return None


def postgres_dirs(ctx: Context) -> dict[str, str]:
    base = os.path.join(ctx.work, "postgres")
    return {"base": base, "data": os.path.join(base, "data"), "socket": os.path.join(base, "socket")}


def launch_postgres(ctx: Context) -> Launch:
    bindir = find_postgres_bin()
    assert bindir
    dirs = postgres_dirs(ctx)
    shutil.rmtree(dirs["base"], ignore_errors=True)  # a retry after a port race starts over
    os.makedirs(dirs["socket"])
    run_as = postgres_run_as()
    if run_as:
        import pwd
        pw = pwd.getpwnam("postgres")
        os.chmod(ctx.work, 0o711)  # mkdtemp's 0700 would keep the postgres user out
        for d in (dirs["base"], dirs["socket"]):
            os.chown(d, pw.pw_uid, pw.pw_gid)
    r = subprocess.run([*run_as, os.path.join(bindir, "initdb"), "-D", dirs["data"], "-U", POSTGRES_USER,
                        "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=dirs["base"])
    if r.returncode != 0:
        raise StartupError(f"initdb failed: {r.stdout.decode(errors='replace')[-2000:]}")
    port = ctx.ports["postgres"]["postgres"]
    settings = {
        "listen_addresses": HOST, "port": str(port), "unix_socket_directories": dirs["socket"],
        "max_connections": "200", "shared_buffers": "32MB", "fsync": "off",
        "synchronous_commit": "off", "full_page_writes": "off", "log_min_messages": "warning",
    }
    argv = [*run_as, os.path.join(bindir, "postgres"), "-D", dirs["data"]]
    for name, value in settings.items():
        argv += ["-c", f"{name}={value}"]
    return Launch(argv=argv, cwd=dirs["base"])


def postgres_ready(ctx: Context) -> bool:
    """True once the server accepts sessions (it listens a moment before it does)."""
    bindir = find_postgres_bin()
    assert bindir
    r = subprocess.run([os.path.join(bindir, "pg_isready"), "-q", "-h", HOST,
                        "-p", str(ctx.ports["postgres"]["postgres"]), "-U", POSTGRES_USER, "-d", POSTGRES_DATABASE],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode == 0


def postgres_info(ctx: Context) -> dict:
    dirs = postgres_dirs(ctx)
    bindir = find_postgres_bin()
    run_as = postgres_run_as()
    return {
        "username": POSTGRES_USER, "database": POSTGRES_DATABASE,
        "data_dir": dirs["data"], "socket_dir": dirs["socket"], "bin_dir": bindir,
        # The command that stops the server (PostgreSQL's "fast" shutdown), for tests of an
        # outage: argv, run as is.
        "stop_command": [*run_as, os.path.join(bindir or "", "pg_ctl"), "stop", "-D", dirs["data"],
                         "-m", "fast", "-w", "-t", "10"],
    }


def _url(scheme: str, port: int) -> str:
    return f"{scheme}://{HOST}:{port}"


# The hook for more services: add a ServiceSpec here. Launch order = list order.
SERVICES: list[ServiceSpec] = [
    ServiceSpec("httpbin", ["http"], launch_httpbin,
                available=_need_module("httpbin", "gunicorn", "flask"),
                probe={"http": "/status/204"},
                stop_signal=signal.SIGKILL,  # gunicorn takes ~0.5 s on any other signal; no state to save
                urls=lambda ctx: {"httpbin": _url("http", ctx.ports["httpbin"]["http"])}),
    ServiceSpec("nginx", NGINX_SERVERS, launch_nginx,
                available=lambda: None if find_nginx() else "nginx not found: run scripts/bootstrap.sh",
                info=nginx_info,
                urls=lambda ctx: {f"nginx_{name}": _url("http" if name == "http" else "https", port)
                                  for name, port in ctx.ports["nginx"].items()}),
    ServiceSpec("oauth", ["oauth", "gateway"], launch_oauth, required=False,
                available=lambda: None if os.path.exists(OAUTH_SERVER) else f"{OAUTH_SERVER} does not exist",
                urls=lambda ctx: {"oauth": _url("http", ctx.ports["oauth"]["oauth"]),
                                  "gateway": _url("http", ctx.ports["oauth"]["gateway"])}),
    # Forward proxy (stdlib only): `open` needs no credentials, `auth` needs Basic
    # proxyuser:proxypass. Only 127.0.0.1/localhost targets; one JSON line per
    # request/tunnel in request_log.
    ServiceSpec("proxy", ["open", "auth"], launch_proxy,
                available=lambda: None if os.path.exists(PROXY_SERVER) else f"{PROXY_SERVER} does not exist",
                info=lambda ctx: {"request_log": proxy_request_log(ctx),
                                  "username": PROXY_USER, "password": PROXY_PASSWORD},
                urls=lambda ctx: {"proxy": _url("http", ctx.ports["proxy"]["open"]),
                                  "proxy_auth": _url("http", ctx.ports["proxy"]["auth"])}),
    # Fault server (stdlib only): connections that die when reused, statuses with
    # Retry-After, resets, and per-key counters at /admin/stats.
    ServiceSpec("faults", ["http", "https"], launch_faults,
                available=lambda: None if os.path.exists(FAULTS_SERVER) else f"{FAULTS_SERVER} does not exist",
                probe={"http": "/admin/stats"},
                urls=lambda ctx: {"faults": _url("http", ctx.ports["faults"]["http"]),
                                  "faults_tls": _url("https", ctx.ports["faults"]["https"])}),
    # HTTP/2 over TLS (the `h2` package, the suite's leaf certificate): streams refused with
    # RST_STREAM(REFUSED_STREAM) on demand, per-key counters at /stats.
    ServiceSpec("h2faults", ["https"], launch_h2faults,
                available=lambda: (f"{H2FAULTS_SERVER} does not exist" if not os.path.exists(H2FAULTS_SERVER)
                                   else _need_module("h2")()),
                urls=lambda ctx: {"h2faults": _url("https", ctx.ports["h2faults"]["https"])}),
    # The client conformance server (asyncio): `http` plain HTTP/1.1, `raw` answers that are not
    # (quite) HTTP, `tls` the routes of `http` over TLS, HTTP/2 through ALPN (the `h2` package).
    ServiceSpec("conformance", ["http", "raw", "tls"], launch_conformance,
                available=lambda: (f"{CONFORMANCE_SERVER} does not exist" if not os.path.exists(CONFORMANCE_SERVER)
                                   else _need_module("h2")()),
                probe={"http": "/200"},
                urls=lambda ctx: {"conformance": _url("http", ctx.ports["conformance"]["http"]),
                                  "conformance_raw": _url("http", ctx.ports["conformance"]["raw"]),
                                  "conformance_tls": _url("https", ctx.ports["conformance"]["tls"])}),
    # Server-sent events (sse-starlette on uvicorn): numbered event streams that resume after
    # Last-Event-ID, drops, heartbeats, chat-style streams, raw chunking; per-key /stats.
    ServiceSpec("sse", ["http"], launch_sse,
                available=lambda: (f"{SSE_SERVER} does not exist" if not os.path.exists(SSE_SERVER)
                                   else _need_module("sse_starlette", "uvicorn", "starlette")()),
                probe={"http": "/stats"},
                urls=lambda ctx: {"sse": _url("http", ctx.ports["sse"]["http"])}),
    # The OAuth2 servers behind TLS (nginx, the suite's leaf certificate), for tests that reach
    # them from another process through a secured Courier client (--only ...,oauth,oauth_tls).
    ServiceSpec("oauth_tls", ["oauth", "gateway"], launch_oauth_tls, default=False,
                available=lambda: None if find_nginx() else "nginx not found: run scripts/bootstrap.sh",
                urls=lambda ctx: {"oauth_tls": _url("https", ctx.ports["oauth_tls"]["oauth"]),
                                  "gateway_tls": _url("https", ctx.ports["oauth_tls"]["gateway"])}),
    # PostgreSQL, for the CourierPostgres tests only (--with postgres, or --only ...,postgres).
    # SIGINT is its "fast" shutdown: sessions are cut, nothing waits for clients.
    ServiceSpec("postgres", ["postgres"], launch_postgres, default=False,
                available=postgres_available,
                ready={"postgres": postgres_ready},
                stop_signal=signal.SIGINT,
                info=postgres_info,
                urls=lambda ctx: {"postgres": f"postgres://{POSTGRES_USER}@{HOST}:"
                                              f"{ctx.ports['postgres']['postgres']}/{POSTGRES_DATABASE}"}),
]


# --------------------------------------------------------------------------- supervisor

def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.2):
            return True
    except OSError:
        return False


def http_ok(port: int, path: str) -> bool:
    import http.client
    try:
        conn = http.client.HTTPConnection(HOST, port, timeout=2)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status < 500
    except (OSError, http.client.HTTPException):
        return False


def tail(path: str, n: int = 30) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


@dataclass
class Running:
    spec: ServiceSpec
    proc: subprocess.Popen
    log_path: str
    log_handle: object


class Supervisor:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.running: list[Running] = []
        self.errors: dict[str, str] = {}
        self.stop_event = threading.Event()
        self.janitor: subprocess.Popen | None = None
        self.work = ""
        self.ctx: Context | None = None
        self.upstream: RawUpstream | None = None
        self.specs: list[ServiceSpec] = []
        self.started = False

    # -- janitor
    def tell_janitor(self, line: str) -> None:
        if self.janitor and self.janitor.stdin:
            try:
                self.janitor.stdin.write((line + "\n").encode())
                self.janitor.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def start(self) -> None:
        t0 = time.monotonic()
        only = set(self.args.only.split(",")) if self.args.only else None
        extra = set(self.args.with_services.split(",")) if self.args.with_services else set()
        self.specs = []
        for spec in SERVICES:
            if only is not None and spec.name not in only:
                continue
            if only is None and not spec.default and spec.name not in extra:
                continue
            why = spec.available()
            if why:
                if spec.required:
                    raise StartupError(why)
                log(f"skipping {spec.name}: {why}")
                continue
            self.specs.append(spec)
        if shutil.which("openssl") is None:
            raise StartupError("openssl not found: run scripts/bootstrap.sh")

        self.janitor = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--janitor"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        self.work = tempfile.mkdtemp(prefix="courier-servers-")
        if not self.args.keep:
            self.tell_janitor(f"path {self.work}")
        if self.args.ready_file:
            self.tell_janitor(f"path {os.path.abspath(self.args.ready_file)}")
        os.makedirs(os.path.join(self.work, "logs"))

        self.upstream = RawUpstream()
        self.ctx = Context(work=self.work, ports={}, upstream=self.upstream, args=self.args)

        # httpbin does not need the PKI; start it first, it takes longest to import.
        for attempt in range(3):
            self._pick_ports()
            early = [s for s in self.specs if s.name == "httpbin"]
            for spec in early:
                self._launch(spec)
            if not self.ctx.pki:
                # No Popen with preexec_fn may run while these threads do.
                t1 = time.monotonic()
                with ThreadPoolExecutor(max_workers=1) as pool:
                    files = pool.submit(make_files, self.work)
                    self.ctx.pki = make_pki(self.work)
                    self.pins = spki_pins(self.ctx.pki)
                    self.files = files.result()
                log(f"PKI and files in {time.monotonic() - t1:.2f}s")
            for spec in self.specs:
                if spec not in early:
                    self._launch(spec)
            try:
                self._wait_ready()
                break
            except StartupError as e:
                if "Address already in use" in str(e) and attempt < 2:
                    log(f"port race, retrying: {e}")
                    self._stop_children()
                    continue
                raise
        self.upstream.start()
        self.startup_seconds = time.monotonic() - t0
        log(f"ready in {self.startup_seconds:.2f}s")

    def _pick_ports(self) -> None:
        assert self.ctx
        wanted = [(s.name, p) for s in self.specs for p in s.ports]
        ports = free_ports(len(wanted))
        self.ctx.ports = {}
        for (svc, name), port in zip(wanted, ports):
            self.ctx.ports.setdefault(svc, {})[name] = port

    def _launch(self, spec: ServiceSpec) -> None:
        assert self.ctx
        launch = spec.launch(self.ctx)
        log_path = self.ctx.log_file(spec.name)
        fh = open(log_path, "ab")
        proc = subprocess.Popen(
            launch.argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
            env=launch.env, cwd=launch.cwd or self.work,
            start_new_session=True, preexec_fn=_child_preexec(os.getpid()))
        self.tell_janitor(f"pgid {proc.pid}")
        self.running.append(Running(spec, proc, log_path, fh))

    def _wait_ready(self) -> None:
        assert self.ctx
        deadline = time.monotonic() + READY_TIMEOUT
        pending = {r.spec.name: list(self.ctx.ports[r.spec.name]) for r in self.running}
        while pending:
            for r in list(self.running):
                name = r.spec.name
                if name not in pending:
                    continue
                if r.proc.poll() is not None:
                    msg = (f"{name} exited with status {r.proc.returncode} before it was ready; "
                           f"log {r.log_path}:\n{tail(r.log_path)}")
                    if name == "nginx":
                        msg += tail(os.path.join(self.work, "logs", "nginx-error.log"))
                    if r.spec.required:
                        raise StartupError(msg)
                    log(msg)
                    self.errors[name] = msg
                    self._reap(r)
                    del pending[name]
                    continue
                ports = self.ctx.ports[name]
                pending[name] = [
                    p for p in pending[name]
                    if not (port_open(ports[p]) and (p not in r.spec.probe or http_ok(ports[p], r.spec.probe[p]))
                            and (p not in r.spec.ready or r.spec.ready[p](self.ctx)))
                ]
                if not pending[name]:
                    del pending[name]
            if not pending:
                break
            if time.monotonic() > deadline:
                raise StartupError(f"timed out after {READY_TIMEOUT}s waiting for {sorted(pending)}: "
                                   + " | ".join(tail(r.log_path, 10) for r in self.running
                                                if r.spec.name in pending))
            time.sleep(0.03)

    def _reap(self, r: Running) -> None:
        self.running.remove(r)
        kill_groups([r.proc.pid], grace=1.0, reap=r.proc.poll, signals={r.proc.pid: r.spec.stop_signal})
        self._release(r)

    def _release(self, r: Running) -> None:
        """Waits briefly for a killed child, tells the janitor, closes its log."""
        try:
            r.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        self.tell_janitor(f"release {r.proc.pid}")
        try:
            r.log_handle.close()  # type: ignore[attr-defined]
        except OSError:
            pass

    def _stop_children(self) -> None:
        running = list(self.running)
        kill_groups([r.proc.pid for r in running], grace=3.0,
                    reap=lambda: [r.proc.poll() for r in running],
                    signals={r.proc.pid: r.spec.stop_signal for r in running})
        for r in running:
            self._release(r)
        self.running = []

    def _own_pids(self) -> set[int]:
        """Children this process waits for itself (the janitor and the services)."""
        return {r.proc.pid for r in self.running} | ({self.janitor.pid} if self.janitor else set())

    def _reap_orphans(self) -> None:
        """Waits for exited children that were a server's (they came to us as the subreaper)."""
        me, own = os.getpid(), self._own_pids()
        for e in process_table():
            if e.ppid == me and e.zombie and e.pid not in own:
                try:
                    os.waitpid(e.pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    def _sweep_descendants(self) -> None:
        """Stops whatever is still below this process once the children are stopped.

        This process is a child subreaper, so a server's process whose parent exited (an
        nginx worker whose master was killed, a daemon that left its session) came to us
        instead of init: everything a server started is still below us here.
        """
        janitor = self.janitor.pid if self.janitor else None

        def strays() -> list[ProcEntry]:
            return [e for e in descendants(os.getpid()) if e.pid != janitor and not e.zombie]

        left = strays()
        if not left:
            return
        log(f"stopping {len(left)} process(es) the services left behind: {[e.pid for e in left]}")
        sig = signal.SIGTERM
        deadline = time.monotonic() + 2.0
        while left:
            for e in left:
                try:
                    os.kill(e.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.02)
            self._reap_orphans()
            left = strays()
            if time.monotonic() > deadline:
                if sig == signal.SIGKILL:
                    break
                sig = signal.SIGKILL
        self._reap_orphans()

    def ready_document(self) -> dict:
        assert self.ctx
        services = {}
        for r in self.running:
            services[r.spec.name] = {
                "ports": self.ctx.ports[r.spec.name],
                "pid": r.proc.pid,
                "log": r.log_path,
                **r.spec.info(self.ctx),
            }
        services["upstream"] = {"ports": {"raw": self.upstream.port}, "pid": os.getpid()}  # type: ignore[union-attr]
        urls: dict[str, str] = {}
        for r in self.running:
            urls.update(r.spec.urls(self.ctx))
        return {
            "version": SCHEMA_VERSION,
            "pid": os.getpid(),
            "host": HOST,
            "work_dir": self.work,
            "startup_seconds": round(self.startup_seconds, 3),
            "services": services,
            "urls": urls,
            "access_logs": dict(self.ctx.access_logs),
            "pki": {k: v for k, v in self.ctx.pki.items() if k != "dir"},
            "pins": self.pins,
            "files": self.files,
            "errors": self.errors,
        }

    def write_ready(self) -> None:
        path = os.path.abspath(self.args.ready_file)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(self.ready_document(), f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)

    def request_stop(self, why: str) -> None:
        """Stops the supervisor from any thread: at once while it runs, and during start-up
        too (the main thread gets SIGTERM, whose handler unwinds into `stop`)."""
        if self.stop_event.is_set():
            return
        self.stop_event.set()
        log(f"{why}; shutting down")
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except OSError:
            pass

    def watch_stdin(self) -> None:
        def run() -> None:
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            finally:
                self.request_stop("stdin closed")
        threading.Thread(target=run, name="stdin-watch", daemon=True).start()

    def watch_parent(self, parent: int) -> None:
        """Stops when the process that started this one exits, whoever else holds the
        write end of stdin (a process the test process started may have inherited it).

        A poll of getppid(), not PR_SET_PDEATHSIG: that signal comes when the *thread*
        that started us exits, and the test process starts us from a pool thread that
        may exit long before the process does.
        """
        if parent <= 1:
            return

        def run() -> None:
            try:
                while os.getppid() == parent:
                    time.sleep(0.2)
            finally:
                self.request_stop(f"parent process {parent} exited")
        threading.Thread(target=run, name="parent-watch", daemon=True).start()

    def run(self) -> None:
        reported: set[int] = set()
        while not self.stop_event.wait(0.25):
            self._reap_orphans()
            for r in self.running:
                if r.proc.poll() is not None and r.proc.pid not in reported:
                    reported.add(r.proc.pid)
                    log(f"{r.spec.name} exited unexpectedly with status {r.proc.returncode}; "
                        f"log {r.log_path}:\n{tail(r.log_path, 10)}")

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        t0 = time.monotonic()
        self._stop_children()
        self._sweep_descendants()
        log(f"children stopped in {time.monotonic() - t0:.2f}s")
        if self.upstream:
            self.upstream.stop()
        if self.args.ready_file:
            try:
                os.unlink(self.args.ready_file)
            except OSError:
                pass
        if self.started:
            for path in self.args.remove_on_exit:
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                elif os.path.lexists(path):
                    os.unlink(path)
        if self.work and not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        elif self.work:
            log(f"kept work dir {self.work}")
        if self.janitor:
            self.tell_janitor("done")
            try:
                self.janitor.stdin.close()  # type: ignore[union-attr]
                self.janitor.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass


def close_stdin_writers() -> None:
    """Close inherited copies of the write end of our own stdin pipe.

    Foundation's Process on Linux does not mark pipes close-on-exec, so the test
    process can leak that write end into us, and then EOF never comes. Only those
    descriptors are closed: Foundation also passes a socket it watches to learn
    that we exited, and closing that one would wedge its process monitor.
    """
    try:
        st0 = os.fstat(0)
    except OSError:
        return
    import stat as st
    if not st.S_ISFIFO(st0.st_mode):
        return
    try:
        fds = [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in fds:
        if fd <= 2:
            continue
        try:
            s = os.fstat(fd)
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue
        if (s.st_ino, s.st_dev) == (st0.st_ino, st0.st_dev) and flags & os.O_ACCMODE != os.O_RDONLY:
            os.close(fd)
            log(f"closed inherited write end of stdin (fd {fd})")


def reset_signals() -> None:
    """Start from a clean signal state, and hand it down to the children.

    A process spawned by Foundation's Process from a Swift concurrency thread
    inherits that thread's signal mask: nearly every signal, SIGTERM included,
    blocked. Children would inherit it again and ignore SIGTERM (and
    PR_SET_PDEATHSIG), so unblock everything and reset what may be ignored.
    """
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                signal.SIGUSR2, signal.SIGCHLD, signal.SIGALRM, signal.SIGWINCH):
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass


def main() -> int:
    parent = os.getppid()
    reset_signals()
    close_stdin_writers()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ready-file", help="where to write the JSON once every port accepts connections")
    ap.add_argument("--only", help="comma-separated services to start (default: all available but "
                    + ",".join(s.name for s in SERVICES if not s.default) + "): "
                    + ",".join(s.name for s in SERVICES))
    ap.add_argument("--with", dest="with_services", metavar="SERVICES",
                    help="comma-separated services to start besides the default ones: "
                    + ",".join(s.name for s in SERVICES if not s.default))
    ap.add_argument("--keep", action="store_true", help="keep the work dir on exit")
    ap.add_argument("--remove-on-exit", action="append", default=[], metavar="PATH",
                    help="also remove PATH (file or dir) on exit, once start-up has succeeded "
                         "(on a failed start it is left for the caller to read)")
    ap.add_argument("--no-stdin", action="store_true", help="do not stop on stdin EOF (manual runs)")
    ap.add_argument("--janitor", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.janitor:
        return janitor_main()
    if not args.ready_file:
        ap.error("--ready-file is required")

    def on_signal(signum, _frame):
        raise Shutdown(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    # What a server leaves behind when its parent exits comes to us, not to init: `stop`
    # finds it below us, and so does the janitor.
    _prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    sup = Supervisor(args)
    status = 0
    try:
        # Watched from the start: a test process that dies while the servers start stops them too.
        if not args.no_stdin:
            sup.watch_stdin()
            sup.watch_parent(parent)
        sup.start()
        for path in args.remove_on_exit:
            sup.tell_janitor(f"path {os.path.abspath(path)}")
        sup.write_ready()
        sup.started = True
        emit(f"READY {os.path.abspath(args.ready_file)}", sys.stdout)
        sup.run()
    except Shutdown as s:
        log(f"got {s}; shutting down")
    except StartupError as e:
        log(f"start-up failed: {e}")
        status = 3
    except Exception as e:  # noqa: BLE001
        log(f"internal error: {e!r}")
        status = 4
        import traceback
        log(traceback.format_exc())
    finally:
        sup.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
