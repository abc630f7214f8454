#!/usr/bin/env python3
"""End-to-end self test of the Courier OAuth test servers (stdlib only).

    python3 Tests/Servers/oauth/selftest.py            # spawns server.py itself
    python3 Tests/Servers/oauth/selftest.py --stress 1000 -v

It starts ``server.py --port 0 --gateway-port 0 --token-lifetime 3`` with a
pipe on stdin, waits for ``READY``, exercises every grant and endpoint over
real HTTP, then closes stdin and checks that the process is gone.  The last
line is ``N passed, N failed``; the exit status is 0 only if nothing failed.

Reading it top to bottom is also the quickest way to see how each endpoint
is meant to be called.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client as httpclient
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, quote, urlencode, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.py")

EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
AT_TYPE = "urn:ietf:params:oauth:token-type:access_token"

PASSED = 0
FAILED = 0
VERBOSE = False


def check(name, cond, detail=""):
    global PASSED, FAILED
    if cond:
        PASSED += 1
        if VERBOSE:
            print(f"ok   {name}")
    else:
        FAILED += 1
        print(f"FAIL {name} {detail}")
    return cond


class Resp:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-cased names
        self.body = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"<{self.status} {self.body[:300]!r}>"


def http(method, url, form=None, headers=None, basic=None, bearer=None, raw=None, timeout=30):
    parts = urlsplit(url)
    conn = httpclient.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    hdrs = dict(headers or {})
    body = raw
    if form is not None:
        body = urlencode(form, doseq=True).encode()
        hdrs.setdefault("Content-Type", "application/x-www-form-urlencoded")
    if basic is not None:
        hdrs["Authorization"] = "Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode()
    if bearer is not None:
        hdrs["Authorization"] = f"Bearer {bearer}"
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        data = r.read()
        return Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        conn.close()


def pkce_pair():
    verifier = secrets.token_urlsafe(48)  # 64 chars of [A-Za-z0-9-_]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class Servers:
    def __init__(self, extra_args=(), port=0, gateway_port=0):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, SERVER, "--port", str(port), "--gateway-port", str(gateway_port), *extra_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if not VERBOSE else None,
            text=True,
        )
        self.as_url = self.gw_url = None
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("LISTENING"):
                kv = dict(p.split("=", 1) for p in line.split()[1:])
                self.as_url, self.gw_url = kv["as"], kv["gateway"]
            if line == "READY":
                break
        self.startup = time.monotonic() - self.t0
        if self.as_url is None:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise SystemExit(f"server did not start: {err}")

    def close_stdin_and_wait(self, timeout=5.0):
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


# ------------------------------------------------------------------ DPoP (RFC 9449)
# The client half, for these tests only: P-256 keys and ES256 proofs made with joserfc
# (authlib's own JOSE library, so it is installed with the servers).

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DPoPKey:
    """A DPoP key pair and the proofs it signs."""

    def __init__(self):
        from joserfc.jwk import ECKey

        self.key = ECKey.generate_key("P-256")
        full = self.key.as_dict(private=False)
        self.public = {k: full[k] for k in ("kty", "crv", "x", "y")}
        canonical = json.dumps({k: self.public[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
        self.jkt = b64url(hashlib.sha256(canonical.encode()).digest())

    def proof(self, method, url, token=None, nonce=None, iat=None, jti=None, header=None, claims=None, alg="ES256"):
        from joserfc import jws

        body = {"jti": jti or secrets.token_urlsafe(16), "htm": method, "htu": url.split("?")[0],
                "iat": int(time.time()) if iat is None else iat}
        if token is not None:
            body["ath"] = b64url(hashlib.sha256(token.encode()).digest())
        if nonce is not None:
            body["nonce"] = nonce
        body.update(claims or {})
        protected = {"typ": "dpop+jwt", "alg": alg, "jwk": self.public, **(header or {})}
        return jws.serialize_compact(protected, json.dumps(body).encode(), self.key, algorithms=[alg])


def unsigned_proof(header, claims, signature=b""):
    """A proof put together by hand (alg none, HMAC, broken signatures)."""
    return ".".join([b64url(json.dumps(header).encode()), b64url(json.dumps(claims).encode()), b64url(signature)])


# RFC 9449 section 4.1 (Figure 3, a token request) and section 7.1 (Figure 13, a resource
# request with ath): the RFC's own example proofs, signed by its example key.
RFC9449_TOKEN_PROOF = (
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJo"
    "RjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
    ".eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaW"
    "F0IjoxNTYyMjYyNjE2fQ"
    ".2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"
)
RFC9449_RESOURCE_PROOF = (
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJo"
    "RjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
    ".eyJqdGkiOiJlMWozVl9iS2ljOC1MQUVCIiwiaHRtIjoiR0VUIiwiaHR1IjoiaHR0cHM6Ly9yZXNvdXJjZS5leGFtcGxlLm9yZy9wcm90ZWN0ZW"
    "RyZXNvdXJjZSIsImlhdCI6MTU2MjI2MjYxOCwiYXRoIjoiZlVIeU8ycjJaM0RaNTNFc05yV0JiMHhXWG9hTnk1OUlpS0NBcWtzbVFFbyJ9"
    ".2oW9RP35yRqzhrtNP86L-Ey71EOptxRimPPToA1plemAgR6pxHF8y6-yqyVnmcw6Fy1dqd-jfxSYoMxhAJpLjA"
)
RFC9449_ACCESS_TOKEN = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
RFC9449_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
# RFC 7638 section 3.1: an RSA key and its thumbprint
RFC7638_JWK = {
    "kty": "RSA",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs"
         "tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL"
         "5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}
RFC7638_THUMBPRINT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def dpop_vectors():
    """The verifier (dpop.py) and the independent one (pydpop) on the RFCs' examples."""
    sys.path.insert(0, HERE)
    import dpop

    def refused(name, fn, error=dpop.ProofError):
        try:
            fn()
            check(name, False, "accepted")
        except error:
            check(name, True)

    token_url, resource_url = "https://server.example.com/token", "https://resource.example.org/protectedresource"
    p = dpop.verify_proof(RFC9449_TOKEN_PROOF, method="POST", url=token_url, now=1562262616)
    check("RFC 9449 4.1 example proof verifies", p.jkt == RFC9449_JKT and p.jti == "-BwC3ESc6acc2lTc", p)
    p = dpop.verify_proof(RFC9449_TOKEN_PROOF, method="POST", url="HTTPS://Server.Example.COM:443/token?x=1", now=1562262676)
    check("RFC 9449 4.1 proof: htu normalised (case, default port, query), iat + 60 s", p.jkt == RFC9449_JKT, p)
    refused("RFC 9449 4.1 proof 61 s later refused",
            lambda: dpop.verify_proof(RFC9449_TOKEN_PROOF, method="POST", url=token_url, now=1562262677))
    refused("RFC 9449 4.1 proof for GET refused",
            lambda: dpop.verify_proof(RFC9449_TOKEN_PROOF, method="GET", url=token_url, now=1562262616))
    refused("RFC 9449 4.1 proof for another URI refused",
            lambda: dpop.verify_proof(RFC9449_TOKEN_PROOF, method="POST", url=token_url + "2", now=1562262616))
    p = dpop.verify_proof(RFC9449_RESOURCE_PROOF, method="GET", url=resource_url,
                          access_token=RFC9449_ACCESS_TOKEN, now=1562262618)
    check("RFC 9449 7.1 example proof verifies with its ath", p.jkt == RFC9449_JKT
          and p.claims["ath"] == dpop.access_token_hash(RFC9449_ACCESS_TOKEN), p)
    refused("RFC 9449 7.1 proof with another access token refused",
            lambda: dpop.verify_proof(RFC9449_RESOURCE_PROOF, method="GET", url=resource_url,
                                      access_token=RFC9449_ACCESS_TOKEN + "x", now=1562262618))
    refused("RFC 9449 7.1 proof without the nonce asked for -> use_dpop_nonce",
            lambda: dpop.verify_proof(RFC9449_RESOURCE_PROOF, method="GET", url=resource_url,
                                      nonces=("n1",), now=1562262618), dpop.NonceRequired)
    head, claims, sig = RFC9449_RESOURCE_PROOF.split(".")
    tampered = f"{head}.{claims}.{sig[:-2]}{'AA' if sig[-2:] != 'AA' else 'BA'}"
    refused("RFC 9449 7.1 proof with a changed signature refused",
            lambda: dpop.verify_proof(tampered, method="GET", url=resource_url, now=1562262618))
    check("RFC 7638 3.1 thumbprint", dpop.jwk_thumbprint(RFC7638_JWK) == RFC7638_THUMBPRINT)
    check("RFC 9449 ath of the example token", dpop.access_token_hash(RFC9449_ACCESS_TOKEN)
          == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
    key = DPoPKey()
    base = {"jti": "j", "htm": "GET", "htu": resource_url, "iat": 1562262618}
    for name, proof in [
        ("alg none", unsigned_proof({"typ": "dpop+jwt", "alg": "none", "jwk": key.public}, base)),
        ("alg HS256", unsigned_proof({"typ": "dpop+jwt", "alg": "HS256", "jwk": key.public}, base, b"x" * 32)),
        ("typ JWT", key.proof("GET", resource_url, iat=1562262618, header={"typ": "JWT"})),
        ("a private key in jwk", key.proof("GET", resource_url, iat=1562262618,
                                             header={"jwk": key.key.as_dict(private=True)})),
        ("another key's jwk", key.proof("GET", resource_url, iat=1562262618, header={"jwk": DPoPKey().public})),
        ("no jti", key.proof("GET", resource_url, iat=1562262618, claims={"jti": None})),
        ("a non-integer iat", key.proof("GET", resource_url, iat=1562262618.5)),
        ("not a JWS", "not.a-proof"),
    ]:
        refused(f"proof with {name} refused", lambda: dpop.verify_proof(proof, method="GET", url=resource_url,
                                                                       now=1562262618))
    cache = dpop.ReplayCache(window=60, capacity=3)
    check("replay cache: first use, then a replay", cache.use("a", 100, now=100) and not cache.use("a", 100, now=150))
    check("replay cache: forgets after the window", cache.use("a", 100, now=162))
    for j in "bcd":
        cache.use(j, 200, now=200)
    check("replay cache: bounded in size", len(cache) == 3 and cache.evicted == 1, (len(cache), cache.evicted))
    try:
        import pydpop
    except ImportError:
        check("pydpop installed (pip install -r requirements.txt)", False)
        return
    import gateway

    independent = gateway.IndependentVerifier()
    mine = dpop.verify_proof(RFC9449_RESOURCE_PROOF, method="GET", url=resource_url,
                             access_token=RFC9449_ACCESS_TOKEN, now=1562262618)
    check("independent verifier agrees on the RFC 9449 7.1 example", independent.check(
        RFC9449_RESOURCE_PROOF, "GET", resource_url, RFC9449_ACCESS_TOKEN, mine, RFC9449_JKT, 1562262618, None) is None)
    verdict = independent.check(RFC9449_RESOURCE_PROOF, "POST", resource_url, RFC9449_ACCESS_TOKEN, mine, RFC9449_JKT,
                                1562262618, None)
    check("independent verifier: a disagreement gives its reason", verdict == "htm mismatch", verdict)
    verdict = independent.check(RFC9449_RESOURCE_PROOF, "GET", resource_url, RFC9449_ACCESS_TOKEN, mine, RFC9449_JKT,
                                1562262618, None)
    check("independent verifier: its own replay store", verdict == "replayed jti", verdict)
    verdict = gateway.IndependentVerifier().check(RFC9449_RESOURCE_PROOF, "GET", resource_url, RFC9449_ACCESS_TOKEN,
                                                  mine, "other-jkt", 1562262618, None)
    check("independent verifier: its thumbprint is compared with cnf.jkt", verdict is not None and "cnf.jkt" in verdict,
          verdict)
    r = pydpop.verify_proof(proof=RFC9449_TOKEN_PROOF, htm="POST", htu=token_url, now=1562262616)
    check("pydpop agrees on the RFC 9449 4.1 example", r["jwk_thumbprint"] == RFC9449_JKT, r)
    r = pydpop.verify_proof(proof=RFC9449_RESOURCE_PROOF, htm="GET", htu=resource_url,
                            access_token=RFC9449_ACCESS_TOKEN, now=1562262618)
    check("pydpop agrees on the RFC 9449 7.1 example", r["jwk_thumbprint"] == RFC9449_JKT, r)


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def main():
    global VERBOSE
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--stress", type=int, default=1000, help="requests in the big concurrent burst (0 = skip)")
    args = ap.parse_args()
    VERBOSE = args.verbose

    dpop_vectors()
    srv = Servers(["--token-lifetime", "3"])
    A, G = srv.as_url, srv.gw_url
    TOKEN = f"{A}/oauth/token"
    print(f"servers up in {srv.startup:.2f}s: as={A} gateway={G}")
    check("startup < 2s", srv.startup < 2.0, f"{srv.startup:.2f}s")

    DEVICE = ("courier-device", "device-secret")
    USER = ("courier-user", "user-secret")
    GW = ("gateway", "gateway-secret")

    def introspect(token, creds=GW, hint=None):
        form = {"token": token}
        if hint:
            form["token_type_hint"] = hint
        return http("POST", f"{A}/oauth/introspect", form=form, basic=creds)

    def password_token(user="alice", pw="wonderland", scope="read write profile"):
        form = {"grant_type": "password", "username": user, "password": pw}
        if scope:
            form["scope"] = scope
        return http("POST", TOKEN, form=form, basic=USER)

    try:
        # ---------------------------------------------------------- metadata
        r = http("GET", f"{A}/.well-known/oauth-authorization-server")
        check("metadata", r.status == 200 and r.json["token_endpoint"] == TOKEN, r)

        check("metadata cache-control", r.headers.get("cache-control") == "max-age=3600", r.headers)
        check("metadata issuer is the origin used", r.json["issuer"] == A, r)
        check("metadata lists the JWT methods", {"private_key_jwt", "client_secret_jwt"}
              <= set(r.json["token_endpoint_auth_methods_supported"]), r)
        r = http("GET", f"{A}/.well-known/openid-configuration")
        check("openid-configuration", r.status == 200 and r.json["token_endpoint"] == TOKEN
              and r.json["issuer"] == A, r)
        r = http("GET", f"{A}/.well-known/oauth-authorization-server", headers={"X-Forwarded-Proto": "https"})
        check("metadata behind a TLS front", r.json["issuer"] == "https://" + A.split("://", 1)[1], r)
        http("POST", f"{A}/admin/metadata", form={"issuer": "https://other.example", "max_age": "5",
                                                   "endpoint_origin": "https://elsewhere.example",
                                                   "oauth_metadata": "off"})
        r = http("GET", f"{A}/.well-known/oauth-authorization-server")
        check("admin metadata: no RFC 8414 document", r.status == 404, r)
        r = http("GET", f"{A}/.well-known/openid-configuration")
        check("admin metadata: lies as told", r.json["issuer"] == "https://other.example"
              and r.json["token_endpoint"] == "https://elsewhere.example/oauth/token"
              and r.headers.get("cache-control") == "max-age=5", r)
        http("POST", f"{A}/admin/metadata", form={})
        r = http("GET", f"{A}/.well-known/oauth-authorization-server")
        check("admin metadata: reset", r.status == 200 and r.json["issuer"] == A, r)
        stats = http("GET", f"{A}/admin/stats").json
        check("metadata requests counted", stats["metadata_requests"] >= 6, stats)

        # ------------------------------------------- JWT client assertions (RFC 7523)
        def b64url(data):
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        def secret_jwt(client_id, secret, aud=TOKEN, jti=None, exp_in=60):
            now = int(time.time())
            header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
            claims = b64url(json.dumps({"iss": client_id, "sub": client_id, "aud": aud, "iat": now,
                                        "exp": now + exp_in, "jti": jti or secrets.token_urlsafe(16)}).encode())
            mac = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
            return f"{header}.{claims}.{b64url(mac)}"

        def assertion_form(jwt, **extra):
            return {"grant_type": "client_credentials", "client_assertion": jwt,
                    "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", **extra}

        SJ = ("courier-secret-jwt", "courier-secret-jwt-test-fixture-secret-0123456789")
        jwt = secret_jwt(*SJ)
        r = http("POST", TOKEN, form=assertion_form(jwt))
        check("client_secret_jwt 200", r.status == 200 and r.json["scope"] == "device", r)
        r = http("POST", TOKEN, form=assertion_form(jwt))
        check("client_secret_jwt replayed jti -> invalid_client", r.json and r.json["error"] == "invalid_client"
              and "used" in r.json.get("error_description", ""), r)
        r = http("POST", TOKEN, form=assertion_form(secret_jwt(SJ[0], "x" * 48)))
        check("client_secret_jwt wrong secret -> invalid_client", r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form=assertion_form(secret_jwt(*SJ, aud="https://other.example/token")))
        check("client_secret_jwt wrong aud -> invalid_client", r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form=assertion_form(secret_jwt(*SJ, exp_in=-3600)))
        check("client_secret_jwt expired -> invalid_client", r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=SJ)
        check("client_secret_jwt client may not use basic", r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form=assertion_form(secret_jwt("courier-device", "device-secret")))
        check("a secret client may not use client_secret_jwt", r.json["error"] == "invalid_client", r)
        keys = http("GET", f"{A}/admin/client-keys").json
        try:
            from joserfc import jwt as jose_jwt
            from joserfc.jwk import ECKey, RSAKey
        except ImportError:  # pragma: no cover - authlib depends on joserfc
            jose_jwt = None
        if check("client keys served", set(keys) == {"courier-jwt-rs256", "courier-jwt-es256"}, keys) and jose_jwt:
            for client_id, entry in keys.items():
                key_class = RSAKey if entry["alg"] == "RS256" else ECKey
                for form_name in ("private_pem", "private_pem_legacy"):
                    key = key_class.import_key(entry[form_name])
                    now = int(time.time())
                    claims = {"iss": client_id, "sub": client_id, "aud": TOKEN, "iat": now, "exp": now + 60,
                              "jti": secrets.token_urlsafe(16)}
                    signed = jose_jwt.encode({"alg": entry["alg"], "kid": entry["kid"]}, claims, key)
                    r = http("POST", TOKEN, form=assertion_form(signed))
                    check(f"private_key_jwt {entry['alg']} ({form_name}) 200", r.status == 200, r)
                other = keys["courier-jwt-es256" if entry["alg"] == "RS256" else "courier-jwt-rs256"]
                wrong_key = (ECKey if other["alg"] == "ES256" else RSAKey).import_key(other["private_pem"])
                claims["jti"] = secrets.token_urlsafe(16)
                signed = jose_jwt.encode({"alg": other["alg"]}, claims, wrong_key)
                r = http("POST", TOKEN, form=assertion_form(signed))
                check(f"private_key_jwt {entry['alg']} wrong key -> invalid_client",
                      r.json and r.json["error"] == "invalid_client", r)
        stats = http("GET", f"{A}/admin/stats").json
        check("assertions counted", stats["client_assertions"] >= 1 and stats["client_assertion_replays"] == 1, stats)

        # ---------------------------------------------------- client_credentials
        r = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE)
        check("cc basic 200", r.status == 200, r)
        check("cc response shape", r.json and r.json["token_type"] == "Bearer" and r.json["expires_in"] == 3
              and r.json["scope"] == "device" and "refresh_token" not in r.json, r)
        check("cc no-store", r.headers.get("cache-control") == "no-store", r.headers)
        device_at = r.json["access_token"]
        r = http("POST", TOKEN, form={"grant_type": "client_credentials", "client_id": DEVICE[0],
                                      "client_secret": DEVICE[1], "scope": "device read"})
        check("cc post 200", r.status == 200 and r.json["scope"] == "device read", r)
        device_read_at = r.json["access_token"]
        r = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=(DEVICE[0], "nope"))
        check("cc wrong secret (basic) 401 invalid_client", r.status == 401 and r.json["error"] == "invalid_client"
              and r.headers.get("www-authenticate", "").startswith("Basic "), r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials", "client_id": DEVICE[0], "client_secret": "nope"})
        check("cc wrong secret (post) invalid_client", r.status in (400, 401) and r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials"})
        check("cc no client auth invalid_client", r.json and r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials", "scope": "write"}, basic=DEVICE)
        check("cc scope not allowed -> invalid_scope", r.status == 400 and r.json["error"] == "invalid_scope", r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials", "scope": "admin"}, basic=DEVICE)
        check("cc unknown scope -> invalid_scope", r.status == 400 and r.json["error"] == "invalid_scope", r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=USER)
        check("cc by courier-user -> unauthorized_client", r.json["error"] == "unauthorized_client", r)
        r = http("POST", TOKEN, form={"grant_type": "client_credentials", "client_id": "courier-public"})
        check("cc by public -> unauthorized_client", r.json["error"] == "unauthorized_client", r)
        r = http("POST", TOKEN, form={"grant_type": "magic"}, basic=USER)
        check("unknown grant -> unsupported_grant_type", r.status == 400 and r.json["error"] == "unsupported_grant_type", r)

        # ------------------------------------------------------------- password
        r = password_token()
        check("password 200 + refresh", r.status == 200 and r.json.get("refresh_token") and r.json["scope"] == "read write profile", r)
        alice = r.json
        r = password_token(scope=None)
        check("password default scope", r.status == 200 and r.json["scope"] == "read write profile", r)
        r = http("POST", TOKEN, form={"grant_type": "password", "username": "bob", "password": "builder", "scope": "read",
                                      "client_id": USER[0], "client_secret": USER[1]})
        check("password bob via client_secret_post", r.status == 200 and r.json["scope"] == "read", r)
        bob_read = r.json
        r = password_token(pw="wrong")
        check("password wrong -> invalid_grant", r.status == 400 and r.json["error"] == "invalid_grant", r)
        r = password_token(scope="device")
        check("password scope not allowed -> invalid_scope", r.json["error"] == "invalid_scope", r)
        r = http("POST", TOKEN, form={"grant_type": "password", "username": "alice", "password": "wonderland"}, basic=DEVICE)
        check("password by courier-device -> unauthorized_client", r.json["error"] == "unauthorized_client", r)

        # ------------------------------------------------- refresh with rotation
        rt1 = alice["refresh_token"]
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": rt1}, basic=USER)
        check("refresh 200", r.status == 200 and r.json["refresh_token"] != rt1 and r.json["scope"] == "read write profile", r)
        rt2 = r.json["refresh_token"]
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": rt1}, basic=USER)
        check("reused refresh token -> invalid_grant", r.status == 400 and r.json["error"] == "invalid_grant", r)
        check("old access token still active after rotation", introspect(alice["access_token"]).json["active"] is True)
        check("rotated-out refresh token introspects inactive", introspect(rt1, hint="refresh_token").json["active"] is False)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": rt2, "scope": "read"}, basic=USER)
        check("refresh narrowing scope", r.status == 200 and r.json["scope"] == "read", r)
        rt3 = r.json["refresh_token"]
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": rt3, "scope": "read write"}, basic=USER)
        check("refresh widening scope -> invalid_scope", r.json["error"] == "invalid_scope", r)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": rt3, "client_id": "courier-public"})
        check("refresh by another client -> invalid_grant", r.json["error"] == "invalid_grant", r)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": rt3}, basic=USER)
        check("refresh keeps (narrowed) scope", r.status == 200 and r.json["scope"] == "read", r)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": "bogus"}, basic=USER)
        check("unknown refresh token -> invalid_grant", r.json["error"] == "invalid_grant", r)

        # ------------------------------------------- authorization code + PKCE
        def authorize(client_id, redirect_uri, challenge, user="alice", scope="read write", state=None, method="S256", hint=False):
            q = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "scope": scope}
            if state:
                q["state"] = state
            if challenge:
                q["code_challenge"] = challenge
            if method:
                q["code_challenge_method"] = method
            if user:
                q["login_hint" if hint else "user"] = user
            r = http("GET", f"{A}/oauth/authorize?{urlencode(q)}")
            loc = r.headers.get("location", "")
            return r, loc, {k: v[0] for k, v in parse_qs(urlsplit(loc).query).items()}

        for client, creds in (("courier-public", None), ("courier-user", USER)):
            verifier, challenge = pkce_pair()
            state = secrets.token_hex(8)
            r, loc, q = authorize(client, "http://127.0.0.1/callback", challenge, state=state)
            check(f"{client}: authorize redirects with code+state", r.status == 302 and loc.startswith("http://127.0.0.1/callback?")
                  and q.get("state") == state and q.get("code"), r.headers)
            code = q["code"]
            base = {"grant_type": "authorization_code", "code": code, "redirect_uri": "http://127.0.0.1/callback"}
            if creds is None:
                base["client_id"] = client
            wrong_verifier, _ = pkce_pair()
            r = http("POST", TOKEN, form={**base, "code_verifier": wrong_verifier}, basic=creds)
            check(f"{client}: wrong verifier -> invalid_grant", r.status == 400 and r.json["error"] == "invalid_grant", r)
            r = http("POST", TOKEN, form={**base, "redirect_uri": "courier://callback", "code_verifier": verifier}, basic=creds)
            check(f"{client}: redirect_uri mismatch -> invalid_grant", r.json["error"] == "invalid_grant", r)
            r = http("POST", TOKEN, form={**base, "code_verifier": verifier}, basic=creds)
            check(f"{client}: code exchange 200", r.status == 200 and r.json["scope"] == "read write" and r.json.get("refresh_token"), r)
            pk = r.json
            ir = introspect(pk["access_token"]).json
            check(f"{client}: token belongs to alice", ir["active"] and ir["username"] == "alice" and ir["client_id"] == client, ir)
            r = http("POST", TOKEN, form={**base, "code_verifier": verifier}, basic=creds)
            check(f"{client}: code reuse -> invalid_grant", r.json["error"] == "invalid_grant", r)
            check(f"{client}: code reuse revokes issued token", introspect(pk["access_token"]).json["active"] is False)

        verifier, challenge = pkce_pair()
        r, loc, q = authorize("courier-public", "http://127.0.0.1:49152/callback", challenge, user="bob", hint=True, state="s")
        check("loopback redirect with port + login_hint", q.get("code") and loc.startswith("http://127.0.0.1:49152/callback"), loc)
        r = http("POST", TOKEN, form={"grant_type": "authorization_code", "code": q["code"], "client_id": "courier-public",
                                      "redirect_uri": "http://127.0.0.1:49152/callback", "code_verifier": verifier})
        check("bob via public client", r.status == 200 and introspect(r.json["access_token"]).json["username"] == "bob", r)
        pub_tokens = r.json
        r, loc, q = authorize("courier-public", "courier://callback", challenge, state="st")
        check("custom scheme redirect", loc.startswith("courier://callback?code="), loc)
        r, loc, q = authorize("courier-public", "courier://callback", None, method=None, state="st")
        check("no code_challenge -> invalid_request redirect", q.get("error") == "invalid_request" and q.get("state") == "st", loc)
        r, loc, q = authorize("courier-public", "courier://callback", challenge, method="plain")
        check("plain PKCE -> invalid_request redirect", q.get("error") == "invalid_request", loc)
        r, loc, q = authorize("courier-public", "courier://callback", challenge, user=None, state="st")
        check("no user -> access_denied redirect", q.get("error") == "access_denied" and q.get("state") == "st", loc)
        r, loc, q = authorize("courier-public", "https://evil.example/cb", challenge)
        check("unregistered redirect_uri -> 400, no redirect", r.status == 400 and not loc and r.json["error"] == "invalid_request", r)
        r, loc, q = authorize("courier-public", "courier://callback", challenge, scope="device")
        check("disallowed scope -> invalid_scope redirect", q.get("error") == "invalid_scope", loc)
        r, loc, q = authorize("courier-device", "courier://callback", challenge)
        check("client without code grant -> error", r.status in (302, 400), r)

        # ---------------------------------------------------------- token exchange
        alice_rw = password_token(scope="read write exchange").json
        form = {"grant_type": EXCHANGE, "subject_token": alice_rw["access_token"], "subject_token_type": AT_TYPE,
                "scope": "read", "audience": "courier-gateway"}
        r = http("POST", TOKEN, form=form, basic=DEVICE)
        check("exchange 200", r.status == 200 and r.json["issued_token_type"] == AT_TYPE and r.json["token_type"] == "Bearer"
              and r.json["scope"] == "read" and r.json["expires_in"] == 3 and "refresh_token" not in r.json, r)
        exch = r.json["access_token"]
        ir = introspect(exch).json
        check("exchanged token claims", ir["active"] and ir["sub"] == "alice" and ir["username"] == "alice"
              and ir["client_id"] == "courier-device" and ir["aud"] == "courier-gateway", ir)
        r = http("GET", f"{G}/api/user/profile", bearer=exch)
        check("exchanged token works at gateway", r.status == 200 and r.json["username"] == "alice", r)
        r = http("POST", TOKEN, form={**form, "scope": "write"}, basic=DEVICE)
        check("exchange scope outside client -> invalid_scope", r.json["error"] == "invalid_scope", r)
        r = http("POST", TOKEN, form={**form, "subject_token": bob_read["access_token"], "scope": "exchange"}, basic=USER)
        check("exchange scope beyond subject -> invalid_scope", r.json["error"] == "invalid_scope", r)
        r = http("POST", TOKEN, form={**form, "subject_token": "bogus"}, basic=DEVICE)
        check("exchange invalid subject -> invalid_request", r.json["error"] == "invalid_request", r)
        r = http("POST", TOKEN, form={**form, "subject_token_type": "urn:ietf:params:oauth:token-type:id_token"}, basic=DEVICE)
        check("exchange bad subject_token_type -> invalid_request", r.json["error"] == "invalid_request", r)
        r = http("POST", TOKEN, form={k: v for k, v in form.items() if k != "subject_token"}, basic=DEVICE)
        check("exchange missing subject_token -> invalid_request", r.json["error"] == "invalid_request", r)
        r = http("POST", TOKEN, form={**form, "audience": "someone-else"}, basic=DEVICE)
        check("exchange unknown audience -> invalid_target", r.json["error"] == "invalid_target", r)
        r = http("POST", TOKEN, form={**form, "audience": "courier-api"}, basic=DEVICE)
        api_tok = r.json["access_token"]
        r = http("GET", f"{G}/api/device/info", bearer=api_tok)
        check("token for another audience -> gateway 401", r.status == 401, r)
        r = http("POST", TOKEN, form={**form, "client_id": "courier-public"})
        check("exchange by public client -> invalid_client", r.json["error"] == "invalid_client", r)
        r = http("POST", TOKEN, form={"grant_type": EXCHANGE, "subject_token": alice_rw["access_token"],
                                      "subject_token_type": AT_TYPE, "actor_token": device_at, "actor_token_type": AT_TYPE},
                 basic=DEVICE)
        check("exchange with actor, default scope", r.status == 200 and r.json["scope"] == "read exchange", r)
        ir = introspect(r.json["access_token"]).json
        check("act claim", ir.get("act") == {"sub": "courier-device"}, ir)
        r = http("POST", TOKEN, form={"grant_type": EXCHANGE, "subject_token": device_at, "subject_token_type": AT_TYPE},
                 basic=DEVICE)
        check("exchange of a client token", r.status == 200 and introspect(r.json["access_token"]).json["sub"] == "courier-device", r)

        # ------------------------------------------------ introspection/revocation
        t = password_token().json
        ir = introspect(t["access_token"]).json
        check("introspect active", ir["active"] is True and ir["scope"] == "read write profile" and ir["token_type"] == "Bearer"
              and ir["exp"] >= ir["iat"] and ir["iss"] == A, ir)
        ir = introspect(t["access_token"], creds=USER).json
        check("client introspects own token", ir["active"] is True, ir)
        ir = introspect(t["access_token"], creds=DEVICE).json
        check("other client's token reads inactive", ir == {"active": False}, ir)
        r = introspect(t["access_token"], creds=("gateway", "wrong"))
        check("introspect bad client auth -> 401", r.status == 401 and r.json["error"] == "invalid_client", r)
        r = http("POST", f"{A}/oauth/introspect", form={"token": t["access_token"], "client_id": "gateway", "client_secret": "gateway-secret"})
        check("introspect with client_secret_post", r.status == 200 and r.json["active"] is True, r)
        check("introspect refresh token", introspect(t["refresh_token"], hint="refresh_token").json["active"] is True)
        check("introspect unknown -> inactive", introspect("nope").json == {"active": False})

        r = http("POST", f"{A}/oauth/revoke", form={"token": t["access_token"], "token_type_hint": "access_token"}, basic=USER)
        check("revoke access token 200", r.status == 200, r)
        check("introspect after revoke -> inactive", introspect(t["access_token"]).json["active"] is False)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": t["refresh_token"]}, basic=USER)
        check("refresh still works after access revoke", r.status == 200, r)
        t2 = r.json
        r = http("POST", f"{A}/oauth/revoke", form={"token": t2["refresh_token"]}, basic=USER)
        check("revoke refresh token 200", r.status == 200, r)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": t2["refresh_token"]}, basic=USER)
        check("revoked refresh -> invalid_grant", r.json["error"] == "invalid_grant", r)
        check("revoking refresh also revokes its access token", introspect(t2["access_token"]).json["active"] is False)
        r = http("POST", f"{A}/oauth/revoke", form={"token": "unknown-token"}, basic=USER)
        check("revoke unknown token -> 200", r.status == 200, r)
        r = http("POST", f"{A}/oauth/revoke", form={"token": pub_tokens["refresh_token"], "client_id": "courier-public"})
        check("public client revokes with client_id only", r.status == 200 and introspect(pub_tokens["access_token"]).json["active"] is False, r)
        r = http("POST", f"{A}/oauth/revoke", form={"token": device_at}, basic=USER)
        check("revoke other client's token -> error", r.status == 400, r)
        r = http("POST", f"{A}/oauth/revoke", form={"token": "x", "token_type_hint": "id_token"}, basic=USER)
        check("revoke bad hint -> unsupported_token_type", r.json and r.json["error"] == "unsupported_token_type", r)

        # expiry: real clock, then admin expire-all
        r = http("POST", f"{A}/admin/lifetime?seconds=1")
        check("admin lifetime", r.status == 200 and r.json["token_lifetime"] == 1, r)
        short = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE).json
        check("lifetime reported as expires_in", short["expires_in"] == 1, short)
        check("short token active", introspect(short["access_token"]).json["active"] is True)
        time.sleep(1.2)
        check("short token expired -> inactive", introspect(short["access_token"]).json["active"] is False)
        r = http("GET", f"{G}/api/device/info", bearer=short["access_token"])
        check("expired token -> gateway 401", r.status == 401 and 'error="invalid_token"' in r.headers.get("www-authenticate", ""), r)
        http("POST", f"{A}/admin/lifetime?seconds=3")
        t = password_token().json
        check("before expire-all active", introspect(t["access_token"]).json["active"] is True)
        r = http("POST", f"{A}/admin/expire-all")
        check("expire-all", r.status == 200 and r.json["expired"] >= 1, r)
        check("after expire-all inactive", introspect(t["access_token"]).json["active"] is False)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": t["refresh_token"]}, basic=USER)
        check("refresh after expire-all works", r.status == 200 and introspect(r.json["access_token"]).json["active"], r)

        # refresh token expiry (admin can set it; CLI: --refresh-lifetime)
        http("POST", f"{A}/admin/lifetime?refresh_seconds=1")
        t = password_token().json
        time.sleep(1.2)
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": t["refresh_token"]}, basic=USER)
        check("expired refresh token -> invalid_grant", r.json["error"] == "invalid_grant", r)
        r = http("POST", f"{A}/admin/lifetime?refresh_seconds=0")
        check("refresh lifetime back to unlimited", r.json["refresh_lifetime"] is None, r)

        # ---------------------------------------------------------------- gateway
        user_rwp = password_token().json["access_token"]  # read write profile
        user_w = password_token(scope="write").json["access_token"]
        user_r = password_token(scope="read").json["access_token"]
        dev = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE).json["access_token"]
        dev_r = http("POST", TOKEN, form={"grant_type": "client_credentials", "scope": "read"}, basic=DEVICE).json["access_token"]

        r = http("GET", f"{G}/api/public/status")
        check("public status 200 without token", r.status == 200 and r.json["status"] == "ok", r)
        r = http("GET", f"{G}/api/user/profile", bearer=user_rwp)
        check("profile 200", r.status == 200 and r.json["username"] == "alice" and r.json["email"] == "alice@example.test", r)
        r = http("GET", f"{G}/api/user/profile", bearer=user_r)
        check("profile 200 read only (no profile claims)", r.status == 200 and "email" not in r.json, r)
        r = http("GET", f"{G}/api/user/profile")
        www = r.headers.get("www-authenticate", "")
        check("profile no token -> 401 Bearer invalid_token", r.status == 401 and www.startswith("Bearer ") and 'error="invalid_token"' in www, r.headers)
        r = http("GET", f"{G}/api/user/profile", bearer="garbage")
        check("profile bad token -> 401", r.status == 401 and r.json["error"] == "invalid_token", r)
        r = http("GET", f"{G}/api/user/profile", headers={"Authorization": "Basic Zm9vOmJhcg=="})
        check("profile Basic scheme -> 401", r.status == 401, r)
        r = http("GET", f"{G}/api/user/profile", bearer=user_w)
        www = r.headers.get("www-authenticate", "")
        check("profile write-only -> 403 insufficient_scope", r.status == 403 and r.json["error"] == "insufficient_scope"
              and 'error="insufficient_scope"' in www and 'scope="read"' in www, r)
        r = http("GET", f"{G}/api/user/profile", bearer=dev_r)
        check("profile with client token (has read) -> 403", r.status == 403, r)
        r = http("GET", f"{G}/api/user/profile", bearer=alice["refresh_token"])
        check("refresh token as bearer -> 401", r.status == 401, r)
        r = http("GET", f"{G}/api/device/info", bearer=dev)
        check("device info 200", r.status == 200 and r.json["client_id"] == "courier-device" and r.json["sub"] == "courier-device", r)
        r = http("GET", f"{G}/api/device/info", bearer=user_r)
        check("device info with user read token 200", r.status == 200 and r.json["sub"] == "alice" and r.json["client_id"] == "courier-user", r)
        r = http("GET", f"{G}/api/device/info", bearer=user_w)
        check("device info write-only -> 403", r.status == 403, r)
        r = http("GET", f"{G}/api/device/info")
        check("device info no token -> 401", r.status == 401, r)
        payload = b'{"z": 1, "a": [true, null, "\\u00e9"], "nested": {"k": "v"}}'
        r = http("POST", f"{G}/api/user/echo", bearer=user_w, raw=payload, headers={"Content-Type": "application/json"})
        check("echo 200 byte-exact", r.status == 200 and r.body == payload and r.headers["content-type"].startswith("application/json"), r)
        r = http("POST", f"{G}/api/user/echo", bearer=user_r, raw=payload, headers={"Content-Type": "application/json"})
        check("echo read-only -> 403", r.status == 403, r)
        r = http("POST", f"{G}/api/user/echo", bearer=user_w, raw=b"not json", headers={"Content-Type": "application/json"})
        check("echo non-JSON -> 400", r.status == 400, r)
        r = http("POST", f"{G}/api/user/echo", raw=payload)
        check("echo no token -> 401", r.status == 401, r)
        r = http("GET", f"{G}/api/headers?x=1", headers={"X-Courier-Test": "hello", "User-Agent": "selftest/1"})
        check("headers echo", r.status == 200 and r.json["headers"].get("X-Courier-Test") == "hello"
              and r.json["headers"].get("User-Agent") == "selftest/1" and r.json["query"] == "x=1", r)
        # event stream behind a token, resuming after Last-Event-ID
        r = http("GET", f"{G}/api/events?count=3&key=selftest")
        check("events no token -> 401", r.status == 401 and 'error="invalid_token"' in r.headers.get("www-authenticate", ""), r)
        r = http("GET", f"{G}/api/events?count=3&key=selftest", bearer=dev)
        check("events 200 stream", r.status == 200 and r.headers["content-type"].startswith("text/event-stream")
              and r.body.count(b"id: ") == 3 and b"id: 3\n" in r.body, r)
        r = http("GET", f"{G}/api/events?count=3&key=selftest", bearer=dev, headers={"Last-Event-ID": "2"})
        check("events resume after Last-Event-ID", r.status == 200 and r.body.startswith(b"id: 3\n"), r)
        r = http("GET", f"{G}/api/events?count=3&key=selftest", bearer=dev, headers={"Last-Event-ID": "3"})
        check("events done -> 204", r.status == 204, r)
        s = http("GET", f"{G}/api/events/stats?key=selftest").json["connections"]
        check("events stats", [e["status"] for e in s] == [401, 200, 200, 204] and s[0]["token"] is None
              and s[1]["token"] == s[2]["token"] and len(s[1]["token"]) == 12 and s[2]["last_event_id"] == "2"
              and s[1]["end"] == "done", s)
        # revocation is visible at once (no cache)
        victim = password_token().json["access_token"]
        check("victim ok", http("GET", f"{G}/api/user/profile", bearer=victim).status == 200)
        http("POST", f"{A}/oauth/revoke", form={"token": victim}, basic=USER)
        check("revoked token -> gateway 401 immediately", http("GET", f"{G}/api/user/profile", bearer=victim).status == 401)

        # ------------------------------------------------------------------ stats
        http("POST", f"{A}/admin/reset")
        http("POST", f"{G}/admin/reset")
        s = http("GET", f"{A}/admin/stats").json
        check("AS stats reset", s["grants_total"] == 0 and s["failed_grants"] == 0 and s["introspections"] == 0, s)
        c1 = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE).json["access_token"]
        http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE)
        p1 = password_token().json
        http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": p1["refresh_token"]}, basic=USER)
        http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": p1["refresh_token"]}, basic=USER)  # fails
        password_token(pw="bad")  # fails
        http("POST", TOKEN, form={"grant_type": EXCHANGE, "subject_token": p1["access_token"], "subject_token_type": AT_TYPE}, basic=USER)
        introspect(c1)
        introspect("unknown")
        http("POST", f"{A}/oauth/revoke", form={"token": c1}, basic=DEVICE)
        http("GET", f"{G}/api/public/status")
        http("GET", f"{G}/api/device/info", bearer=c1)  # revoked -> 401 (+1 introspection)
        http("GET", f"{G}/api/user/profile", bearer=p1["access_token"])  # 200 (+1)
        http("GET", f"{G}/api/user/echo")  # 405
        http("POST", f"{G}/api/user/echo", bearer=p1["access_token"], raw=b"{}")  # 200 (+1)
        http("GET", f"{G}/api/user/profile", bearer=dev)  # 403 (+1)
        s = http("GET", f"{A}/admin/stats").json
        check("AS stats grants", s["grants"] == {"client_credentials": 2, "password": 1, "refresh_token": 1, EXCHANGE: 1}
              and s["grants_total"] == 5, s)
        check("AS stats failures", s["failed_grants"] == 2 and s["failed_grants_by_error"] == {"invalid_grant": 2}, s)
        check("AS stats introspections (2 direct + 4 gateway)", s["introspections"] == 6 and s["introspections_active"] == 4, s)
        check("AS stats revocations", s["revocations"] == 1 and s["tokens_revoked"] == 1, s)
        g = http("GET", f"{G}/admin/stats").json
        check("gateway stats outcomes", g["by_outcome"] == {"200": 3, "401": 1, "403": 1, "405": 1} and g["requests_total"] == 6, g)
        check("gateway stats per route", g["by_route"]["/api/user/profile"] == {"total": 2, "200": 1, "403": 1}
              and g["by_route"]["/api/device/info"] == {"total": 1, "401": 1}
              and g["by_route"]["/api/public/status"] == {"total": 1, "200": 1}, g)
        check("gateway introspection calls", g["introspection_calls"] == 4, g)

        # ------------------------------------------------------- token faults
        http("POST", f"{A}/admin/reset")
        cc = {"grant_type": "client_credentials"}
        http("POST", f"{A}/admin/token-fault?mode=429&retry_after=7")
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("fault 429 + Retry-After", r.status == 429 and r.headers.get("retry-after") == "7" and r.json is None, r)
        http("POST", f"{A}/admin/token-fault?mode=503&retry_after=5&retry_after_form=date")
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("fault 503 + Retry-After date", r.status == 503 and r.headers.get("retry-after", "").endswith(" GMT"), r)
        http("POST", f"{A}/admin/token-fault?mode=down")
        try:
            http("POST", TOKEN, form=cc, basic=DEVICE)
            check("fault down closes the connection", False)
        except (ConnectionError, httpclient.HTTPException):
            check("fault down closes the connection", True)
        http("POST", f"{A}/admin/token-fault?mode=slow&delay_ms=300")
        t = time.monotonic()
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("fault slow delays, then answers", r.status == 200 and time.monotonic() - t >= 0.3, r)
        check("bad fault mode", http("POST", f"{A}/admin/token-fault?mode=sometimes").status == 400)
        check("fault cleared", http("POST", f"{A}/admin/token-fault?mode=none").json["mode"] == "none")
        s = http("GET", f"{A}/admin/stats").json
        check("token requests counted", s["token_requests"] == 4 and s["token_faults"] == 3 and s["grants_total"] == 1, s)
        check("token request times", http("GET", f"{A}/admin/token-requests").json["count"] == 4)

        # ------------------------------------------------------------ DPoP (RFC 9449)
        http("POST", f"{A}/admin/lifetime?seconds=120")
        http("POST", f"{A}/admin/reset")
        http("POST", f"{G}/admin/reset")
        DPOP_INVALID = 'DPoP error="invalid_dpop_proof", algs="ES256"'
        DPOP_TOKEN = 'DPoP error="invalid_token", algs="ES256"'
        r = http("GET", f"{A}/admin/dpop")
        check("AS admin/dpop starts off", r.json == {"require": False, "nonce": False, "proofs_accepted": 0,
                                                     "proofs_refused": 0, "nonce_challenges": 0}, r)
        r = http("GET", f"{G}/admin/dpop")
        check("gateway admin/dpop starts off", r.json == {"nonce": False, "proofs_accepted": 0, "proofs_refused": 0,
                                                          "replays_refused": 0, "nonce_challenges": 0, "distinct_jti": 0,
                                                          "independent_accepted": 0, "independent_refused": 0}, r)
        r = http("GET", f"{A}/.well-known/oauth-authorization-server")
        check("metadata: dpop_signing_alg_values_supported", r.json.get("dpop_signing_alg_values_supported") == ["ES256"], r)

        key, other = DPoPKey(), DPoPKey()
        cc = {"grant_type": "client_credentials", "scope": "device read"}
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": key.proof("POST", TOKEN)})
        check("DPoP client_credentials: token_type DPoP", r.status == 200 and r.json["token_type"] == "DPoP"
              and r.json["expires_in"] == 120 and "dpop-nonce" not in r.headers, r)
        dat = r.json["access_token"]
        ir = introspect(dat).json
        check("DPoP introspection: token_type DPoP and cnf.jkt", ir["active"] and ir["token_type"] == "DPoP"
              and ir["cnf"] == {"jkt": key.jkt}, ir)
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("no DPoP header: Bearer as before", r.status == 200 and r.json["token_type"] == "Bearer"
              and "cnf" not in introspect(r.json["access_token"]).json, r)
        plain_at = r.json["access_token"]

        INFO = f"{G}/api/device/info"

        def dget(url, token, proof=None, scheme="DPoP", method="GET", extra=None):
            headers = {"Authorization": f"{scheme} {token}", **(extra or {})}
            if proof is not None:
                headers["DPoP"] = proof
            return http(method, url, headers=headers)

        r = dget(INFO, dat, key.proof("GET", INFO, token=dat))
        check("gateway: DPoP token + proof -> 200", r.status == 200 and r.json["client_id"] == "courier-device", r)
        replayed = key.proof("GET", INFO, token=dat)
        r = dget(INFO, dat, replayed)
        check("gateway: a fresh proof -> 200", r.status == 200, r)
        r = dget(INFO, dat, replayed)
        check("gateway: replayed proof -> 401 invalid_dpop_proof", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_INVALID and r.json["error"] == "invalid_dpop_proof", r)
        r = dget(INFO, dat, key.proof("GET", f"{G}/api/user/profile", token=dat))
        check("gateway: proof for another URL -> 401", r.status == 401 and r.headers.get("www-authenticate") == DPOP_INVALID, r)
        r = dget(INFO, dat, key.proof("POST", INFO, token=dat))
        check("gateway: proof for another method -> 401", r.status == 401 and r.headers.get("www-authenticate") == DPOP_INVALID, r)
        r = dget(INFO + "?x=1", dat, key.proof("GET", INFO, token=dat))
        check("gateway: htu without the query -> 200", r.status == 200, r)
        r = dget(INFO, dat, key.proof("GET", INFO, token=dat), scheme="Bearer")
        check("gateway: stolen DPoP token as Bearer -> 401 DPoP invalid_token", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_TOKEN, r)
        r = dget(INFO, dat, scheme="Bearer")
        check("gateway: DPoP token as Bearer without proof -> 401 DPoP invalid_token", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_TOKEN, r)
        r = dget(INFO, dat)
        check("gateway: DPoP token without a proof -> 401 invalid_token", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_TOKEN, r)
        r = dget(INFO, dat, other.proof("GET", INFO, token=dat))
        check("gateway: stolen token with another key's proof -> 401", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_INVALID, r)
        r = dget(INFO, dat, key.proof("GET", INFO, token=plain_at))
        check("gateway: ath of another token -> 401", r.status == 401 and r.headers.get("www-authenticate") == DPOP_INVALID, r)
        r = dget(INFO, dat, key.proof("GET", INFO))
        check("gateway: proof without ath -> 401", r.status == 401 and r.headers.get("www-authenticate") == DPOP_INVALID, r)
        r = dget(INFO, dat, key.proof("GET", INFO, token=dat, iat=int(time.time()) - 300))
        check("gateway: proof 5 minutes old -> 401", r.status == 401 and r.headers.get("www-authenticate") == DPOP_INVALID, r)
        r = dget(INFO, "garbage", key.proof("GET", INFO, token="garbage"))
        check("gateway: unknown token with DPoP -> 401 invalid_token", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_TOKEN, r)
        r = dget(INFO, plain_at, key.proof("GET", INFO, token=plain_at))
        check("gateway: a Bearer token sent as DPoP -> 401 invalid_token", r.status == 401
              and r.headers.get("www-authenticate") == DPOP_TOKEN, r)
        r = http("GET", INFO, bearer=plain_at)
        check("gateway: Bearer token still 200", r.status == 200, r)
        r = dget(f"{G}/api/user/profile", dat, key.proof("GET", f"{G}/api/user/profile", token=dat))
        www = r.headers.get("www-authenticate", "")
        check("gateway: DPoP client token on a user route -> 403 DPoP insufficient_scope", r.status == 403
              and www.startswith("DPoP ") and 'error="insufficient_scope"' in www and 'algs="ES256"' in www, r)
        parts = urlsplit(INFO)
        conn = httpclient.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            conn.putrequest("GET", parts.path)
            conn.putheader("Authorization", f"DPoP {dat}")
            conn.putheader("DPoP", key.proof("GET", INFO, token=dat))
            conn.putheader("DPoP", key.proof("GET", INFO, token=dat))
            conn.endheaders()
            two = conn.getresponse()
            check("gateway: two DPoP headers -> 401 invalid_dpop_proof", two.status == 401
                  and two.getheader("WWW-Authenticate") == DPOP_INVALID)
        finally:
            conn.close()
        front = "https://" + G.split("://", 1)[1]
        r = dget(INFO, dat, key.proof("GET", front + "/api/device/info", token=dat), extra={"X-Forwarded-Proto": "https"})
        check("gateway behind a TLS front: htu https://Host/path -> 200", r.status == 200, r)
        payload = b'{"dpop": true}'

        # password grant, refresh bound to the key, user routes
        pw = {"grant_type": "password", "username": "alice", "password": "wonderland"}
        r = http("POST", TOKEN, form=pw, basic=USER, headers={"DPoP": key.proof("POST", TOKEN)})
        check("DPoP password grant: DPoP token + refresh token", r.status == 200 and r.json["token_type"] == "DPoP"
              and r.json.get("refresh_token"), r)
        alice_dpop = r.json
        ir = introspect(alice_dpop["refresh_token"], hint="refresh_token").json
        check("refresh token introspection carries cnf.jkt", ir["active"] and ir.get("cnf") == {"jkt": key.jkt}
              and "token_type" not in ir, ir)
        r = dget(f"{G}/api/user/profile", alice_dpop["access_token"],
                 key.proof("GET", f"{G}/api/user/profile", token=alice_dpop["access_token"]))
        check("gateway: DPoP user token -> profile 200", r.status == 200 and r.json["username"] == "alice", r)
        r = http("POST", f"{G}/api/user/echo", raw=payload, headers={
            "Authorization": f"DPoP {alice_dpop['access_token']}", "Content-Type": "application/json",
            "DPoP": key.proof("POST", f"{G}/api/user/echo", token=alice_dpop["access_token"])})
        check("gateway: DPoP POST echo 200", r.status == 200 and r.body == payload, r)
        refresh = {"grant_type": "refresh_token", "refresh_token": alice_dpop["refresh_token"]}
        r = http("POST", TOKEN, form=refresh, basic=USER)
        check("bound refresh token without a proof -> 400 invalid_dpop_proof", r.status == 400
              and r.json["error"] == "invalid_dpop_proof", r)
        r = http("POST", TOKEN, form=refresh, basic=USER, headers={"DPoP": other.proof("POST", TOKEN)})
        check("bound refresh token with another key's proof -> 400 invalid_dpop_proof", r.status == 400
              and r.json["error"] == "invalid_dpop_proof", r)
        r = http("POST", TOKEN, form=refresh, basic=USER, headers={"DPoP": key.proof("POST", TOKEN)})
        check("bound refresh token with its key -> 200 DPoP", r.status == 200 and r.json["token_type"] == "DPoP", r)
        check("refreshed token bound to the same key", introspect(r.json["access_token"]).json.get("cnf") == {"jkt": key.jkt})
        r = http("POST", TOKEN, form={"grant_type": EXCHANGE, "subject_token": alice_dpop["access_token"],
                                      "subject_token_type": AT_TYPE}, basic=USER, headers={"DPoP": other.proof("POST", TOKEN)})
        check("DPoP token exchange: bound to the requester's key", r.status == 200 and r.json["token_type"] == "DPoP"
              and introspect(r.json["access_token"]).json.get("cnf") == {"jkt": other.jkt}, r)
        verifier, challenge = pkce_pair()
        _, _, q = authorize("courier-public", "courier://callback", challenge, state="dp")
        r = http("POST", TOKEN, form={"grant_type": "authorization_code", "code": q["code"], "client_id": "courier-public",
                                      "redirect_uri": "courier://callback", "code_verifier": verifier},
                 headers={"DPoP": key.proof("POST", TOKEN)})
        check("DPoP authorization_code (public client): DPoP token", r.status == 200 and r.json["token_type"] == "DPoP", r)
        pub_dpop = r.json
        r = http("POST", TOKEN, form={"grant_type": "refresh_token", "refresh_token": pub_dpop["refresh_token"],
                                      "client_id": "courier-public"}, headers={"DPoP": key.proof("POST", TOKEN)})
        check("public client: bound refresh with its key -> 200", r.status == 200 and r.json["token_type"] == "DPoP", r)

        # the token endpoint's own checks
        replayed = key.proof("POST", TOKEN)
        http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": replayed})
        for name, proof in [
            ("a replayed proof", replayed),
            ("a proof for another URL", key.proof("POST", f"{A}/oauth/introspect")),
            ("a proof for GET", key.proof("GET", TOKEN)),
            ("alg none", unsigned_proof({"typ": "dpop+jwt", "alg": "none", "jwk": key.public},
                                        {"jti": "n", "htm": "POST", "htu": TOKEN, "iat": int(time.time())})),
            ("a stale iat", key.proof("POST", TOKEN, iat=int(time.time()) - 120)),
        ]:
            r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": proof})
            check(f"token endpoint: {name} -> 400 invalid_dpop_proof", r.status == 400
                  and r.json["error"] == "invalid_dpop_proof" and r.json.get("error_description"), r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": key.proof("POST", "https://" + TOKEN.split("://")[1]),
                                                                "X-Forwarded-Proto": "https"})
        check("token endpoint behind a TLS front: htu https -> 200", r.status == 200 and r.json["token_type"] == "DPoP", r)

        # nonces at the token endpoint
        r = http("POST", f"{A}/admin/dpop", raw=b'{"nonce": true}', headers={"Content-Type": "application/json"})
        check("AS admin/dpop nonce on", r.status == 200 and r.json["nonce"] is True and r.json["require"] is False, r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": key.proof("POST", TOKEN)})
        as_nonce = r.headers.get("dpop-nonce")
        check("token endpoint: no nonce -> 400 use_dpop_nonce + DPoP-Nonce", r.status == 400
              and r.json["error"] == "use_dpop_nonce" and as_nonce, r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": key.proof("POST", TOKEN, nonce=as_nonce)})
        check("token endpoint: proof with the nonce -> 200, DPoP-Nonce again", r.status == 200
              and r.json["token_type"] == "DPoP" and r.headers.get("dpop-nonce") == as_nonce, r)
        dat = r.json["access_token"]
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": key.proof("POST", TOKEN, nonce="stale")})
        check("token endpoint: a wrong nonce -> use_dpop_nonce", r.status == 400 and r.json["error"] == "use_dpop_nonce", r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("token endpoint: nonces on, no proof -> Bearer", r.status == 200 and r.json["token_type"] == "Bearer", r)
        r = http("POST", f"{A}/admin/dpop", raw=b'{"require": true, "nonce": false}', headers={"Content-Type": "application/json"})
        check("AS admin/dpop require on", r.json["require"] is True and r.json["nonce"] is False, r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("DPoP required, no proof -> 400 invalid_dpop_proof", r.status == 400 and r.json == {
            "error": "invalid_dpop_proof", "error_description": "a DPoP proof is required"}, r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"DPoP": key.proof("POST", TOKEN)})
        check("DPoP required, proof -> 200", r.status == 200 and r.json["token_type"] == "DPoP", r)
        s = http("GET", f"{A}/admin/dpop").json
        check("AS DPoP counters", s["nonce_challenges"] == 2 and s["proofs_refused"] == 8 and s["proofs_accepted"] == 10, s)
        r = http("POST", f"{A}/admin/dpop", raw=b'{"require": "yes"}', headers={"Content-Type": "application/json"})
        check("AS admin/dpop refuses a non-boolean", r.status == 400, r)

        # nonces at the gateway (its own)
        r = http("POST", f"{G}/admin/dpop", raw=b'{"nonce": true}', headers={"Content-Type": "application/json"})
        check("gateway admin/dpop nonce on", r.status == 200 and r.json["nonce"] is True, r)
        r = dget(INFO, dat, key.proof("GET", INFO, token=dat))
        gw_nonce = r.headers.get("dpop-nonce")
        check("gateway: no nonce -> 401 use_dpop_nonce + DPoP-Nonce", r.status == 401
              and r.headers.get("www-authenticate") == 'DPoP error="use_dpop_nonce"' and gw_nonce
              and r.json["error"] == "use_dpop_nonce", r)
        check("gateway nonce is its own", gw_nonce != as_nonce)
        r = dget(INFO, dat, key.proof("GET", INFO, token=dat, nonce=gw_nonce))
        check("gateway: proof with the nonce -> 200 + DPoP-Nonce", r.status == 200 and r.headers.get("dpop-nonce") == gw_nonce, r)
        r = dget(INFO, dat, key.proof("GET", INFO, token=dat, nonce=as_nonce))
        check("gateway: the AS's nonce -> use_dpop_nonce", r.status == 401 and r.json["error"] == "use_dpop_nonce", r)
        r = http("GET", INFO, bearer=plain_at)
        check("gateway: nonces on, Bearer unchanged", r.status == 200 and "dpop-nonce" not in r.headers, r)
        g = http("GET", f"{G}/admin/dpop").json
        check("gateway DPoP counters", g["nonce_challenges"] == 2 and g["replays_refused"] == 1
              and g["proofs_accepted"] == 8 and g["independent_accepted"] == 8 and g["independent_refused"] == 0
              and g["proofs_refused"] == 8 and g["distinct_jti"] == 9, g)

        http("POST", f"{A}/admin/reset")
        http("POST", f"{G}/admin/reset")
        check("AS reset turns DPoP off", http("GET", f"{A}/admin/dpop").json == {
            "require": False, "nonce": False, "proofs_accepted": 0, "proofs_refused": 0, "nonce_challenges": 0})
        g = http("GET", f"{G}/admin/dpop").json
        check("gateway reset turns DPoP off", g["nonce"] is False and g["proofs_accepted"] == 0 and g["distinct_jti"] == 0, g)
        r = http("POST", TOKEN, form=cc, basic=DEVICE)
        check("after reset: Bearer without a proof", r.status == 200 and r.json["token_type"] == "Bearer", r)

        # ------------------------------------- certificate-bound tokens (RFC 8705)
        # The TLS front forwards the client certificate it verified as URL-escaped PEM in
        # X-Client-Cert (nginx: $ssl_client_escaped_cert); these requests play the front.
        def client_cert():
            import datetime

            from cryptography import x509
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.x509.oid import NameOID

            k = ec.generate_private_key(ec.SECP256R1())
            name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "courier-selftest-client")])
            now = datetime.datetime.now(datetime.timezone.utc)
            cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
                    .serial_number(x509.random_serial_number()).not_valid_before(now)
                    .not_valid_after(now + datetime.timedelta(days=1)).sign(k, hashes.SHA256()))
            pem = cert.public_bytes(serialization.Encoding.PEM).decode()
            x5t = b64url(hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).digest())
            return quote(pem, safe=""), x5t

        cert, cert_x5t = client_cert()
        other_cert, _ = client_cert()
        r = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE, headers={"X-Client-Cert": cert})
        check("mTLS: token_type stays Bearer", r.status == 200 and r.json["token_type"] == "Bearer", r)
        mtls_at = r.json["access_token"]
        check("mTLS: introspection has cnf.x5t#S256", introspect(mtls_at).json.get("cnf") == {"x5t#S256": cert_x5t})
        r = http("GET", INFO, bearer=mtls_at, headers={"X-Client-Cert": cert})
        check("mTLS: gateway with the same certificate -> 200", r.status == 200, r)
        r = http("GET", INFO, bearer=mtls_at, headers={"X-Client-Cert": other_cert})
        check("mTLS: gateway with another certificate -> 401 invalid_token", r.status == 401
              and r.json["error"] == "invalid_token" and r.headers.get("www-authenticate", "").startswith("Bearer "), r)
        refusals = http("GET", f"{G}/admin/stats").json["certificate_refusals"]
        r = http("GET", INFO, bearer=mtls_at)
        check("mTLS: gateway without a certificate -> 401 invalid_token", r.status == 401, r)
        check("mTLS: the gateway counts both refusals",
              http("GET", f"{G}/admin/stats").json["certificate_refusals"] >= 2 and refusals >= 1)
        md = http("GET", f"{A}/.well-known/oauth-authorization-server").json
        check("mTLS: metadata says tokens are certificate-bound",
              md.get("tls_client_certificate_bound_access_tokens") is True and "mtls_endpoint_aliases" not in md, md)
        http("POST", f"{A}/admin/metadata", form={"mtls_origin": "https://127.0.0.1:1"})
        md = http("GET", f"{A}/.well-known/oauth-authorization-server").json
        check("mTLS: metadata names the aliases on the mutual-TLS origin",
              md.get("mtls_endpoint_aliases", {}).get("token_endpoint") == "https://127.0.0.1:1/oauth/token", md)
        http("POST", f"{A}/admin/metadata", form={})
        r = http("GET", INFO, bearer=plain_at, headers={"X-Client-Cert": cert})
        check("mTLS: an unbound token with a certificate -> 200", r.status == 200, r)
        r = http("POST", TOKEN, form=cc, basic=DEVICE, headers={"X-Client-Cert": cert, "DPoP": key.proof("POST", TOKEN)})
        both = r.json["access_token"]
        check("mTLS + DPoP: cnf has both", introspect(both).json.get("cnf") == {"jkt": key.jkt, "x5t#S256": cert_x5t})
        r = dget(INFO, both, key.proof("GET", INFO, token=both), extra={"X-Client-Cert": cert})
        check("mTLS + DPoP: gateway 200", r.status == 200, r)
        r = dget(INFO, both, key.proof("GET", INFO, token=both))
        check("mTLS + DPoP: no certificate -> 401", r.status == 401 and r.json["error"] == "invalid_token", r)

        # ------------------------------------------------------------ concurrency
        def burst(n, fn):
            barrier = threading.Barrier(n, timeout=30)

            def one(i):
                try:
                    barrier.wait()
                except threading.BrokenBarrierError:
                    pass
                try:
                    return fn(i)
                except Exception as e:  # noqa: BLE001
                    return f"{type(e).__name__}: {e}"

            with ThreadPoolExecutor(max_workers=n) as ex:
                return list(ex.map(one, range(n)))

        # fresh long-lived tokens: the 3 s ones above may be gone by now
        http("POST", f"{A}/admin/lifetime?seconds=120")
        user_rwp = password_token().json["access_token"]
        dev = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE).json["access_token"]
        http("POST", f"{G}/admin/reset")
        t0 = time.monotonic()
        results = burst(200, lambda i: http("GET", f"{G}/api/user/profile", bearer=user_rwp).status)
        dt = time.monotonic() - t0
        bad = [x for x in results if x != 200]
        check("200 concurrent gateway requests all 200", not bad, f"{len(bad)} bad, e.g. {bad[:3]}")
        g = http("GET", f"{G}/admin/stats").json
        check("gateway counted 200 requests", g["by_route"]["/api/user/profile"].get("200") == 200, g)
        print(f"200 concurrent gateway requests in {dt:.2f}s")

        if args.stress:
            n = args.stress

            def mixed(i):
                k = i % 4
                if k == 0:
                    r = http("POST", TOKEN, form={"grant_type": "client_credentials"}, basic=DEVICE)
                elif k == 1:
                    r = introspect(user_rwp)
                    return 200 if r.status == 200 and r.json["active"] else f"inactive {r}"
                elif k == 2:
                    r = http("GET", f"{G}/api/device/info", bearer=dev)
                else:
                    r = http("POST", f"{G}/api/user/echo", bearer=user_rwp, raw=b'{"i": %d}' % i)
                return r.status

            t0 = time.monotonic()
            results = burst(n, mixed)
            dt = time.monotonic() - t0
            bad = [x for x in results if x != 200]
            check(f"{n} concurrent mixed requests all succeed", not bad, f"{len(bad)} bad, e.g. {bad[:3]}")
            print(f"{n} concurrent mixed requests in {dt:.2f}s")

        code = srv.proc.poll()
        check("server still running", code is None, code)
    finally:
        pid = srv.proc.pid
        rc = srv.close_stdin_and_wait()
        check("exits on stdin EOF", rc == 0, rc)
        check("no orphan after stdin EOF", not pid_alive(pid))

    # SIGTERM path, fixed ports
    import socket

    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    p1, p2 = free_port(), free_port()
    srv2 = Servers([], port=p1, gateway_port=p2)
    check("fixed ports honoured", srv2.as_url == f"http://127.0.0.1:{p1}" and srv2.gw_url == f"http://127.0.0.1:{p2}")
    r = http("POST", f"http://127.0.0.1:{p1}/oauth/token", form={"grant_type": "client_credentials"}, basic=("courier-device", "device-secret"))
    check("default lifetime 3600", r.json and r.json["expires_in"] == 3600, r)
    srv2.proc.send_signal(signal.SIGTERM)
    try:
        rc = srv2.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        srv2.proc.kill()
        rc = None
    check("exits 0 on SIGTERM", rc == 0, rc)

    print(f"{PASSED} passed, {FAILED} failed")
    return 0 if FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
