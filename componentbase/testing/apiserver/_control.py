"""``/_loopback/faults``: the faults of a server in another process, set over HTTP (``--help`` of the CLI)."""

from __future__ import annotations

import json

from ._wire import decode_json
from .errors import ApiError
from .faults import Faults, rules_from

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
