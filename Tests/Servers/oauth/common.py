"""Small helpers shared by the authorization server and the gateway apps."""

from __future__ import annotations

import ipaddress
import sys
import traceback

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException


def is_loopback(addr: str | None) -> bool:
    try:
        return ipaddress.ip_address(addr or "").is_loopback
    except ValueError:
        return False


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
