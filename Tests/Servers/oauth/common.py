"""Small helpers shared by the authorization server and the gateway apps."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import sys
import traceback

from urllib.parse import quote, unquote

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException


def is_loopback(addr: str | None) -> bool:
    try:
        return ipaddress.ip_address(addr or "").is_loopback
    except ValueError:
        return False


def request_target_path() -> str:
    """The request's path as it came on the request line (percent-encoding kept), without
    the query: what a DPoP proof's ``htu`` names.  werkzeug's ``request.path`` is decoded."""
    raw = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI")
    if raw:
        path = raw.split("?", 1)[0].split("#", 1)[0]
        if path.startswith("/"):
            return path
    return quote(request.path, safe="/:@!$&'()*+,;=-._~")


def public_origin() -> str:
    """The origin the client used: a TLS front (nginx) sets X-Forwarded-Proto and keeps
    the Host header, so behind it this is ``https://127.0.0.1:<front port>``."""
    proto = request.headers.get("X-Forwarded-Proto") or request.scheme
    return f"{proto}://{request.host}"


#: the header in which a TLS front (nginx: ``proxy_set_header X-Client-Cert
#: $ssl_client_escaped_cert;``) forwards the client certificate it verified, URL-escaped PEM
CLIENT_CERT_HEADER = "X-Client-Cert"


def client_certificate_thumbprint() -> str | None:
    """RFC 8705 section 3.1: ``x5t#S256`` of the client certificate of the request's TLS
    connection (base64url SHA-256 of its DER), as the TLS front forwards it; None without
    one.  A header that is not a PEM certificate counts as none."""
    raw = request.headers.get(CLIENT_CERT_HEADER)
    if not raw:
        return None
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    try:
        cert = x509.load_pem_x509_certificate(unquote(raw).encode("ascii"))
    except ValueError:
        return None
    digest = hashlib.sha256(cert.public_bytes(Encoding.DER)).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def install_json_errors(app: Flask) -> None:
    """JSON bodies for 404/405/500 instead of Flask's HTML pages."""

    @app.errorhandler(404)
    def not_found(_e):
        return jsonify({"error": "not_found", "path": request.path}), 404

    @app.errorhandler(405)
    def not_allowed(_e):
        return jsonify({"error": "method_not_allowed", "method": request.method}), 405

    @app.errorhandler(Exception)
    def crashed(e):
        if isinstance(e, HTTPException):
            return e
        traceback.print_exc(file=sys.stderr)
        return jsonify({"error": "server_error", "error_description": type(e).__name__}), 500
