"""The OpenAPI v2 document as gnostic's protobuf message: bytes a kube-apiserver sent, and schemas written field
by field as gnostic-models' OpenAPIv2.proto numbers them (kubectl reading the whole document is
test_kubectl_every_kind's)."""

from __future__ import annotations

import struct

import pytest

from componentbase.testing.apiserver.wire._gnostic import encode_document
from tests.testing.test_protobuf import lfield, vfield

pytestmark = pytest.mark.unit


def test_header_as_kube_apiserver_1_32_sent_it() -> None:
    """The first bytes of a 1.32 server's /openapi/v2 protobuf (kubectl -v=8 prints them)."""
    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "1.32"}}
    assert encode_document(doc) == bytes.fromhex("0a03322e30 1212 0a0a4b756265726e65746573 1204312e3332")


def _definition(schema: dict[str, object]) -> bytes:
    """The bytes of a document holding ``schema`` as the definition ``d``: Definitions (9) of NamedSchema."""
    return encode_document({"definitions": {"d": schema}})


def _schema_bytes(body: bytes) -> bytes:
    return lfield(9, lfield(1, lfield(1, "d") + lfield(2, body)))


def test_schema_keywords_and_vendor_extensions() -> None:
    got = _definition({"type": "object", "required": ["spec"], "description": "A thing.",
                       "properties": {"spec": {"$ref": "#/definitions/Spec"}},
                       "x-kubernetes-group-version-kind": [{"group": "", "kind": "Thing", "version": "v1"}]})
    extension = lfield(1, "x-kubernetes-group-version-kind") + lfield(2, lfield(
        2, '[{"group":"","kind":"Thing","version":"v1"}]'))  # Any.yaml: JSON is YAML to kubectl's parser
    spec = lfield(1, lfield(1, "spec") + lfield(2, lfield(1, "#/definitions/Spec")))
    assert got == _schema_bytes(lfield(22, lfield(1, "object")) + lfield(19, "spec") + lfield(4, "A thing.")
                                + lfield(25, spec) + lfield(31, extension))


def test_arrays_maps_and_numbers() -> None:
    got = _definition({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 3,
                       "minimum": 0.5, "uniqueItems": True, "default": ["a"]})
    items = lfield(22, lfield(1, "string")) + lfield(20, lfield(2, '"a"')) + lfield(20, lfield(2, '"b"'))
    assert got == _schema_bytes(lfield(22, lfield(1, "array")) + lfield(23, lfield(1, items)) + vfield(14, 3)
                                + bytes([9 << 3 | 1]) + struct.pack("<d", 0.5) + vfield(16, 1)
                                + lfield(5, lfield(2, '["a"]')))
    # additionalProperties false is written (a oneof keeps its zero), a schema one wrapped in field 1
    assert _definition({"additionalProperties": False}) == _schema_bytes(lfield(21, vfield(2, 0)))
    assert _definition({"additionalProperties": {"type": "integer"}}) == _schema_bytes(
        lfield(21, lfield(1, lfield(22, lfield(1, "integer")))))
    assert _definition({"maxLength": -1}) == _schema_bytes(bytes([11 << 3]) + b"\xff" * 9 + b"\x01")


def test_patch_operation_with_its_query_parameter() -> None:
    """What kubectl's v2 query-parameter check reads: a PATCH operation's kind and its fieldValidation."""
    op = {"x-kubernetes-group-version-kind": {"group": "", "kind": "Namespace", "version": "v1"},
          "parameters": [{"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": True},
                         {"name": "body", "in": "body", "required": True, "schema": {"type": "object"}}],
          "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/Ns"}}}}
    got = encode_document({"paths": {"/api/v1/namespaces/{name}": {
        "patch": op, "parameters": [{"name": "name", "in": "path", "required": True, "type": "string"}]}}})
    query = lfield(4, "fieldValidation") + lfield(2, "query") + lfield(6, "string") + vfield(20, 1)
    body = lfield(2, "body") + lfield(3, "body") + vfield(4, 1) + lfield(5, lfield(22, lfield(1, "object")))
    response = lfield(1, lfield(1, "200") + lfield(2, lfield(1, lfield(1, "OK") + lfield(
        2, lfield(1, lfield(1, "#/definitions/Ns"))))))
    gvk = lfield(1, "x-kubernetes-group-version-kind") + lfield(2, lfield(
        2, '{"group":"","kind":"Namespace","version":"v1"}'))
    operation = (lfield(8, lfield(1, lfield(2, lfield(3, query)))) + lfield(8, lfield(1, lfield(1, body)))
                 + lfield(9, response) + lfield(13, gvk))
    path_param = lfield(4, "name") + lfield(2, "path") + vfield(1, 1) + lfield(5, "string")
    item = lfield(8, operation) + lfield(9, lfield(1, lfield(2, lfield(4, path_param))))
    assert got == lfield(8, lfield(2, lfield(1, "/api/v1/namespaces/{name}") + lfield(2, item)))
