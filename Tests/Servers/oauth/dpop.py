"""DPoP (RFC 9449) proof checking for the authorization server and the gateway.

authlib has no DPoP support, so the checks of RFC 9449 section 4.3 are written here;
the JWS signature itself is verified by joserfc.  Three pieces:

* ``verify_proof`` checks one proof JWT against one HTTP request and returns the
  checked ``Proof`` (its key thumbprint ``jkt``, ``jti``, ``iat``, ``nonce``), or raises
  ``ProofError`` (answer ``invalid_dpop_proof``) or ``NonceRequired`` (answer
  ``use_dpop_nonce``).  Its ``now`` parameter sets the clock (the RFC's examples are
  checked at their own ``iat`` by selftest.py).
* ``ReplayCache`` remembers accepted ``jti`` values for the ``iat`` window, bounded in
  size, so a proof is accepted once.
* ``NonceSource`` hands out server nonces (RFC 9449 section 8/9) that rotate; the
  current and the previous nonce are accepted.

``jwk_thumbprint`` is RFC 7638 (EC, RSA and OKP keys); ``access_token_hash`` is the
``ath`` claim's value.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

#: the only signature algorithm a proof may use (the contract with the client)
ALGORITHMS = ("ES256",)
#: how far a proof's ``iat`` may be from the server's clock, either way, in seconds
IAT_WINDOW = 60
#: the longest ``jti`` accepted (a guard against huge cache entries)
MAX_JTI_LENGTH = 256
#: the longest proof accepted, in characters
MAX_PROOF_LENGTH = 8192

#: JWK members that carry private key material (RFC 7518 sections 6.2.2, 6.3.2, 6.4; RFC 8037)
PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
#: RFC 7638 section 3.2: the required members of each key type, in lexicographic order
THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}

_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class ProofError(Exception):
    """The proof is missing, malformed, or does not match the request: ``invalid_dpop_proof``."""

    error = "invalid_dpop_proof"


class ReplayedProof(ProofError):
    """The proof's ``jti`` was accepted before (a replay): ``invalid_dpop_proof``."""


class NonceRequired(Exception):
    """The proof lacks the server's current nonce: ``use_dpop_nonce`` with a fresh ``DPoP-Nonce``."""

    error = "use_dpop_nonce"


@dataclass(frozen=True)
class Proof:
    """A proof that passed every check of ``verify_proof``."""

    header: dict
    claims: dict
    jwk: dict
    jkt: str
    jti: str
    iat: int
    nonce: str | None


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 7515 section 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict base64url without padding: any other character is an error."""
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as e:
        raise ValueError("not base64url") from e


def jwk_thumbprint(jwk: dict) -> str:
    """RFC 7638 JWK SHA-256 thumbprint: the required members only, sorted, no whitespace."""
    members = THUMBPRINT_MEMBERS.get(jwk.get("kty"))
    if members is None:
        raise ValueError(f"no thumbprint for kty {jwk.get('kty')!r}")
    if any(not isinstance(jwk.get(m), str) for m in members):
        raise ValueError("JWK lacks a required member")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), ensure_ascii=False)
    return b64url_encode(hashlib.sha256(canonical.encode("utf-8")).digest())


def access_token_hash(access_token: str) -> str:
    """The ``ath`` claim: base64url of SHA-256 of the ASCII access token (RFC 9449 section 4.2)."""
    return b64url_encode(hashlib.sha256(access_token.encode("ascii", "strict")).digest())


def _normalize_path(path: str) -> str:
    """RFC 3986 section 6.2.2: percent-encoded unreserved characters decoded, the rest
    with upper-case hex digits; an empty path is ``/``."""

    def fix(match):
        char = chr(int(match.group(0)[1:], 16))
        return char if char in _UNRESERVED else match.group(0).upper()

    return _PERCENT.sub(fix, path) or "/"


def normalize_htu(uri: str) -> str:
    """The form in which two ``htu`` values are compared (RFC 9449 section 4.3 item 9):
    scheme and host lower-cased, the scheme's default port removed, query and fragment
    dropped, the path normalised by ``_normalize_path``."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("htu must be an absolute http(s) URI")
    if parts.username is not None or parts.password is not None:
        raise ValueError("htu must not carry user information")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port  # raises ValueError for a bad port
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return f"{scheme}://{netloc}{_normalize_path(parts.path)}"


def _json_object(segment: str, what: str) -> dict:
    try:
        value = json.loads(b64url_decode(segment))
    except (ValueError, UnicodeDecodeError) as e:
        raise ProofError(f"The proof's {what} is not base64url JSON.") from e
    if not isinstance(value, dict):
        raise ProofError(f"The proof's {what} is not a JSON object.")
    return value


def verify_proof(
    proof: str,
    *,
    method: str,
    url: str,
    access_token: str | None = None,
    nonces: tuple[str, ...] | list[str] | None = None,
    now: float | None = None,
    iat_window: int = IAT_WINDOW,
) -> Proof:
    """Checks a DPoP proof (RFC 9449 section 4.3) against the request it came with.

    ``method`` and ``url`` are the request's; ``access_token``, when given, must match the
    ``ath`` claim (resource requests); ``nonces``, when given, are the nonces the server
    accepts now, and a proof without one of them raises ``NonceRequired``.  Replay is not
    checked here: the caller puts the returned ``jti`` into a ``ReplayCache``.
    """
    now = time.time() if now is None else now
    if not isinstance(proof, str) or not proof or len(proof) > MAX_PROOF_LENGTH:
        raise ProofError("The DPoP header is empty or too long.")
    segments = proof.split(".")
    if len(segments) != 3 or not all(segments):
        raise ProofError("The proof is not a JWS in compact serialization.")
    header = _json_object(segments[0], "header")
    claims = _json_object(segments[1], "payload")

    # header: typ, alg, jwk (RFC 9449 section 4.3 items 4-7)
    if header.get("typ") != "dpop+jwt":
        raise ProofError('The proof\'s typ is not "dpop+jwt".')
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise ProofError(f"The proof's alg {alg!r} is not one of {', '.join(ALGORITHMS)}.")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict):
        raise ProofError("The proof's header has no jwk.")
    if PRIVATE_MEMBERS & set(jwk):
        raise ProofError("The proof's jwk contains private key members.")
    if jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        raise ProofError("The proof's jwk is not an EC P-256 key, which ES256 needs.")
    if "crit" in header:
        raise ProofError("The proof's header has crit parameters this server does not understand.")

    # signature, by joserfc, with the key from the header
    from joserfc import jws
    from joserfc.errors import JoseError
    from joserfc.jwk import ECKey

    try:
        key = ECKey.import_key({"kty": "EC", "crv": "P-256", "x": jwk.get("x"), "y": jwk.get("y")})
        jws.deserialize_compact(proof, key, algorithms=list(ALGORITHMS))
    except (JoseError, ValueError, TypeError) as e:
        raise ProofError(f"The proof's signature does not verify with its jwk ({type(e).__name__}).") from e
    try:
        jkt = jwk_thumbprint(jwk)
    except ValueError as e:
        raise ProofError(str(e)) from e

    # claims (items 8-12)
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI_LENGTH:
        raise ProofError("The proof's jti is missing or not a string of at most 256 characters.")
    htm = claims.get("htm")
    if htm != method:
        raise ProofError(f"The proof's htm {htm!r} is not the request's method {method}.")
    htu = claims.get("htu")
    try:
        matches = isinstance(htu, str) and normalize_htu(htu) == normalize_htu(url)
    except ValueError:
        matches = False
    if not matches:
        raise ProofError(f"The proof's htu {htu!r} is not the request's URI {url}.")
    iat = claims.get("iat")
    if not isinstance(iat, int) or isinstance(iat, bool):
        raise ProofError("The proof's iat is missing or not an integer.")
    if abs(now - iat) > iat_window:
        raise ProofError(f"The proof's iat is more than {iat_window} s from the server's clock.")
    if access_token is not None:
        ath = claims.get("ath")
        try:
            expected = access_token_hash(access_token)
        except UnicodeEncodeError:
            expected = None
        if not isinstance(ath, str) or ath != expected:
            raise ProofError("The proof's ath does not match the access token.")
    nonce = claims.get("nonce")
    if nonces is not None and (not isinstance(nonce, str) or nonce not in nonces):
        raise NonceRequired("The proof must carry the server's current nonce.")
    return Proof(header=header, claims=claims, jwk=jwk, jkt=jkt, jti=jti, iat=iat,
                 nonce=nonce if isinstance(nonce, str) else None)


class ReplayCache:
    """The ``jti`` of every accepted proof, kept until its ``iat`` window has passed (a
    proof outside the window is refused anyway), and at most ``capacity`` of them: when
    full, the entry nearest to expiry goes first (counted in ``evicted``).  Thread-safe."""

    def __init__(self, window: int = IAT_WINDOW, capacity: int = 100_000):
        self.window = window
        self.capacity = capacity
        self.evicted = 0
        self._lock = threading.Lock()
        self._until: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []  # (until, jti), earliest first

    def use(self, jti: str, iat: int, now: float | None = None) -> bool:
        """Records ``jti``; False if it is already there (a replay)."""
        now = time.time() if now is None else now
        until = max(now, float(iat)) + self.window + 1
        with self._lock:
            while self._heap and self._heap[0][0] <= now:
                self._drop_earliest()
            if jti in self._until:
                return False
            while len(self._until) >= self.capacity and self._heap:
                self._drop_earliest()
                self.evicted += 1
            self._until[jti] = until
            heapq.heappush(self._heap, (until, jti))
            return True

    def _drop_earliest(self) -> None:
        until, jti = heapq.heappop(self._heap)
        if self._until.get(jti) == until:
            del self._until[jti]

    def __len__(self) -> int:
        with self._lock:
            return len(self._until)

    def clear(self) -> None:
        with self._lock:
            self._until.clear()
            self._heap.clear()


class NonceSource:
    """Server nonces (RFC 9449 section 8): a fresh random value every ``lifetime`` seconds;
    the current one and the one before are accepted.  Thread-safe."""

    def __init__(self, lifetime: float = 120.0):
        self.lifetime = lifetime
        self._lock = threading.Lock()
        self._current = secrets.token_urlsafe(24)
        self._previous: str | None = None
        self._since = time.monotonic()

    def _rotate_if_old(self) -> None:
        if time.monotonic() - self._since >= self.lifetime:
            self._previous, self._current = self._current, secrets.token_urlsafe(24)
            self._since = time.monotonic()

    def current(self) -> str:
        """The nonce to hand out now."""
        with self._lock:
            self._rotate_if_old()
            return self._current

    def accepted(self) -> tuple[str, ...]:
        """The nonces a proof may carry now."""
        with self._lock:
            self._rotate_if_old()
            return (self._current,) if self._previous is None else (self._current, self._previous)
