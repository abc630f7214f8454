"""OAuth 2.0 authorization server for Courier's integration tests.

Everything protocol-related is done by authlib's own classes:

* grants: ClientCredentialsGrant, ResourceOwnerPasswordCredentialsGrant,
  RefreshTokenGrant, AuthorizationCodeGrant (+ rfc7636.CodeChallenge);
* endpoints: rfc7662.IntrospectionEndpoint, rfc7009.RevocationEndpoint;
* tokens: rfc6750.BearerTokenGenerator;
* client authentication, error bodies (RFC 6749 section 5.2), redirects;
  JWT client assertions (RFC 7523: ``private_key_jwt`` with RS256/ES256 keys,
  ``client_secret_jwt`` with HS256) through rfc7523.JWTBearerClientAssertion.

This module is the glue: an in-memory, lock-protected store, the
pre-registered clients and users, and the Flask routes.  The one piece of
protocol authlib has no class for is RFC 8693 token exchange; it is written
here as an authlib grant class (``TokenExchangeGrant``) on top of authlib's
``BaseGrant``/``TokenEndpointMixin``.

Deliberate deviations from authlib defaults (all towards the RFCs or towards
test convenience) are marked ``# NOTE:`` and listed in README.md.
"""

from __future__ import annotations

import collections
import email.utils
import hmac
import ipaddress
import math
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from flask import Flask, Response, g, has_request_context, jsonify, request

import dpop
from common import client_certificate_thumbprint, install_json_errors, is_loopback, public_origin, request_target_path

from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    ClientMixin,
    InvalidClientError,
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
    TokenMixin,
    UnauthorizedClientError,
    grants,
)
from authlib.oauth2.rfc6749.grants.base import BaseGrant, TokenEndpointMixin
from authlib.oauth2.rfc6749.util import scope_to_list
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint as _RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint as _IntrospectionEndpoint

# --------------------------------------------------------------------------
# Fixed registrations
# --------------------------------------------------------------------------

SCOPES = ["read", "write", "device", "profile", "exchange"]

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"

#: audiences a token-exchange request may ask for (RFC 8693 ``audience``)
KNOWN_AUDIENCES = {"courier-gateway", "courier-api"}

AUTH_CODE_LIFETIME = 600  # seconds, RFC 6749 section 4.1.2 recommends <= 10 min

CONFIDENTIAL_METHODS = ("client_secret_basic", "client_secret_post")
#: client authentication with a JWT assertion (RFC 7523 section 2.2)
JWT_METHODS = ("private_key_jwt", "client_secret_jwt")
JWT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def _generate_assertion_keys() -> dict:
    """Fresh key pairs for the private_key_jwt clients, made once per server process (never
    stored on disk).  The tests fetch the private halves from GET /admin/client-keys."""
    # Imported here: cryptography and joserfc would add a noticeable share to every start.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from joserfc.jwk import ECKey, RSAKey

    def pem(key, fmt):
        return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = serialization.PrivateFormat.PKCS8
    legacy = serialization.PrivateFormat.TraditionalOpenSSL  # PKCS#1 for RSA, SEC 1 for EC
    return {
        "courier-jwt-rs256": {
            "alg": "RS256",
            "kid": "rs256-test",
            "private_pem": pem(rsa_key, pkcs8),
            "private_pem_legacy": pem(rsa_key, legacy),
            "public": RSAKey.import_key(pem(rsa_key, pkcs8)).as_dict(private=False),
        },
        "courier-jwt-es256": {
            "alg": "ES256",
            "kid": "es256-test",
            "private_pem": pem(ec_key, pkcs8),
            "private_pem_legacy": pem(ec_key, legacy),
            "public": ECKey.import_key(pem(ec_key, pkcs8)).as_dict(private=False),
        },
    }


_ASSERTION_KEYS: dict | None = None
_ASSERTION_KEYS_LOCK = threading.Lock()
#: the private_key_jwt clients and their algorithms
ASSERTION_CLIENTS = {"courier-jwt-rs256": "RS256", "courier-jwt-es256": "ES256"}


def assertion_keys() -> dict:
    """The key pairs, made on first use (RSA key generation would slow every start)."""
    global _ASSERTION_KEYS
    with _ASSERTION_KEYS_LOCK:
        if _ASSERTION_KEYS is None:
            _ASSERTION_KEYS = _generate_assertion_keys()
        return _ASSERTION_KEYS


@dataclass(frozen=True)
class User:
    username: str
    password: str
    name: str
    email: str

    def get_user_id(self):
        return self.username


class _Users(dict):
    """The named users, plus a numbered family for tests of many users: `user-N`
    (N = 1...100000) with the password `password`, made on first use."""

    _NUMBERED = re.compile(r"user-([1-9][0-9]{0,4}|100000)")

    def get(self, name, default=None):
        if name not in self and isinstance(name, str) and self._NUMBERED.fullmatch(name):
            self[name] = User(name, "password", f"User {name[5:]}", f"{name}@example.test")
        return super().get(name, default)


USERS = _Users({
    "alice": User("alice", "wonderland", "Alice Liddell", "alice@example.test"),
    "bob": User("bob", "builder", "Bob the Builder", "bob@example.test"),
})


@dataclass(frozen=True)
class Client(ClientMixin):
    client_id: str
    client_secret: str | None  # None => public client (auth method "none")
    grant_types: tuple[str, ...]
    allowed_scopes: tuple[str, ...]
    default_scope: str
    redirect_uris: tuple[str, ...] = ()
    introspect_any: bool = False  # resource servers may introspect any token
    #: private_key_jwt / client_secret_jwt; None => the secret methods (or "none")
    token_endpoint_auth_method: str | None = None

    @property
    def is_public(self):
        return self.client_secret is None and self.token_endpoint_auth_method is None

    # -- authlib ClientMixin -------------------------------------------------
    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        # RFC 6749 section 3.1.2.3: with several registered redirect URIs the
        # client MUST send redirect_uri, so there is no default then.
        if len(self.redirect_uris) == 1:
            return self.redirect_uris[0]
        return None

    def get_allowed_scope(self, scope):
        # NOTE: omitted scope => the client's default scope (RFC 6749 section
        # 3.3 allows a pre-defined default).  A requested scope outside the
        # client's registration fails with invalid_scope instead of being
        # silently narrowed (authlib turns None into InvalidScopeError).
        if not scope:
            return self.default_scope
        requested = scope_to_list(scope)
        if not set(requested).issubset(self.allowed_scopes):
            return None
        seen = []
        for s in requested:
            if s not in seen:
                seen.append(s)
        return " ".join(seen)

    def check_redirect_uri(self, redirect_uri):
        if redirect_uri in self.redirect_uris:
            return True
        # RFC 8252 section 7.3: for loopback IP redirect URIs the port is
        # variable (native apps listen on an ephemeral port).
        try:
            parts = urlsplit(redirect_uri)
            port = parts.port
        except ValueError:
            return False
        if parts.scheme != "http" or port is None or parts.query or parts.fragment:
            return False
        host = parts.hostname or ""
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:
            return False
        netloc = f"[{host}]" if ":" in host else host
        without_port = f"http://{netloc}{parts.path}"
        return without_port in self.redirect_uris

    def check_client_secret(self, client_secret):
        if self.client_secret is None or self.token_endpoint_auth_method is not None:
            return False
        return hmac.compare_digest(self.client_secret.encode(), client_secret.encode())

    def check_endpoint_auth_method(self, method, endpoint):
        if self.token_endpoint_auth_method is not None:
            # a JWT client authenticates with its registered method only
            return method == self.token_endpoint_auth_method
        if self.is_public:
            # public clients: token endpoint and revocation, client_id only
            return method == "none" and endpoint in ("token", "revocation")
        return method in CONFIDENTIAL_METHODS

    def check_response_type(self, response_type):
        return response_type == "code" and "authorization_code" in self.grant_types

    def check_grant_type(self, grant_type):
        return grant_type in self.grant_types


LOOPBACK_CALLBACKS = ("http://127.0.0.1/callback", "courier://callback")

CLIENTS = {
    c.client_id: c
    for c in [
        Client(
            client_id="courier-device",
            client_secret="device-secret",
            grant_types=("client_credentials", TOKEN_EXCHANGE_GRANT),
            allowed_scopes=("device", "read", "exchange"),
            default_scope="device",
        ),
        Client(
            client_id="courier-user",
            client_secret="user-secret",
            grant_types=(
                "password",
                "refresh_token",
                "authorization_code",
                TOKEN_EXCHANGE_GRANT,
            ),
            allowed_scopes=("read", "write", "profile", "exchange"),
            default_scope="read write profile",
            redirect_uris=LOOPBACK_CALLBACKS,
        ),
        Client(
            client_id="courier-public",
            client_secret=None,
            grant_types=("authorization_code", "refresh_token"),
            allowed_scopes=("read", "write", "profile"),
            default_scope="read write profile",
            redirect_uris=LOOPBACK_CALLBACKS,
        ),
        # RFC 7523 client assertions; keys from assertion_keys() (made per process)
        *[
            Client(
                client_id=client_id,
                client_secret=None,
                grant_types=("client_credentials",),
                allowed_scopes=("device", "read"),
                default_scope="device",
                token_endpoint_auth_method="private_key_jwt",
            )
            for client_id in ASSERTION_CLIENTS
        ],
        Client(
            client_id="courier-secret-jwt",
            # RFC 7518 section 3.2: an HS256 key of at least 256 bits
            client_secret="courier-secret-jwt-test-fixture-secret-0123456789",
            grant_types=("client_credentials",),
            allowed_scopes=("device", "read"),
            default_scope="device",
            token_endpoint_auth_method="client_secret_jwt",
        ),
        Client(
            client_id="gateway",
            client_secret="gateway-secret",
            grant_types=(),
            allowed_scopes=(),
            default_scope="",
            introspect_any=True,
        ),
    ]
}

# --------------------------------------------------------------------------
# In-memory storage (one RLock guards every mutation)
# --------------------------------------------------------------------------


@dataclass
class TokenRecord:
    """One issued token response: an access token and maybe a refresh token."""

    access_token: str
    refresh_token: str | None
    client_id: str
    user: str | None
    sub: str
    scope: str
    grant_type: str
    issued_at: float
    expires_at: float
    refresh_expires_at: float | None
    access_revoked: bool = False
    refresh_revoked: bool = False
    aud: list[str] = field(default_factory=list)
    act: dict | None = None
    code: str | None = None  # authorization code it came from, if any
    #: RFC 9449: the thumbprint of the DPoP key both tokens are bound to, or None (Bearer)
    jkt: str | None = None
    #: RFC 8705: x5t#S256 of the client certificate the access token is bound to, or None
    x5t: str | None = None


class TokenView(TokenMixin):
    """authlib TokenMixin over one half (access or refresh) of a record."""

    def __init__(self, record: TokenRecord, kind: str):
        self.record = record
        self.kind = kind  # "access_token" | "refresh_token"

    def check_client(self, client):
        return self.record.client_id == client.get_client_id()

    def get_scope(self):
        return self.record.scope

    def get_expires_in(self):
        return max(0, int(self.record.expires_at - self.record.issued_at))

    def is_expired(self):
        now = time.time()
        if self.kind == "access_token":
            return now >= self.record.expires_at
        exp = self.record.refresh_expires_at
        return exp is not None and now >= exp

    def is_revoked(self):
        if self.kind == "access_token":
            return self.record.access_revoked
        return self.record.refresh_revoked

    def is_active(self):
        return not self.is_expired() and not self.is_revoked()

    def get_user(self):
        return USERS.get(self.record.user) if self.record.user else None

    def get_client(self):
        return CLIENTS.get(self.record.client_id)


@dataclass
class CodeRecord(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str | None
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope


#: admin/metadata: ``issuer`` and ``endpoint_origin`` replace the real values (to test a
#: client's checks), ``max_age`` is the Cache-Control max-age, ``oauth_metadata`` off
#: answers 404 at /.well-known/oauth-authorization-server (OpenID Connect only).
METADATA_DEFAULTS = {
    "issuer": None,
    "endpoint_origin": None,
    "mtls_origin": None,
    "max_age": 3600,
    "oauth_metadata": True,
}


class Store:
    def __init__(self, token_lifetime: int, refresh_lifetime: int | None):
        self.lock = threading.RLock()
        self.token_lifetime = int(token_lifetime)
        self.refresh_lifetime = int(refresh_lifetime) if refresh_lifetime else None
        self.by_access: dict[str, TokenRecord] = {}
        self.by_refresh: dict[str, TokenRecord] = {}
        self.codes: dict[str, CodeRecord] = {}
        self.used_codes: dict[str, list[TokenRecord]] = {}
        # what POST /oauth/token does instead of answering normally (admin/token-fault)
        self.token_fault = {"mode": "none", "retry_after": None, "retry_after_form": "seconds", "delay_ms": 0}
        self.token_request_times: collections.deque[float] = collections.deque(maxlen=10000)
        #: (client_id, jti) -> exp of every accepted client assertion not yet expired
        self.used_jtis: dict[tuple[str, str], float] = {}
        #: what the metadata documents say instead of the truth (admin/metadata)
        self.metadata_override = dict(METADATA_DEFAULTS)
        #: DPoP (RFC 9449) at the token endpoint: nonces of this server, accepted proof jtis
        self.dpop_nonces = dpop.NonceSource()
        self.dpop_replays = dpop.ReplayCache()
        self.reset_stats()

    # -- stats ---------------------------------------------------------------
    def reset_stats(self):
        with self.lock:
            self.stats = {
                "grants": {},  # grant_type -> tokens issued (HTTP 200)
                "grants_total": 0,
                "failed_grants": 0,
                "failed_grants_by_error": {},
                "failed_grants_by_grant_type": {},
                "authorizations": 0,  # codes issued by /oauth/authorize
                "authorization_errors": 0,
                "introspections": 0,
                "introspections_active": 0,
                "introspections_inactive": 0,
                "introspection_errors": 0,
                "revocations": 0,  # successful (HTTP 200) revocation requests
                "revocation_errors": 0,
                "tokens_revoked": 0,  # tokens actually flipped to revoked
                "refresh_reuse_detected": 0,
                "code_reuse_detected": 0,
                "token_requests": 0,  # every POST /oauth/token, answered, failed or faulted
                "token_faults": 0,  # token requests a fault mode answered (down, 429, 503)
                "client_assertions": 0,  # JWT client assertions accepted (each jti once)
                "client_assertion_replays": 0,  # assertions refused because their jti was used
                "metadata_requests": 0,  # GETs of either well-known metadata document
                "metadata_requests_by_path": {},
            }
            self.token_request_times.clear()
            # admin/dpop: settings back to off, counters to zero
            self.dpop_settings = {"require": False, "nonce": False}
            self.dpop_counts = {"proofs_accepted": 0, "proofs_refused": 0, "nonce_challenges": 0}

    def bump_dpop(self, key: str) -> None:
        with self.lock:
            self.dpop_counts[key] += 1

    def refuse_dpop_binding(self, had_proof: bool) -> None:
        """Counts a proof refused for its key (a bound refresh token): it was counted as
        accepted when its own checks passed, and now counts as refused instead."""
        with self.lock:
            self.dpop_counts["proofs_refused"] += 1
            if had_proof:
                self.dpop_counts["proofs_accepted"] -= 1

    def dpop_snapshot(self) -> dict:
        with self.lock:
            return {**self.dpop_settings, **self.dpop_counts}

    def bump(self, key, sub=None, n=1):
        with self.lock:
            if sub is None:
                self.stats[key] += n
            else:
                d = self.stats[key]
                d[sub] = d.get(sub, 0) + n

    def snapshot(self):
        with self.lock:
            out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.stats.items()}
            now = time.time()
            out["active_access_tokens"] = sum(
                1 for r in self.by_access.values() if not r.access_revoked and now < r.expires_at
            )
            out["token_lifetime"] = self.token_lifetime
            out["refresh_lifetime"] = self.refresh_lifetime
            out["token_fault"] = self.token_fault["mode"]
            return out

    def use_jti(self, client_id: str, jti, exp) -> bool:
        """Records a client assertion's jti; False if the client used it before (RFC 7523
        section 3, item 7).  Entries are dropped once the assertion would have expired."""
        now = time.time()
        with self.lock:
            for key in [k for k, until in self.used_jtis.items() if until < now - 120]:
                del self.used_jtis[key]
            key = (client_id, str(jti))
            if key in self.used_jtis:
                self.stats["client_assertion_replays"] += 1
                return False
            self.used_jtis[key] = float(exp) if isinstance(exp, (int, float)) else now + 3600
            self.stats["client_assertions"] += 1
            return True

    def note_token_request(self) -> dict:
        """Counts a token request and returns the fault mode in force for it."""
        with self.lock:
            self.stats["token_requests"] += 1
            self.token_request_times.append(time.time())
            return dict(self.token_fault)

    # -- tokens --------------------------------------------------------------
    def add_token(self, rec: TokenRecord):
        with self.lock:
            self.by_access[rec.access_token] = rec
            if rec.refresh_token:
                self.by_refresh[rec.refresh_token] = rec
            if rec.code:
                self.used_codes.setdefault(rec.code, []).append(rec)

    def lookup(self, token: str, hint: str | None) -> TokenView | None:
        # RFC 7009/7662: the hint only orders the search.
        order = ["access_token", "refresh_token"]
        if hint == "refresh_token":
            order.reverse()
        with self.lock:
            for kind in order:
                table = self.by_access if kind == "access_token" else self.by_refresh
                rec = table.get(token)
                if rec is not None:
                    return TokenView(rec, kind)
        return None

    def active_access(self, token: str) -> TokenView | None:
        with self.lock:
            rec = self.by_access.get(token)
        if rec is None:
            return None
        view = TokenView(rec, "access_token")
        return view if view.is_active() else None

    def active_refresh(self, token: str) -> TokenView | None:
        with self.lock:
            rec = self.by_refresh.get(token)
        if rec is None:
            return None
        view = TokenView(rec, "refresh_token")
        if view.is_revoked():
            self.bump("refresh_reuse_detected")
        return view if view.is_active() else None

    def consume_refresh(self, rec: TokenRecord) -> bool:
        """Atomically revoke a refresh token; False if it was already revoked."""
        with self.lock:
            if rec.refresh_revoked:
                return False
            rec.refresh_revoked = True
            return True

    def revoke(self, view: TokenView) -> int:
        """RFC 7009 section 2.1: revoking a refresh token also revokes the
        access token issued with it; revoking an access token leaves the
        refresh token alone."""
        n = 0
        with self.lock:
            rec = view.record
            if view.kind == "refresh_token" and not rec.refresh_revoked:
                rec.refresh_revoked = True
                n += 1
            if not rec.access_revoked:
                rec.access_revoked = True
                n += 1
        return n

    def revoke_record(self, rec: TokenRecord):
        with self.lock:
            rec.access_revoked = True
            if rec.refresh_token:
                rec.refresh_revoked = True

    def expire_all(self) -> int:
        n = 0
        with self.lock:
            now = time.time()
            for rec in self.by_access.values():
                if now < rec.expires_at:
                    rec.expires_at = now - 0.001
                    n += 1
        return n

    # -- authorization codes -------------------------------------------------
    def add_code(self, rec: CodeRecord):
        with self.lock:
            self.codes[rec.code] = rec

    def find_code(self, code: str, client_id: str) -> CodeRecord | None:
        with self.lock:
            rec = self.codes.get(code)
            if rec is None:
                # RFC 6749 section 4.1.2: a code used twice => deny, and revoke
                # the tokens issued from it.
                issued = self.used_codes.get(code)
                if issued:
                    self.stats["code_reuse_detected"] += 1
                    for t in issued:
                        self.revoke_record(t)
                return None
            if rec.client_id != client_id or time.time() >= rec.expires_at:
                return None
            return rec

    def take_code(self, code: str) -> bool:
        with self.lock:
            return self.codes.pop(code, None) is not None


# --------------------------------------------------------------------------
# authlib grant / endpoint subclasses (glue)
# --------------------------------------------------------------------------

# Every grant accepts all three methods; Client.check_endpoint_auth_method
# restricts confidential clients to secret_basic/secret_post and public
# clients to "none".  (authlib's per-grant defaults are narrower: e.g.
# RefreshTokenGrant and ClientCredentialsGrant only allow client_secret_basic.)
TOKEN_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none", *JWT_METHODS]


class ClientAssertionAuth:
    """``private_key_jwt`` or ``client_secret_jwt``, one instance per method.  The work is
    authlib's (``_assertion_auth_class``); this wrapper only imports it on first use, since
    authlib's rfc7523 pulls in joserfc and cryptography, which would slow every start."""

    def __init__(self, method: str, store: "Store"):
        self.method = method
        self.store = store
        self._impl = None
        self._lock = threading.Lock()

    def __call__(self, query_client, request):
        data = request.form
        if data.get("client_assertion_type") != JWT_ASSERTION_TYPE or not data.get("client_assertion"):
            return None
        with self._lock:
            if self._impl is None:
                self._impl = _assertion_auth_class()(self.method, self.store)
        return self._impl(query_client, request)


def _assertion_auth_class():
    from authlib.oauth2.rfc7523 import JWTBearerClientAssertion
    from joserfc.jwk import ECKey, OctKey, RSAKey

    class JWTClientAssertion(JWTBearerClientAssertion):
        """authlib's JWTBearerClientAssertion does the work (signature, iss = sub, aud, exp,
        jti present); this class says which key verifies, which audiences count and which
        jtis were seen."""

        def __init__(self, method: str, store: "Store"):
            super().__init__(validate_jti=True, leeway=60)
            self.CLIENT_AUTH_METHOD = method
            self.store = store

        def __call__(self, query_client, request):
            # Leave a client registered for the other JWT method to the other instance.
            _, claims = self.extract_assertion(request.form.get("client_assertion"))
            sub = claims.get("sub")
            client = query_client(sub) if isinstance(sub, str) else None
            if client is not None and client.token_endpoint_auth_method not in (None, self.CLIENT_AUTH_METHOD):
                return None
            return super().__call__(query_client, request)

        def get_audiences(self):
            # RFC 7523 section 3: the token endpoint URL or the issuer, as the client sees them
            origin = public_origin()
            return [f"{origin}/oauth/token", origin]

        def validate_jti(self, claims, jti):
            return self.store.use_jti(claims["sub"], jti, claims.get("exp"))

        def resolve_client_public_key(self, client):
            if client.token_endpoint_auth_method != self.CLIENT_AUTH_METHOD:
                raise InvalidClientError(
                    description=f"The client is not registered for {self.CLIENT_AUTH_METHOD}."
                )
            if self.CLIENT_AUTH_METHOD == "client_secret_jwt":
                return OctKey.import_key(client.client_secret)
            jwk = assertion_keys()[client.client_id]["public"]
            return RSAKey.import_key(jwk) if jwk["kty"] == "RSA" else ECKey.import_key(jwk)

    return JWTClientAssertion


def _store(grant) -> Store:
    return grant.server.store


def request_dpop_key() -> str | None:
    """The key thumbprint of the current token request's accepted DPoP proof, or None."""
    return g.get("dpop_jkt") if has_request_context() else None


def invalid_dpop_proof(description: str) -> OAuth2Error:
    """RFC 9449 section 5: the token endpoint's answer to a missing, bad or wrong-key proof."""
    return OAuth2Error(description=description, error="invalid_dpop_proof", status_code=400)


class TokenGenerator(BearerTokenGenerator):
    """authlib's bearer token generator; a request with an accepted DPoP proof gets
    ``token_type: DPoP`` (RFC 9449 section 5), the rest is unchanged."""

    def generate(self, *args, **kwargs):
        token = super().generate(*args, **kwargs)
        if request_dpop_key():
            token["token_type"] = "DPoP"
        return token


class ClientCredentialsGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS


class PasswordGrant(grants.ResourceOwnerPasswordCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS

    def authenticate_user(self, username, password):
        user = USERS.get(username)
        if user and hmac.compare_digest(user.password.encode(), password.encode()):
            return user
        # NOTE: authlib would answer invalid_request here; RFC 6749 section
        # 5.2 names invalid resource owner credentials as invalid_grant.
        raise InvalidGrantError("Invalid resource owner username or password.")


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS
    #: rotation: every refresh returns a new refresh token
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        # revoked (already rotated) or expired => None => invalid_grant
        view = _store(self).active_refresh(refresh_token)
        # RFC 9449 section 5: a refresh token bound to a DPoP key needs a proof of that key
        if view is not None and view.record.jkt and view.record.jkt != request_dpop_key():
            _store(self).refuse_dpop_binding(had_proof=request_dpop_key() is not None)
            raise invalid_dpop_proof("The refresh token is bound to another DPoP key, or the request has no proof.")
        return view

    def authenticate_user(self, refresh_token):
        return refresh_token.get_user()

    def revoke_old_credential(self, refresh_token):
        store = _store(self)
        if not store.consume_refresh(refresh_token.record):
            # lost a race against a concurrent use of the same refresh token:
            # withdraw what was just issued and refuse.
            issued = getattr(self.request, "issued_record", None)
            if issued is not None:
                store.revoke_record(issued)
            store.bump("refresh_reuse_detected")
            raise InvalidGrantError("Refresh token was already used.")


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS

    def save_authorization_code(self, code, request):
        data = request.payload.data
        rec = CodeRecord(
            code=code,
            client_id=request.client.get_client_id(),
            redirect_uri=request.payload.redirect_uri,
            scope=request.scope,
            user=request.user.username,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
            expires_at=time.time() + AUTH_CODE_LIFETIME,
        )
        _store(self).add_code(rec)

    def query_authorization_code(self, code, client):
        return _store(self).find_code(code, client.get_client_id())

    def delete_authorization_code(self, authorization_code):
        store = _store(self)
        if not store.take_code(authorization_code.code):
            issued = getattr(self.request, "issued_record", None)
            if issued is not None:
                store.revoke_record(issued)
            raise InvalidGrantError("Authorization code was already used.")

    def authenticate_user(self, authorization_code):
        return USERS.get(authorization_code.user)


class RequiredS256CodeChallenge(CodeChallenge):
    """PKCE is mandatory for every client and only S256 is accepted."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            # RFC 7636 section 4.4.1
            raise InvalidRequestError("Missing code_challenge: PKCE is required.")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256.")
        return super().validate_code_challenge(grant, redirect_uri)


class TokenExchangeGrant(BaseGrant, TokenEndpointMixin):
    """RFC 8693 token exchange (authlib ships no class for it).

    Accepted: subject_token + subject_token_type access_token, optional
    actor_token/actor_token_type (access_token), requested_token_type
    (access_token only), scope, audience (repeatable), resource (repeatable).
    Issued: an access token (no refresh token) for the requesting client,
    with the subject's ``sub``/user, ``aud`` from audience/resource and an
    ``act`` claim when an actor token was given.
    """

    GRANT_TYPE = TOKEN_EXCHANGE_GRANT
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def _active_token(self, name, required):
        """The active access token named by ``name``/``name_type``, or None."""
        value = self.request.form.get(name)
        type_name = f"{name}_type"
        token_type = self.request.form.get(type_name)
        if not value:
            if required:
                raise InvalidRequestError(f"Missing {name}.")
            if token_type:
                raise InvalidRequestError(f"{type_name} without {name}.")
            return None
        if not token_type:
            raise InvalidRequestError(f"Missing {type_name}.")
        if token_type != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError(
                f"Unsupported {type_name}: only {ACCESS_TOKEN_TYPE} is accepted."
            )
        view = _store(self).active_access(value)
        if view is None:
            # RFC 8693 section 2.2.2: invalid subject/actor token => invalid_request
            raise InvalidRequestError(f"The {name} is invalid, expired or revoked.")
        return view

    def validate_token_request(self):
        client = self.authenticate_token_endpoint_client()
        if not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError(
                f"The client is not authorized to use grant_type={self.GRANT_TYPE}"
            )
        self.request.client = client
        form = self.request.form

        requested = form.get("requested_token_type")
        if requested and requested != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError(
                f"Unsupported requested_token_type: only {ACCESS_TOKEN_TYPE} is issued."
            )
        subject = self._active_token("subject_token", required=True)
        actor = self._active_token("actor_token", required=False)

        # audience / resource => aud
        aud = []
        for a in form.getlist("audience"):
            if a not in KNOWN_AUDIENCES:
                raise _invalid_target(f"Unknown audience {a}.")
            aud.append(a)
        for r in form.getlist("resource"):
            gateway = self.server.gateway_url
            parts = urlsplit(r)
            if not parts.scheme or parts.fragment:
                raise InvalidRequestError("resource must be an absolute URI without fragment.")
            if not gateway or not r.startswith(gateway):
                raise _invalid_target(f"Unknown resource {r}.")
            aud.append(r)

        # scope: a subset of the subject token's scope (and of the client's)
        self.validate_requested_scope()  # known scope values (server level)
        subject_scopes = scope_to_list(subject.get_scope()) or []
        scope = self.request.payload.scope
        if scope:
            if not set(scope_to_list(scope)).issubset(subject_scopes):
                raise InvalidScopeError("Requested scope exceeds the subject token scope.")
        else:
            scope = " ".join(s for s in subject_scopes if s in client.allowed_scopes)
            if not scope:
                raise InvalidScopeError("No scope of the subject token is allowed for this client.")

        act = None
        if actor is not None:
            act = {"sub": actor.record.sub}
            if actor.record.act:
                act["act"] = actor.record.act
        elif subject.record.act:
            act = subject.record.act

        self.request.user = subject.get_user()
        self.request.exchange = {
            "sub": subject.record.sub,
            "aud": aud,
            "act": act,
            "scope": scope,
        }

    def create_token_response(self):
        ex = self.request.exchange
        token = self.generate_token(
            user=self.request.user, scope=ex["scope"], include_refresh_token=False
        )
        token["issued_token_type"] = ACCESS_TOKEN_TYPE
        self.save_token(token)
        return 200, token, self.TOKEN_RESPONSE_HEADER


def _invalid_target(description):
    # RFC 8693 section 2.2.2; authlib has no class for this error code
    return OAuth2Error(description=description, error="invalid_target")


class IntrospectionEndpoint(_IntrospectionEndpoint):
    # authlib default is client_secret_basic only
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def query_token(self, token_string, token_type_hint):
        return self.server.store.lookup(token_string, token_type_hint)

    def check_permission(self, token, client, request):
        # the gateway (resource server) may introspect anything; other
        # clients only their own tokens (others read as active=false)
        return client.introspect_any or token.check_client(client)

    def introspect_token(self, token):
        rec = token.record
        payload = {
            "active": True,
            "client_id": rec.client_id,
            "scope": rec.scope,
            "sub": rec.sub,
            "iat": int(rec.issued_at),
            "nbf": int(rec.issued_at),
            "iss": self.server.issuer,
        }
        if token.kind == "access_token":
            payload["token_type"] = "DPoP" if rec.jkt else "Bearer"
            payload["exp"] = int(rec.expires_at)
        elif rec.refresh_expires_at is not None:
            payload["exp"] = int(rec.refresh_expires_at)
        if rec.user:
            payload["username"] = rec.user
        if rec.aud:
            payload["aud"] = rec.aud[0] if len(rec.aud) == 1 else list(rec.aud)
        if rec.act:
            payload["act"] = rec.act
        cnf = {}
        if rec.jkt:
            # RFC 9449 section 6.2: the confirmation of the key the token is bound to
            cnf["jkt"] = rec.jkt
        if rec.x5t and token.kind == "access_token":
            # RFC 8705 section 3.2: the certificate the access token is bound to
            cnf["x5t#S256"] = rec.x5t
        if cnf:
            payload["cnf"] = cnf
        return payload


class RevocationEndpoint(_RevocationEndpoint):
    # authlib default is client_secret_basic only; public clients revoke
    # with client_id alone (RFC 7009 section 2.1 / 5)
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none", *JWT_METHODS]

    def query_token(self, token_string, token_type_hint):
        return self.server.store.lookup(token_string, token_type_hint)

    def revoke_token(self, token, request):
        n = self.server.store.revoke(token)
        self.server.store.bump("tokens_revoked", n=n)


# --------------------------------------------------------------------------
# Flask application
# --------------------------------------------------------------------------


def create_app(store: Store, issuer: str, gateway_url: str | None = None) -> Flask:
    app = Flask("courier_oauth_as")
    app.config["OAUTH2_SCOPES_SUPPORTED"] = SCOPES
    app.json.sort_keys = False

    def query_client(client_id):
        return CLIENTS.get(client_id)

    def save_token(token, req):
        now = time.time()
        client = req.client
        user = req.user
        grant_type = req.payload.grant_type
        ex = getattr(req, "exchange", None)
        expires_in = token.get("expires_in") or store.token_lifetime
        has_refresh = "refresh_token" in token
        rec = TokenRecord(
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            client_id=client.get_client_id(),
            user=user.username if user else None,
            sub=(ex["sub"] if ex else (user.username if user else client.get_client_id())),
            scope=token.get("scope", ""),
            grant_type=grant_type,
            issued_at=now,
            expires_at=now + expires_in,
            refresh_expires_at=(
                now + store.refresh_lifetime if has_refresh and store.refresh_lifetime else None
            ),
            aud=list(ex["aud"]) if ex else [],
            act=ex["act"] if ex else None,
            code=(req.authorization_code.code if req.authorization_code else None),
            jkt=request_dpop_key(),
            x5t=client_certificate_thumbprint(),
        )
        store.add_token(rec)
        req.issued_record = rec

    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.store = store
    server.issuer = issuer
    server.gateway_url = gateway_url

    # authlib's BearerTokenGenerator with a live lifetime (admin can change it)
    server.register_token_generator(
        "default",
        TokenGenerator(
            access_token_generator=lambda **kw: generate_token(42),
            refresh_token_generator=lambda **kw: generate_token(48),
            expires_generator=lambda client, grant_type: store.token_lifetime,
        ),
    )
    server.register_grant(ClientCredentialsGrant)
    server.register_grant(PasswordGrant)
    server.register_grant(RefreshTokenGrant)
    server.register_grant(AuthorizationCodeGrant, [RequiredS256CodeChallenge(required=True)])
    server.register_grant(TokenExchangeGrant)
    server.register_endpoint(IntrospectionEndpoint)
    server.register_endpoint(RevocationEndpoint)
    for method in JWT_METHODS:
        server.register_client_auth_method(method, ClientAssertionAuth(method, store))

    # ---- OAuth endpoints -----------------------------------------------------

    def drop_connection():
        # Close the connection without a status line: werkzeug's write then fails with a
        # ConnectionError, which it (and server.Server.handle_error) treats as a dropped client.
        sock = request.environ.get("werkzeug.socket")
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return Response(b"", status=503)

    def fault_response(fault):
        status = int(fault["mode"])
        resp = Response(f"token endpoint fault: {status}\n", status=status, mimetype="text/plain")
        if fault["retry_after"] is not None:
            if fault["retry_after_form"] == "date":
                resp.headers["Retry-After"] = email.utils.formatdate(
                    math.ceil(time.time() + fault["retry_after"]), usegmt=True
                )
            else:
                resp.headers["Retry-After"] = str(fault["retry_after"])
        return resp

    def dpop_refusal(error: str, description: str) -> Response:
        resp = jsonify({"error": error, "error_description": description})
        resp.status_code = 400
        resp.headers["Cache-Control"] = "no-store"
        resp.headers["Pragma"] = "no-cache"
        return resp

    def check_dpop_proof() -> Response | None:
        """RFC 9449 section 5: checks the token request's DPoP proof.  None lets the request
        through (g.dpop_jkt names the proof's key, or is None without a proof); otherwise the
        400 answer (invalid_dpop_proof, or use_dpop_nonce when the nonce is missing)."""
        g.dpop_jkt = None
        proofs = request.headers.getlist("DPoP")
        with store.lock:
            settings = dict(store.dpop_settings)
        if not proofs:
            if settings["require"]:
                store.bump_dpop("proofs_refused")
                return dpop_refusal("invalid_dpop_proof", "a DPoP proof is required")
            return None
        if len(proofs) > 1:
            store.bump_dpop("proofs_refused")
            return dpop_refusal("invalid_dpop_proof", "The request has more than one DPoP header.")
        url = public_origin() + request_target_path()
        nonces = store.dpop_nonces.accepted() if settings["nonce"] else None
        try:
            proof = dpop.verify_proof(proofs[0], method=request.method, url=url, nonces=nonces)
        except dpop.NonceRequired:
            store.bump_dpop("nonce_challenges")
            return dpop_refusal("use_dpop_nonce", "Authorization server requires nonce in DPoP proof")
        except dpop.ProofError as e:
            store.bump_dpop("proofs_refused")
            return dpop_refusal("invalid_dpop_proof", str(e))
        if not store.dpop_replays.use(proof.jti, proof.iat):
            store.bump_dpop("proofs_refused")
            return dpop_refusal("invalid_dpop_proof", "The proof's jti was used before.")
        store.bump_dpop("proofs_accepted")
        g.dpop_jkt = proof.jkt
        return None

    @app.post("/oauth/token")
    def token_endpoint():
        fault = store.note_token_request()
        if fault["mode"] == "down":
            store.bump("token_faults")
            return drop_connection()
        if fault["mode"] in ("429", "503"):
            store.bump("token_faults")
            return fault_response(fault)
        if fault["mode"] == "slow":
            time.sleep(fault["delay_ms"] / 1000)
        resp = check_dpop_proof() or server.create_token_response()
        if store.dpop_settings["nonce"]:
            resp.headers["DPoP-Nonce"] = store.dpop_nonces.current()
        grant_type = request.values.get("grant_type") or "(none)"
        if resp.status_code == 200:
            store.bump("grants", grant_type)
            store.bump("grants_total")
        else:
            store.bump("failed_grants")
            store.bump("failed_grants_by_grant_type", grant_type)
            err = (resp.get_json(silent=True) or {}).get("error", "unknown")
            store.bump("failed_grants_by_error", err)
        return resp

    @app.get("/oauth/authorize")
    def authorize_endpoint():
        # Test convenience: no login page.  The resource owner is named by
        # ?user=NAME or ?login_hint=NAME and consent is automatic.  No/unknown
        # user => access_denied redirect.
        name = request.args.get("user") or request.args.get("login_hint")
        user = USERS.get(name) if name else None
        try:
            grant = server.get_consent_grant(end_user=user)
        except OAuth2Error as error:
            store.bump("authorization_errors")
            return server.handle_error_response(None, error)
        resp = server.create_authorization_response(grant=grant, grant_user=user)
        loc = resp.headers.get("Location", "")
        if resp.status_code == 302 and "code=" in loc and "error=" not in loc:
            store.bump("authorizations")
        else:
            store.bump("authorization_errors")
        return resp

    @app.post("/oauth/introspect")
    def introspect_endpoint():
        resp = server.create_endpoint_response(IntrospectionEndpoint.ENDPOINT_NAME)
        if resp.status_code == 200:
            store.bump("introspections")
            active = bool((resp.get_json(silent=True) or {}).get("active"))
            store.bump("introspections_active" if active else "introspections_inactive")
        else:
            store.bump("introspection_errors")
        return resp

    @app.post("/oauth/revoke")
    def revoke_endpoint():
        resp = server.create_endpoint_response(RevocationEndpoint.ENDPOINT_NAME)
        store.bump("revocations" if resp.status_code == 200 else "revocation_errors")
        return resp

    def metadata_document(openid: bool):
        with store.lock:
            override = dict(store.metadata_override)
            store.stats["metadata_requests"] += 1
            by_path = store.stats["metadata_requests_by_path"]
            by_path[request.path] = by_path.get(request.path, 0) + 1
        # RFC 8414 section 3.2: the issuer is the URL the client used (behind the TLS front,
        # its https origin), unless admin/metadata says otherwise.
        origin = public_origin()
        base = override["endpoint_origin"] or origin
        document = {
            "issuer": override["issuer"] or origin,
            "authorization_endpoint": f"{base}/oauth/authorize",
            "token_endpoint": f"{base}/oauth/token",
            "introspection_endpoint": f"{base}/oauth/introspect",
            "revocation_endpoint": f"{base}/oauth/revoke",
            "scopes_supported": SCOPES,
            "response_types_supported": ["code"],
            "grant_types_supported": [
                "authorization_code",
                "client_credentials",
                "password",
                "refresh_token",
                TOKEN_EXCHANGE_GRANT,
            ],
            "token_endpoint_auth_methods_supported": TOKEN_AUTH_METHODS,
            "token_endpoint_auth_signing_alg_values_supported": ["RS256", "ES256", "HS256"],
            "introspection_endpoint_auth_methods_supported": list(CONFIDENTIAL_METHODS),
            "revocation_endpoint_auth_methods_supported": TOKEN_AUTH_METHODS,
            "code_challenge_methods_supported": ["S256"],
            "dpop_signing_alg_values_supported": list(dpop.ALGORITHMS),
            # RFC 8705 section 3.3: a token requested with a client certificate is bound to it
            "tls_client_certificate_bound_access_tokens": True,
        }
        if override["mtls_origin"]:
            # RFC 8705 section 5: where clients that authenticate their connection go
            mtls = override["mtls_origin"]
            document["mtls_endpoint_aliases"] = {
                "token_endpoint": f"{mtls}/oauth/token",
                "revocation_endpoint": f"{mtls}/oauth/revoke",
                "introspection_endpoint": f"{mtls}/oauth/introspect",
            }
        if openid:
            document["subject_types_supported"] = ["public"]
        resp = jsonify(document)
        resp.headers["Cache-Control"] = f"max-age={override['max_age']}"
        return resp

    @app.get("/.well-known/oauth-authorization-server")
    def metadata():
        if not store.metadata_override["oauth_metadata"]:
            with store.lock:
                store.stats["metadata_requests"] += 1
            return jsonify({"error": "not_found", "path": request.path}), 404
        return metadata_document(openid=False)

    @app.get("/.well-known/openid-configuration")
    def openid_configuration():
        return metadata_document(openid=True)

    @app.get("/healthz")
    def healthz():
        return jsonify({"ok": True, "role": "authorization-server"})

    # ---- admin (loopback only, no auth) --------------------------------------

    @app.before_request
    def admin_loopback_only():
        if request.path.startswith("/admin/") and not is_loopback(request.remote_addr):
            return jsonify({"error": "forbidden"}), 403
        return None

    @app.get("/admin/stats")
    def admin_stats():
        return jsonify(store.snapshot())

    @app.post("/admin/reset")
    def admin_reset():
        store.reset_stats()
        return jsonify({"reset": True})

    @app.post("/admin/expire-all")
    def admin_expire_all():
        return jsonify({"expired": store.expire_all()})

    @app.route("/admin/lifetime", methods=["GET", "POST"])
    def admin_lifetime():
        if request.method == "POST":
            for key, attr in (("seconds", "token_lifetime"), ("refresh_seconds", "refresh_lifetime")):
                raw = request.values.get(key)
                if raw is None:
                    continue
                try:
                    value = int(raw)
                except ValueError:
                    return jsonify({"error": "invalid_request", "error_description": f"{key} must be an integer"}), 400
                if value < (1 if key == "seconds" else 0):
                    return jsonify({"error": "invalid_request", "error_description": f"{key} out of range"}), 400
                with store.lock:
                    setattr(store, attr, value if (value or key == "seconds") else None)
        return jsonify({"token_lifetime": store.token_lifetime, "refresh_lifetime": store.refresh_lifetime})

    @app.route("/admin/token-fault", methods=["GET", "POST"])
    def admin_token_fault():
        if request.method == "POST":
            mode = request.values.get("mode", "none")
            if mode not in ("none", "down", "slow", "429", "503"):
                return jsonify({"error": "invalid_request", "error_description": "unknown mode"}), 400
            numbers = {}
            for key, default in (("retry_after", None), ("delay_ms", 1000 if mode == "slow" else 0)):
                raw = request.values.get(key)
                if raw is None:
                    numbers[key] = default
                    continue
                try:
                    numbers[key] = int(raw)
                except ValueError:
                    return jsonify({"error": "invalid_request", "error_description": f"{key} must be an integer"}), 400
                if numbers[key] < 0:
                    return jsonify({"error": "invalid_request", "error_description": f"{key} out of range"}), 400
            form = request.values.get("retry_after_form", "seconds")
            if form not in ("seconds", "date"):
                return jsonify({"error": "invalid_request", "error_description": "retry_after_form"}), 400
            with store.lock:
                store.token_fault = {
                    "mode": mode,
                    "retry_after": numbers["retry_after"],
                    "retry_after_form": form,
                    "delay_ms": numbers["delay_ms"],
                }
        with store.lock:
            return jsonify(store.token_fault)

    @app.get("/admin/client-keys")
    def admin_client_keys():
        # the private keys of the private_key_jwt clients (made at start, test use only)
        return jsonify(assertion_keys())

    @app.route("/admin/metadata", methods=["GET", "POST"])
    def admin_metadata():
        if request.method == "POST":
            update = dict(METADATA_DEFAULTS)  # every POST starts from the truth
            for key in ("issuer", "endpoint_origin", "mtls_origin"):
                update[key] = request.values.get(key) or None
            raw = request.values.get("max_age")
            if raw is not None:
                try:
                    update["max_age"] = int(raw)
                except ValueError:
                    return jsonify({"error": "invalid_request", "error_description": "max_age must be an integer"}), 400
            update["oauth_metadata"] = request.values.get("oauth_metadata", "on") != "off"
            with store.lock:
                store.metadata_override = update
        with store.lock:
            return jsonify(store.metadata_override)

    @app.route("/admin/dpop", methods=["GET", "POST"])
    def admin_dpop():
        # {"require": bool, "nonce": bool}, each optional (missing = unchanged)
        if request.method == "POST":
            body = request.get_json(silent=True)
            if body is None:
                body = {k: request.values[k].lower() in ("1", "true", "on", "yes")
                        for k in ("require", "nonce") if k in request.values}
            if not isinstance(body, dict) or any(
                k in body and not isinstance(body[k], bool) for k in ("require", "nonce")
            ):
                return jsonify({"error": "invalid_request", "error_description": "require and nonce must be booleans"}), 400
            with store.lock:
                for key in ("require", "nonce"):
                    if key in body:
                        store.dpop_settings[key] = body[key]
        return jsonify(store.dpop_snapshot())

    @app.get("/admin/token-requests")
    def admin_token_requests():
        with store.lock:
            times = list(store.token_request_times)
        return jsonify({"count": len(times), "times": times, "now": time.time()})

    install_json_errors(app)
    return app
