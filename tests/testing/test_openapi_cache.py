"""The OpenAPI documents a process keeps across servers: each server still answers for its own kinds."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration


def _crd(size_type: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": size_type}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.cache.example.com"},
            "spec": {"group": "cache.example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def _get(server: LoopbackAPIServer, path: str) -> tuple[str, Any]:
    with urllib.request.urlopen(server.url + path, timeout=30) as resp:
        return resp.headers["ETag"], json.loads(resp.read())


def _size(server: LoopbackAPIServer) -> tuple[str, str]:
    """The type of a Gadget's spec.size in the server's v3 group document and in its v2 document."""
    _, v3 = _get(server, "/openapi/v3/apis/cache.example.com/v1")
    _, v2 = _get(server, "/openapi/v2")
    return (v3["components"]["schemas"]["com.example.cache.v1.Gadget"]["properties"]["spec"]["properties"]["size"]
            ["type"], v2["definitions"]["com.example.cache.v1.Gadget"]["properties"]["spec"]["properties"]["size"]
            ["type"])


def test_servers_with_one_kind_of_different_schemas_each_serve_their_own(tmp_path: Path) -> None:
    """A CRD's schema is part of what a kept document depends on, though its ``Resource`` compares without it."""
    for size_type in ("string", "integer", "string"):
        crds = tmp_path / size_type
        crds.mkdir(exist_ok=True)
        (crds / "gadgets.yaml").write_text(json.dumps(_crd(size_type)))
        with LoopbackAPIServer(crd_dirs=[crds]) as server:
            assert _size(server) == (size_type, size_type)


def test_a_second_server_serves_the_same_builtin_documents() -> None:
    with LoopbackAPIServer() as first, LoopbackAPIServer() as second:
        for path in ("/openapi/v2", "/openapi/v3/apis/apps/v1", "/openapi/v3"):
            assert _get(first, path) == _get(second, path)
