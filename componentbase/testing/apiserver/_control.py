"""Faults: ``/_loopback/faults`` (set them in a server in another process, over HTTP) and applying them."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

from .apimachinery.errors import ApiError
from .faults import Decision, Faults, rules_from
from .wire._wire import decode_json

__all__ = ["FAULTS_PATH", "control", "is_control"]

FAULTS_PATH = "/_loopback/faults"


def is_control(path: str) -> bool:
    return path == FAULTS_PATH or path.startswith(FAULTS_PATH + "/")


def control(faults: Faults, method: str, path: str, body: bytes) -> bytes:
    """Apply the request to ``faults``; the JSON answer (the rules and counts), or ``ApiError``."""
    if path == FAULTS_PATH + "/close-watches" and method == "POST":
        faults.close_watches()
    elif path != FAULTS_PATH:
        raise ApiError.path_not_found()
    elif method in ("PUT", "POST"):
        try:
            rules = rules_from(decode_json(body) if body.strip() else [])
        except ValueError as err:
            raise ApiError.bad_request(str(err)) from None
        if method == "PUT":
            faults.replace(rules)
        else:
            for rule in rules:
                faults.add(**rule.to_dict())
    elif method == "DELETE":
        faults.clear()
    elif method != "GET":
        raise ApiError.method_not_allowed()
    return json.dumps({"rules": [r.to_dict() for r in faults.rules()], "counts": dict(faults.counts)}).encode()


def apply_faults(handler: Any, d: Decision) -> bool:
    """Sleep, stall, hang up or fail ``handler``'s request as decided; False when it must not be served."""
    if d.latency:
        time.sleep(d.latency)
    if d.stall:
        handler.server.faults.stall_event().wait(d.stall)
    if d.drop:
        handler.close_connection = True
        try:
            handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return False
    if d.error_code == 429:
        err = ApiError(429, "TooManyRequests", "Too many requests, please try again later.",
                       {"retryAfterSeconds": d.retry_after}, {"Retry-After": str(d.retry_after)})
        handler._send_error(err)
        return False
    if d.error_code:
        handler._send_error(ApiError(d.error_code, "InternalError",
                                  "Internal error occurred: injected fault"))
        return False
    return True
