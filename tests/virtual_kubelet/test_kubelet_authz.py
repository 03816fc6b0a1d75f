"""What a request to the kubelet API asks the API server: the kubelet's attributes, so kubelet RBAC applies."""

from __future__ import annotations

import pytest

from componentbase_examples.virtual_kubelet.kubeletapi import request_attributes

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("method", "path", "verb", "subresource"), [
    ("GET", "/containerLogs/default/web/c", "get", "proxy"),
    ("GET", "/pods", "get", "proxy"),
    ("GET", "/runningpods/", "get", "proxy"),
    ("POST", "/exec/default/web/c", "create", "proxy"),
    ("GET", "/exec/default/web/c", "get", "proxy"),  # a WebSocket upgrade, as the kubelet sees it
    ("GET", "/stats/summary", "get", "stats"),
    ("GET", "/metrics", "get", "metrics"),
    ("GET", "/metrics/cadvisor", "get", "metrics"),
    ("GET", "/logs/", "get", "log"),
    ("GET", "/logsx", "get", "proxy"),
    ("DELETE", "/pods", "delete", "proxy"),
])
def test_requests_are_asked_about_a_subresource_of_this_node(method: str, path: str, verb: str,
                                                             subresource: str) -> None:
    attrs = request_attributes("vk-1", method, path)
    assert (attrs.verb, attrs.resource, attrs.subresource, attrs.group, attrs.version, attrs.name) == \
        (verb, "nodes", subresource, "", "v1", "vk-1")
    assert attrs.namespace == ""
