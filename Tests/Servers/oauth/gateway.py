"""Resource gateway (protected resource) for Courier's integration tests.

Every request carrying a bearer token is checked by calling the
authorization server's RFC 7662 introspection endpoint over HTTP, as the
confidential client ``gateway``/``gateway-secret`` -- no shared memory with
the AS and no cache, so a revocation or an admin expire-all is visible on the
very next request.

Token parsing and scope checks are authlib's ResourceProtector +
IntrospectTokenValidator; this module adds the HTTP call, an audience check,
the "user token" requirement and RFC 6750 section 3 challenges.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import logging
import threading
import time

import urllib3
from flask import Flask, Response, g, jsonify, request

import dpop
from common import client_certificate_thumbprint, install_json_errors, is_loopback, public_origin, request_target_path

from authlib.integrations.flask_oauth2 import ResourceProtector
from authlib.integrations.flask_oauth2.requests import FlaskJsonRequest
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749.errors import ForbiddenError
from authlib.oauth2.rfc6750 import InsufficientScopeError, InvalidTokenError
from authlib.oauth2.rfc7662 import IntrospectTokenValidator

REALM = "courier"
GATEWAY_AUDIENCE = "courier-gateway"
GATEWAY_CLIENT_ID = "gateway"
GATEWAY_CLIENT_SECRET = "gateway-secret"

# static display data of the demo users (the gateway's own "user directory")
PROFILES = {
    "alice": {"name": "Alice Liddell", "email": "alice@example.test"},
    "bob": {"name": "Bob the Builder", "email": "bob@example.test"},
}

logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)

# The independent DPoP verifier is imported on first use (it pulls in cryptography, which
# would slow every start), but a missing package must stop the start like any other.
if importlib.util.find_spec("pydpop") is None:
    raise ImportError("No module named 'pydpop'")

# /api/user/download: byte i of a body is i % 251 (a prime, so no power-of-two chunking lines up
# with the pattern); clients compute the same bytes to check what they received.
DOWNLOAD_CHUNK = 64 << 10
_PATTERN = bytes(i % 251 for i in range(251)) * ((DOWNLOAD_CHUNK // 251) + 2)


def download_pattern(offset: int, size: int) -> bytes:
    start = offset % 251
    return _PATTERN[start:start + size]


class UpstreamError(Exception):
    pass


class UserTokenRequired(InsufficientScopeError):
    description = "This resource needs a token issued for a user (resource owner)."


class DPoPRefusal(Exception):
    """A 401 with a ``DPoP`` challenge (RFC 9449 section 7.1): ``invalid_token``,
    ``invalid_dpop_proof`` or ``use_dpop_nonce`` (then with a fresh ``DPoP-Nonce``)."""

    def __init__(self, error: str, description: str, nonce: str | None = None):
        super().__init__(description)
        self.error = error
        self.description = description
        self.nonce = nonce


def bound_key(token: dict) -> str | None:
    """The DPoP key thumbprint an introspected token is bound to (``cnf.jkt``), or None."""
    cnf = token.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    return jkt if isinstance(jkt, str) and jkt else None


class GatewayIntrospectValidator(IntrospectTokenValidator):
    def __init__(self, introspect_url: str, gateway_url: str, on_call):
        super().__init__(realm=REALM)
        self.introspect_url = introspect_url
        self.gateway_url = gateway_url
        self.on_call = on_call
        basic = base64.b64encode(f"{GATEWAY_CLIENT_ID}:{GATEWAY_CLIENT_SECRET}".encode()).decode()
        self.auth_header = f"Basic {basic}"
        # thread-safe pool; connections beyond maxsize are opened and dropped
        self.http = urllib3.PoolManager(
            num_pools=2,
            maxsize=64,
            block=False,
            timeout=urllib3.Timeout(connect=5.0, read=15.0),
            retries=urllib3.Retry(total=3, connect=3, read=0, backoff_factor=0.05),
        )

    def introspect_token(self, token_string):
        self.on_call("introspection_calls")
        try:
            resp = self.http.request(
                "POST",
                self.introspect_url,
                fields={"token": token_string, "token_type_hint": "access_token"},
                encode_multipart=False,
                headers={"Authorization": self.auth_header, "Accept": "application/json"},
            )
        except urllib3.exceptions.HTTPError as e:
            raise UpstreamError(f"introspection call failed: {e}") from e
        if resp.status != 200:
            raise UpstreamError(f"introspection answered HTTP {resp.status}")
        try:
            return json.loads(resp.data)
        except ValueError as e:
            raise UpstreamError("introspection answered non-JSON") from e

    def validate_token(self, token, scopes, request, require_user=False):
        if not token or not token.get("active"):
            raise InvalidTokenError(realm=self.realm)
        # RFC 9449 section 7.2: a DPoP-bound token is not a bearer token
        if str(token.get("token_type", "")).lower() == "dpop" or bound_key(token):
            raise DPoPRefusal("invalid_token", "This token is DPoP-bound: send it as Authorization: DPoP with a proof.")
        # only access tokens (refresh tokens introspect without token_type)
        if str(token.get("token_type", "")).lower() != "bearer":
            raise InvalidTokenError("Not an access token.", realm=self.realm)
        self.check_audience_scope_user(token, scopes, request, require_user)

    def check_audience_scope_user(self, token, scopes, request, require_user):
        """The checks after the token's type: a certificate binding, audience, scope
        (authlib) and a user."""
        cnf = token.get("cnf")
        bound_certificate = cnf.get("x5t#S256") if isinstance(cnf, dict) else None
        if bound_certificate and bound_certificate != client_certificate_thumbprint():
            # RFC 8705 section 3: presented over a connection without that certificate
            self.on_call("certificate_refusals")
            raise InvalidTokenError("The token is bound to another client certificate.", realm=self.realm)
        aud = token.get("aud")
        if aud:
            auds = aud if isinstance(aud, list) else [aud]
            if not any(a == GATEWAY_AUDIENCE or a.startswith(self.gateway_url) for a in auds):
                raise InvalidTokenError("Token audience does not include this gateway.", realm=self.realm)
        IntrospectTokenValidator.validate_token(self, token, scopes, request)
        if require_user and not token.get("username"):
            raise UserTokenRequired()


class DPoPIntrospectValidator(GatewayIntrospectValidator):
    """``Authorization: DPoP <token>`` (RFC 9449 section 7.1): the token is introspected
    like a bearer token, must be DPoP-bound, and the request's proof must pass ``guard``."""

    TOKEN_TYPE = "dpop"

    def __init__(self, introspect_url: str, gateway_url: str, on_call, guard: "ProofGuard"):
        super().__init__(introspect_url, gateway_url, on_call)
        self.guard = guard

    def validate_token(self, token, scopes, request, require_user=False):
        if not token or not token.get("active"):
            raise DPoPRefusal("invalid_token", "The access token is invalid, expired or revoked.")
        jkt = bound_key(token)
        if str(token.get("token_type", "")).lower() != "dpop" or jkt is None:
            raise DPoPRefusal("invalid_token", "The access token is not DPoP-bound.")
        access_token = request.headers.get("Authorization", "").split(None, 1)[1].strip()
        self.guard.check(access_token, jkt)
        self.check_audience_scope_user(token, scopes, request, require_user)


class ProofGuard:
    """The gateway's checks of the ``DPoP`` proof of a resource request (RFC 9449 sections
    4.3, 7.1, 9): the proof itself (``dpop.verify_proof``), the key binding, the gateway's
    own nonces, the jti replay cache, and a second opinion from the independent ``pydpop``
    verifier on every proof that passed.  Counts each outcome."""

    def __init__(self):
        self.lock = threading.Lock()
        self.nonces = dpop.NonceSource()
        self.replays = dpop.ReplayCache()
        self.independent = IndependentVerifier()
        self.reset()

    def reset(self):
        with self.lock:
            self.nonce_required = False
            self.counts = {
                "proofs_accepted": 0,
                "proofs_refused": 0,
                "replays_refused": 0,
                "nonce_challenges": 0,
                "independent_accepted": 0,
                "independent_refused": 0,
            }
            #: distinct jti values among proofs whose signature verified (at most 100,000 kept)
            self.jtis: set[str] = set()

    def bump(self, key: str) -> None:
        with self.lock:
            self.counts[key] += 1

    def snapshot(self) -> dict:
        with self.lock:
            return {"nonce": self.nonce_required, **self.counts, "distinct_jti": len(self.jtis)}

    def refuse(self, description: str, replay: bool = False):
        self.bump("proofs_refused")
        if replay:
            self.bump("replays_refused")
        return DPoPRefusal("invalid_dpop_proof", description)

    def check(self, access_token: str, jkt: str) -> None:
        """Raises DPoPRefusal unless the request's proof is good for ``access_token`` bound to ``jkt``."""
        proofs = request.headers.getlist("DPoP")
        if not proofs:
            raise DPoPRefusal("invalid_token", "A DPoP-bound token needs a DPoP proof.")
        if len(proofs) > 1:
            raise self.refuse("The request has more than one DPoP header.")
        nonce_on = self.nonce_required
        url = public_origin() + request_target_path()
        now = int(time.time())
        try:
            proof = dpop.verify_proof(proofs[0], method=request.method, url=url, access_token=access_token,
                                      nonces=self.nonces.accepted() if nonce_on else None, now=now)
        except dpop.NonceRequired:
            self.bump("nonce_challenges")
            raise DPoPRefusal("use_dpop_nonce", "Resource server requires nonce in DPoP proof",
                              nonce=self.nonces.current()) from None
        except dpop.ProofError as e:
            raise self.refuse(str(e)) from None
        with self.lock:
            if len(self.jtis) < 100_000:
                self.jtis.add(proof.jti)
        if proof.jkt != jkt:
            raise self.refuse("The proof's key is not the key the access token is bound to.")
        if not self.replays.use(proof.jti, proof.iat, now=now):
            raise self.refuse("The proof's jti was used before.", replay=True)
        verdict = self.independent.check(proofs[0], request.method, url, access_token, proof, jkt, now,
                                         nonce=proof.nonce if nonce_on else None)
        self.bump("independent_accepted" if verdict is None else "independent_refused")
        if verdict is not None:
            raise self.refuse(f"The independent verifier refused the proof: {verdict}")
        self.bump("proofs_accepted")
        if nonce_on:
            g.dpop_nonce = self.nonces.current()


class IndependentVerifier:
    """pydpop (PyPI), a DPoP verifier written by others, run on every proof the gateway's
    own checks accepted.  ``check`` returns None when it agrees, else its reason.

    What it is given: the proof, the method, the request URI, the access token (for
    ``ath``), the nonce the proof carried when nonces are on, the same clock, and its own
    replay store; its key thumbprint is compared with the token's ``cnf.jkt``.  Its ``htu``
    comparison lower-cases scheme and host and drops query and fragment but keeps a
    default port and compares the path byte for byte; when the proof's ``htu`` differs
    from the request URI only in ways RFC 3986 section 6 normalisation removes (a default
    port, percent-encoding of unreserved characters), it is given the proof's own ``htu``
    so that difference is checked by ``dpop.verify_proof`` alone."""

    def __init__(self):
        self.lock = threading.Lock()
        self._module = None
        self._store = None

    def _load(self):
        with self.lock:
            if self._module is None:
                import pydpop

                self._module = pydpop
                self._store = pydpop.MemoryJtiStore(ttl=2 * dpop.IAT_WINDOW + 1)
            return self._module

    def check(self, proof: str, method: str, url: str, access_token: str, mine: "dpop.Proof",
              jkt: str, now: int, nonce: str | None) -> str | None:
        pydpop = self._load()
        htu = url
        claim_htu = mine.claims.get("htu")
        if claim_htu != url and isinstance(claim_htu, str):
            htu = claim_htu  # equal after normalisation, or verify_proof would have refused
        try:
            with self.lock:
                result = pydpop.verify_proof(proof=proof, htm=method, htu=htu, access_token=access_token,
                                             expected_nonce=nonce,
                                             clock_skew=dpop.IAT_WINDOW, jti_store=self._store, now=now)
        except pydpop.DPoPError as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 - any crash of the other verifier is a refusal
            return f"{type(e).__name__}: {e}"
        if result.get("jwk_thumbprint") != jkt:
            return "its key thumbprint is not the token's cnf.jkt"
        return None


def _dpop_challenge(refusal: DPoPRefusal) -> Response:
    """RFC 9449 section 7.1 error response: 401 with a ``DPoP`` challenge."""
    resp = jsonify({"error": refusal.error, "error_description": refusal.description})
    resp.status_code = 401
    if refusal.error == "use_dpop_nonce":
        resp.headers["WWW-Authenticate"] = 'DPoP error="use_dpop_nonce"'
        resp.headers["DPoP-Nonce"] = refusal.nonce
    else:
        resp.headers["WWW-Authenticate"] = f'DPoP error="{refusal.error}", algs="{" ".join(dpop.ALGORITHMS)}"'
    resp.headers["Cache-Control"] = "no-store"
    return resp


def _challenge(error: OAuth2Error, scopes, scheme: str = "Bearer") -> Response:
    """RFC 6750 section 3 error response with a WWW-Authenticate challenge (RFC 9449
    section 7.1: the same parameters under the ``DPoP`` scheme for a DPoP request)."""
    if isinstance(error, InsufficientScopeError):
        status, code = 403, "insufficient_scope"
    else:
        # invalid / missing / unsupported-scheme tokens all answer
        # 401 invalid_token (authlib would say missing_authorization or
        # unsupported_token_type, which are not RFC 6750 codes).
        status, code = 401, "invalid_token"
    description = error.get_error_description() or InvalidTokenError.description
    if isinstance(error, ForbiddenError):
        description = "Missing or unsupported Authorization header; send Authorization: Bearer TOKEN."
    parts = [f'realm="{REALM}"', f'error="{code}"', f'error_description="{description}"']
    if status == 403 and scopes:
        parts.append(f'scope="{scopes[0]}"')
    if scheme == "DPoP":
        parts.append(f'algs="{" ".join(dpop.ALGORITHMS)}"')
    body = {"error": code, "error_description": description}
    resp = jsonify(body)
    resp.status_code = status
    resp.headers["WWW-Authenticate"] = f"{scheme} " + ", ".join(parts)
    resp.headers["Cache-Control"] = "no-store"
    return resp


def create_app(as_url: str, gateway_url: str) -> Flask:
    app = Flask("courier_gateway")
    app.json.sort_keys = False

    lock = threading.Lock()
    stats = {}

    def reset():
        with lock:
            stats.clear()
            stats.update({"requests_total": 0, "by_route": {}, "by_outcome": {}, "introspection_calls": 0, "upstream_errors": 0, "certificate_refusals": 0})

    reset()

    def count_introspection(key):
        # "introspection_calls", or "certificate_refusals": a token bound to a client
        # certificate presented over a connection without it
        with lock:
            stats[key] += 1

    validator = GatewayIntrospectValidator(f"{as_url}/oauth/introspect", gateway_url, count_introspection)
    guard = ProofGuard()
    protector = ResourceProtector()
    protector.register_token_validator(validator)  # the first one: Bearer challenges by default
    protector.register_token_validator(
        DPoPIntrospectValidator(f"{as_url}/oauth/introspect", gateway_url, count_introspection, guard)
    )

    def authorize(scopes, require_user=False):
        """Returns (token, None) or (None, error_response)."""
        scheme = request.headers.get("Authorization", "").split(None, 1)
        dpop_scheme = len(scheme) == 2 and scheme[0].lower() == "dpop"
        try:
            token = protector.validate_request(
                scopes, FlaskJsonRequest(request), require_user=require_user
            )
            return token, None
        except DPoPRefusal as refusal:
            return None, _dpop_challenge(refusal)
        except OAuth2Error as error:
            return None, _challenge(error, scopes, "DPoP" if dpop_scheme else "Bearer")
        except UpstreamError as e:
            with lock:
                stats["upstream_errors"] += 1
            resp = jsonify({"error": "temporarily_unavailable", "error_description": str(e)})
            resp.status_code = 503
            return None, resp

    @app.after_request
    def record(resp):
        # RFC 9449 section 9: a fresh nonce with every answer to a DPoP request while nonces are on
        nonce = g.get("dpop_nonce")
        if nonce and "DPoP-Nonce" not in resp.headers:
            resp.headers["DPoP-Nonce"] = nonce
        if request.path.startswith("/admin/"):
            return resp
        route = request.url_rule.rule if request.url_rule else "(unmatched)"
        code = str(resp.status_code)
        with lock:
            stats["requests_total"] += 1
            r = stats["by_route"].setdefault(route, {"total": 0})
            r["total"] += 1
            r[code] = r.get(code, 0) + 1
            stats["by_outcome"][code] = stats["by_outcome"].get(code, 0) + 1
        return resp

    @app.get("/api/user/profile")
    def user_profile():
        token, err = authorize(["read"], require_user=True)
        if err:
            return err
        scopes = (token.get("scope") or "").split()
        body = {
            "username": token["username"],
            "sub": token.get("sub"),
            "client_id": token.get("client_id"),
            "scope": token.get("scope"),
        }
        if "profile" in scopes and token["username"] in PROFILES:
            body.update(PROFILES[token["username"]])
        return jsonify(body)

    @app.get("/api/device/info")
    def device_info():
        token, err = authorize(["device", "read"])  # either scope suffices
        if err:
            return err
        body = {
            "client_id": token.get("client_id"),
            "sub": token.get("sub"),
            "scope": token.get("scope"),
        }
        if token.get("username"):
            body["username"] = token["username"]
        if token.get("act"):
            body["act"] = token["act"]
        if token.get("aud"):
            body["aud"] = token["aud"]
        return jsonify(body)

    @app.get("/api/device/slow")
    def device_slow():
        # Answers after ?seconds= (at most 60): requests that are in flight for a while.
        token, err = authorize(["device", "read"])
        if err:
            return err
        try:
            seconds = min(max(float(request.args.get("seconds", "1")), 0.0), 60.0)
        except ValueError:
            seconds = 1.0
        time.sleep(seconds)
        return jsonify({"client_id": token.get("client_id"), "slept": seconds})

    @app.get("/api/user/download")
    def user_download():
        # ?bytes=N (at most 256 MiB) of download_pattern(), produced as it is sent (never held
        # whole): a long streamed body behind a user token. Optional ?pause_after=K&pause=S
        # stops for S seconds (at most 30) after K bytes, so a client can act mid-body.
        token, err = authorize(["read"], require_user=True)
        if err:
            return err
        try:
            total = min(max(int(request.args.get("bytes", "1048576")), 0), 256 << 20)
            pause_after = int(request.args.get("pause_after", "-1"))
            pause = min(max(float(request.args.get("pause", "0")), 0.0), 30.0)
        except ValueError:
            return jsonify({"error": "invalid_request"}), 400

        def body():
            sent = 0
            paused = False
            while sent < total:
                if not paused and 0 <= pause_after <= sent:
                    paused = True
                    time.sleep(pause)
                size = min(DOWNLOAD_CHUNK, total - sent)
                if 0 <= pause_after and not paused:
                    size = min(size, pause_after - sent)
                yield download_pattern(sent, size)
                sent += size

        resp = Response(body(), status=200, mimetype="application/octet-stream")
        resp.headers["Content-Length"] = str(total)
        resp.headers["X-Courier-User"] = str(token.get("username"))
        return resp

    # /api/events: an event stream behind a token, which ends when that token expires. Each
    # request with key K is noted in event_log[K] (read at /api/events/stats?key=K).
    event_log: dict[str, list[dict]] = {}

    def token_hash(value: str | None) -> str | None:
        """A short fingerprint of a bearer token: a test can tell tokens apart without seeing them."""
        return hashlib.sha256(value.encode()).hexdigest()[:12] if value else None

    @app.get("/api/events")
    def api_events():
        # ?count=N (10; 0: no end but the token's expiry) events `id: n`, `event: tick`,
        # `data: n:`, ?interval=MS apart (0; at least 10 with count=0), resuming after the
        # request's Last-Event-ID (one that is >= N gets 204). Needs what /api/device/info needs.
        # The stream ends cleanly (and the connection closes, as every response here does) at
        # the token's `exp` as introspection gives it, so a client must come back with a
        # renewed token: the old one is refused from `exp` on, even during the fraction of a
        # second the authorization server may still call it active (`exp` is rounded down).
        key = request.args.get("key", "default")
        header = request.headers.get("Last-Event-ID")
        scheme, _, credential = request.headers.get("Authorization", "").partition(" ")
        entry = {"token": token_hash(credential.strip()) if scheme.lower() in ("bearer", "dpop") else None,
                 "last_event_id": header, "status": None, "expires_at": None, "events": 0, "end": None}
        with lock:
            event_log.setdefault(key, []).append(entry)
        token, err = authorize(["device", "read"])
        if err is None and token.get("exp") is not None and float(token["exp"]) <= time.time():
            err = _challenge(InvalidTokenError("The access token expired.", realm=REALM), ["device", "read"],
                             "DPoP" if scheme.lower() == "dpop" else "Bearer")
        if err:
            entry["status"] = err.status_code
            return err
        try:
            count = min(max(int(request.args.get("count", "10")), 0), 1_000_000)
            interval = min(max(float(request.args.get("interval", "0")), 0.0), 600_000.0) / 1000
        except ValueError:
            entry["status"] = 400
            return jsonify({"error": "invalid_request"}), 400
        if count == 0:
            interval = max(interval, 0.01)
        try:
            first = max(1, int(header) + 1) if header is not None else 1
        except ValueError:
            first = 1
        if count and first > count:
            entry["status"] = 204
            return Response(status=204)
        expires_at = float(token["exp"]) if token.get("exp") is not None else None
        entry.update(status=200, expires_at=expires_at)

        def stream():
            n = first
            try:
                while count == 0 or n <= count:
                    wait = interval if n > first else 0.0
                    if expires_at is not None and time.time() + wait >= expires_at:
                        time.sleep(max(0.0, expires_at - time.time()))
                        entry["end"] = "expired"
                        return
                    time.sleep(wait)
                    yield f"id: {n}\nevent: tick\ndata: {n}:\n\n".encode()
                    with lock:
                        entry["events"] += 1
                    n += 1
                entry["end"] = "done"
            except GeneratorExit:
                entry["end"] = "client_gone"
                raise

        resp = Response(stream(), status=200, mimetype="text/event-stream")
        resp.headers["Cache-Control"] = "no-store"
        resp.headers["X-Accel-Buffering"] = "no"
        return resp

    @app.get("/api/events/stats")
    def api_events_stats():
        # Loopback only, no token: what each /api/events request with ?key=K carried and got.
        if not is_loopback(request.remote_addr):
            return jsonify({"error": "forbidden"}), 403
        key = request.args.get("key", "default")
        with lock:
            connections = [dict(e) for e in event_log.get(key, [])]
        return jsonify({"key": key, "connections": connections})

    # Per-user caching and cookies. /api/user/cached answers each user with their own subject,
    # `Cache-Control: private, max-age=N` (N from ?max_age=, default 60) and an ETag that is the
    # same for a user until /admin/cache-reset; a conditional request with that ETag gets a 304.
    # /api/user/cached/stats (loopback) says how many requests each user's token made, and how
    # many were answered 304.
    cache_log = {}

    @app.get("/api/user/cached")
    def user_cached():
        token, err = authorize(["read"], require_user=True)
        if err:
            return err
        username = token["username"]
        etag = '"' + hashlib.sha256(f"{username}:{cache_log.get('epoch', 0)}".encode()).hexdigest()[:16] + '"'
        max_age = request.args.get("max_age", "60")
        with lock:
            entry = cache_log.setdefault(username, {"requests": 0, "not_modified": 0})
            entry["requests"] += 1
        if etag in [t.strip() for t in (request.headers.get("If-None-Match") or "").split(",")]:
            with lock:
                entry["not_modified"] += 1
            resp = Response(status=304)
        else:
            resp = jsonify({"username": username, "sub": token.get("sub"), "served_at": time.time()})
        resp.headers["Cache-Control"] = f"private, max-age={int(max_age)}"
        resp.headers["ETag"] = etag
        return resp

    @app.get("/api/user/cached/stats")
    def user_cached_stats():
        if not is_loopback(request.remote_addr):
            return jsonify({"error": "forbidden"}), 403
        with lock:
            return jsonify({k: dict(v) for k, v in cache_log.items() if k != "epoch"})

    @app.post("/admin/cache-reset")
    def admin_cache_reset():
        with lock:
            epoch = cache_log.get("epoch", 0) + 1
            cache_log.clear()
            cache_log["epoch"] = epoch
        return jsonify({"reset": True})

    # /api/user/cookie sets a session cookie naming the user whose token asked; /api/user/whoami
    # says which user's token came and which cookie came with it, so a test sees a cookie of
    # one user never arrive with another user's token.
    @app.get("/api/user/cookie")
    def user_cookie():
        token, err = authorize(["read"], require_user=True)
        if err:
            return err
        resp = jsonify({"username": token["username"]})
        resp.headers["Set-Cookie"] = f"gw_session={token['username']}; Path=/api; Secure; HttpOnly; SameSite=Lax"
        return resp

    @app.get("/api/user/whoami")
    def user_whoami():
        token, err = authorize(["read"], require_user=True)
        if err:
            return err
        return jsonify({"username": token["username"], "cookie": request.headers.get("Cookie")})

    @app.get("/api/device/cookie")
    def device_cookie():
        token, err = authorize(["device", "read"])
        if err:
            return err
        resp = jsonify({"client_id": token.get("client_id"), "cookie": request.headers.get("Cookie")})
        resp.headers["Set-Cookie"] = "gw_device=device; Path=/api; Secure"
        return resp

    @app.get("/api/public/cookie")
    def public_cookie():
        resp = jsonify({"cookie": request.headers.get("Cookie")})
        resp.headers["Set-Cookie"] = "gw_public=anyone; Path=/api; Secure"
        return resp

    @app.get("/api/public/status")
    def public_status():
        return jsonify({"status": "ok", "service": "courier-gateway"})

    @app.post("/api/user/echo")
    def user_echo():
        token, err = authorize(["write"])
        if err:
            return err
        raw = request.get_data(cache=True)
        try:
            json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            resp = jsonify({"error": "invalid_request", "error_description": "Body must be JSON."})
            resp.status_code = 400
            return resp
        # the body comes back byte for byte
        resp = Response(raw, status=200, mimetype="application/json")
        resp.headers["X-Courier-Sub"] = str(token.get("sub"))
        return resp

    @app.get("/api/headers")
    def echo_headers():
        headers = {}
        for k, v in request.headers.items():
            headers[k] = f"{headers[k]}, {v}" if k in headers else v
        return jsonify(
            {
                "method": request.method,
                "path": request.path,
                "query": request.query_string.decode("latin-1"),
                "headers": headers,
            }
        )

    @app.get("/healthz")
    def healthz():
        return jsonify({"ok": True, "role": "gateway", "authorization_server": as_url})

    @app.get("/admin/stats")
    def admin_stats():
        with lock:
            snap = json.loads(json.dumps(stats))
        return jsonify(snap)

    @app.post("/admin/reset")
    def admin_reset():
        reset()
        guard.reset()
        return jsonify({"reset": True})

    @app.route("/admin/dpop", methods=["GET", "POST"])
    def admin_dpop():
        # {"nonce": bool} (optional: missing = unchanged)
        if request.method == "POST":
            body = request.get_json(silent=True)
            if body is None:
                body = {k: request.values[k].lower() in ("1", "true", "on", "yes")
                        for k in ("nonce",) if k in request.values}
            if not isinstance(body, dict) or ("nonce" in body and not isinstance(body["nonce"], bool)):
                return jsonify({"error": "invalid_request", "error_description": "nonce must be a boolean"}), 400
            if "nonce" in body:
                with guard.lock:
                    guard.nonce_required = body["nonce"]
        return jsonify(guard.snapshot())

    @app.before_request
    def admin_loopback_only():
        if request.path.startswith("/admin/") and not is_loopback(request.remote_addr):
            return jsonify({"error": "forbidden"}), 403
        return None

    install_json_errors(app)
    return app
