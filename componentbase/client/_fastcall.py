"""One API call with a body the component built itself, through the official client's public request API.

The generated methods (``CoreV1Api(api).create_namespaced_event(ns, body)``) first validate every argument
with pydantic, turning a dict body into a model and back: about 0.05-0.07 ms of a 0.45 ms call, per event,
binding or status patch. :func:`request` skips that step: it builds the request with the client's
``param_serialize`` (default headers, cookie, auth, path quoting) and sends it with ``call_api`` (so a
rate-limited client waits for its token), the same two public methods the generated code calls; a non-2xx
answer raises the ``ApiException`` those methods raise. The server still validates the body. A dict or list
body also skips ``param_serialize``'s copy of it (a call to ``sanitize_for_serialization`` per node, 14% of
the instructions of a pod status patch): the client's ``json.dumps`` writes it as it is, and only a body
holding what JSON cannot (a datetime, a model) is sanitized, after ``json.dumps`` refused it unsent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["request"]

#: What a dict body of a PATCH means when no content type is given, as the generated patch methods send it.
_STRATEGIC_MERGE = "application/strategic-merge-patch+json"
_JSON_PATCH = "application/json-patch+json"


def request(
    api_client: Any,
    method: str,
    path: str,
    *,
    path_params: Mapping[str, str] | None = None,
    query: Sequence[tuple[str, str]] = (),
    body: Any = None,
    content_type: str | None = None,
    timeout: float | tuple[float, float] | None = None,
) -> Any:
    """``method path`` (``"/api/v1/namespaces/{namespace}/events"`` with ``path_params``) on ``api_client``.

    Returns the raw response, as a generated method with ``_preload_content=False`` does: ``read()`` it, so
    its connection goes back to the pool. A PATCH with a dict body is a strategic merge patch, with a list a
    JSON patch, unless ``content_type`` says otherwise. ``timeout`` is the client's ``_request_timeout``.
    """
    headers = {"Accept": "application/json"}
    if content_type is None and method == "PATCH":
        content_type = _JSON_PATCH if isinstance(body, list) else _STRATEGIC_MERGE
    if content_type is not None:
        headers["Content-Type"] = content_type
    # A dict or list body goes to call_api as it is: param_serialize would copy it node by node to turn models
    # and datetimes into JSON (about 30 us for a pod status); the client's json.dumps sends it either way.
    plain = isinstance(body, (dict, list))
    verb, url, header_params, payload, post = api_client.param_serialize(
        method, path, path_params=dict(path_params or {}), query_params=list(query), header_params=headers,
        body=None if plain else body, auth_settings=["BearerToken"])
    try:
        resp = api_client.call_api(verb, url, header_params, body if plain else payload, post,
                                   _request_timeout=timeout)
    except TypeError as err:
        if not plain or "is not JSON serializable" not in str(err):
            raise
        # json.dumps met a datetime or a model in it before anything was sent: serialize as the generated code does.
        resp = api_client.call_api(verb, url, header_params, api_client.sanitize_for_serialization(body), post,
                                   _request_timeout=timeout)
    if not 200 <= resp.status <= 299:
        resp.read()
        from kubernetes.client.exceptions import ApiException  # slow import, kept off this package's import

        raise ApiException.from_response(http_resp=resp, body=None, data=None)
    return resp.response
