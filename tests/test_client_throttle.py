"""``clientConnection.qps``/``burst`` limit a component's calls on the client side, as client-go's do.

Against the loopback API server through the official client; what is checked is what a user sees: the
``Waited for ... due to client-side throttling`` line client-go logs at -v=3 for a wait over 50 ms.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kubernetes.client import CoreV1Api

import componentbase
from componentbase.client import describe_client
from componentbase.testing import LoopbackAPIServer

pytestmark = pytest.mark.integration

THROTTLED = "due to client-side throttling, not priority and fairness, request: GET:"


def waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if THROTTLED in r.getMessage()]


def list_namespaces(api: Any, times: int) -> None:
    v1 = CoreV1Api(api)
    for _ in range(times):
        v1.list_namespace(_preload_content=False).read()


def new_client(server: LoopbackAPIServer, **limits: Any) -> Any:
    cc = componentbase.ClientConnectionConfiguration(kubeconfig=server.kubeconfig_path, **limits)
    return componentbase.new_api_client(cc)


def test_calls_past_the_burst_wait_for_their_turn_and_say_so(
        kube_apiserver: LoopbackAPIServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(componentbase.V(3), "componentbase.client")
    with new_client(kube_apiserver, qps=4, burst=2) as api:
        list_namespaces(api, 2)
        assert waits(caplog) == []
        list_namespaces(api, 2)
    lines = waits(caplog)
    assert len(lines) == 2, lines
    assert all(line.startswith("Waited for ") and line.endswith("/api/v1/namespaces") for line in lines)
    assert kube_apiserver.url in lines[0]


def test_a_negative_qps_turns_the_limit_off(kube_apiserver: LoopbackAPIServer,
                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(componentbase.V(3), "componentbase.client")
    with new_client(kube_apiserver, qps=-1, burst=1) as api:
        list_namespaces(api, 20)
    assert waits(caplog) == []


def test_a_wait_over_a_second_is_logged_at_info(kube_apiserver: LoopbackAPIServer,
                                                caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "componentbase.client")
    with new_client(kube_apiserver, qps=0.6, burst=1) as api:
        list_namespaces(api, 2)  # the second waits about 1.7 s
    (record,) = [r for r in caplog.records if THROTTLED in r.getMessage()]
    assert record.levelno == logging.INFO


def test_a_client_rebuilt_in_another_process_keeps_the_limit(
        kube_apiserver: LoopbackAPIServer, caplog: pytest.LogCaptureFixture) -> None:
    """The event sender's child process builds its client from a description: the limit goes with it."""
    caplog.set_level(componentbase.V(3), "componentbase.client")
    with new_client(kube_apiserver, qps=4, burst=1) as api:
        description = describe_client(api)
    with description.new_api_client() as rebuilt:
        list_namespaces(rebuilt, 2)
    assert len(waits(caplog)) == 1
    unlimited = describe_client(new_client(kube_apiserver, qps=-1))
    with unlimited.new_api_client() as rebuilt:
        list_namespaces(rebuilt, 5)
    assert len(waits(caplog)) == 1


def test_a_call_whose_timeout_would_pass_before_its_turn_is_not_sent(kube_apiserver: LoopbackAPIServer) -> None:
    """As client-go's Wait: refused at once rather than sent late (a lease renewal given up on stays unsent)."""
    from componentbase.client import ThrottledTimeout

    with new_client(kube_apiserver, qps=0.2, burst=1) as api:
        v1 = CoreV1Api(api)
        v1.list_namespace(_preload_content=False, _request_timeout=1).read()
        with pytest.raises(ThrottledTimeout, match=r"waiting for a token would exceed the request's 1s timeout"):
            v1.list_namespace(_preload_content=False, _request_timeout=1)
        with pytest.raises(ThrottledTimeout):
            v1.list_namespace(_preload_content=False, _request_timeout=(0.5, 0.5))
