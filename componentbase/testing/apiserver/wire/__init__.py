"""Bytes in and out: JSON (orjson), the request head parser, kube's protobuf envelope and messages, gnostic's
OpenAPI v2 protobuf, the decoder's type errors and ``fieldValidation``, and the ``Request``/``Reply`` the verb
handlers take and give.
"""
