"""/healthz, /livez, /readyz: verbose listing, exclusions, single checks, leader election and shutdown."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import componentbase
from componentbase.leaderelection import (
    HealthzAdaptor,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
)
from componentbase.serving import SecureServer, start_serving
from componentbase.testing import LoopbackAPIServer, eventually

from .conftest import ADMIN, NOT_YET, get


def serving_config(kubeconfig: str = "") -> componentbase.Config:
    """A Config with serving on 127.0.0.1 (an ephemeral port once started), delegating to ``kubeconfig``."""
    opts = componentbase.ServingOptions.for_component(10259, "test")
    opts.secure_serving.bind_address = "127.0.0.1"
    opts.authentication.kubeconfig = kubeconfig
    opts.authorization.kubeconfig = kubeconfig
    config = componentbase.Config(configz_registry=componentbase.serving.configz.Registry())
    opts.apply_to(config)
    assert config.secure_serving is not None
    config.secure_serving = attrs.evolve(config.secure_serving, port=0)
    return config


def failing() -> None:
    raise RuntimeError("informers not synced: pods")


@pytest.fixture
def server(apiserver: LoopbackAPIServer) -> Iterator[tuple[SecureServer, threading.Event]]:
    config = serving_config(apiserver.kubeconfig_path)
    config.readyz_checks.append(componentbase.serving.NamedCheck("informer-sync", failing))
    stopping = threading.Event()
    srv = start_serving(config, stopping, [componentbase.serving.NamedCheck("log", lambda: None)])
    yield srv, stopping
    srv.stop()


@pytest.mark.integration
def test_root_checks_plain_verbose_and_excluded(server: tuple[SecureServer, threading.Event]) -> None:
    srv, _ = server
    assert get(srv.port, "/healthz") == (200, "ok")
    assert get(srv.port, "/livez?verbose") == (200, "[+]ping ok\n[+]log ok\nlivez check passed\n")
    assert get(srv.port, "/healthz?verbose=1&exclude=log") == (200, "[+]ping ok\n[+]log excluded: ok\n"
                                                                    "healthz check passed\n")
    assert get(srv.port, "/healthz?verbose&exclude=nosuch") == (
        200, '[+]ping ok\n[+]log ok\nwarn: some health checks cannot be excluded: no matches for "nosuch"\n'
             "healthz check passed\n")
    # a failing check: always verbose, reason withheld on the public endpoint
    assert get(srv.port, "/readyz") == (500, "[+]ping ok\n[+]log ok\n[+]shutdown ok\n"
                                             "[-]informer-sync failed: reason withheld\nreadyz check failed\n")
    assert get(srv.port, "/readyz?exclude=informer-sync")[0] == 200


@pytest.mark.integration
def test_one_check_needs_authorization_and_tells_the_reason(server: tuple[SecureServer, threading.Event]) -> None:
    srv, _ = server
    assert get(srv.port, "/readyz/informer-sync")[0] == 401
    assert get(srv.port, "/readyz/informer-sync", token=ADMIN) == (
        500, "internal server error: informers not synced: pods\n")
    assert get(srv.port, "/healthz/log", token=ADMIN) == (200, "ok")
    assert get(srv.port, "/healthz/informer-sync", token=ADMIN)[0] == 404  # a readyz-only check


@pytest.mark.integration
def test_readyz_fails_once_stopping(server: tuple[SecureServer, threading.Event]) -> None:
    srv, stopping = server
    stopping.set()
    status, body = get(srv.port, "/readyz?exclude=informer-sync")
    assert status == 500 and "[-]shutdown failed: reason withheld\n" in body
    assert get(srv.port, "/livez") == (200, "ok")


@pytest.mark.integration
def test_a_leader_that_cannot_renew_and_does_not_stop_fails_healthz(apiserver: LoopbackAPIServer) -> None:
    api = apiserver.api_client()
    watchdog = HealthzAdaptor(0.0)
    stuck = threading.Event()
    leading = threading.Event()

    def work(stop: threading.Event) -> None:
        leading.set()
        stuck.wait(30)  # ignores stop: the case the watchdog exists for

    config = LeaderElectionConfig(
        lock=LeaseLock("default", "watchdog-test", api), identity="me",
        callbacks=LeaderCallbacks(on_started_leading=work, on_stopped_leading=lambda: None),
        lease_duration=1.0, renew_deadline=0.6, retry_period=0.2, stop_grace=0.1, watchdog=watchdog)
    srv = start_serving(serving_config(apiserver.kubeconfig_path), threading.Event(), [watchdog])
    thread = LeaderElector(config).run_in_thread()
    try:
        assert leading.wait(10)
        assert get(srv.port, "/healthz?verbose") == (200, "[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n")
        apiserver.faults.set(error_rate=1.0, resources=("leases",))
        eventually(lambda: get(srv.port, "/healthz")[0] == 500, timeout=10, interval=0.1, ignoring=NOT_YET)
        assert get(srv.port, "/healthz") == (500, "[+]ping ok\n[-]leaderElection failed: reason withheld\n"
                                                  "healthz check failed\n")
        status, body = get(srv.port, "/healthz/leaderElection", token=ADMIN)
        assert status == 500 and "failed election to renew leadership on lease" in body
    finally:
        stuck.set()
        apiserver.faults.clear()
        thread.stop(5)
        srv.stop()
        api.close()


@pytest.mark.unit
def test_serving_without_a_port_is_an_error_not_a_silent_no_op(tmp_path: Path) -> None:
    config = componentbase.Config()
    with pytest.raises(ValueError, match="not configured"):
        start_serving(config, threading.Event())


@pytest.mark.integration
def test_configz_follows_a_changed_config_within_a_second(apiserver: LoopbackAPIServer) -> None:
    config = serving_config(apiserver.kubeconfig_path)
    assert config.configz_registry is not None
    entry = config.configz_registry.new("componentconfig")
    entry.set({"kubeconfig": {"users": [{"user": {"token": "abc", "client-key-data": "S0VZ"}}]}, "qps": 5})
    srv = start_serving(config, threading.Event())
    try:
        status, body = get(srv.port, "/configz", token=ADMIN)
        assert status == 200
        assert json.loads(body) == {"componentconfig": {"kubeconfig": {"users": [
            {"user": {"token": "<redacted>", "client-key-data": "<redacted>"}}]}, "qps": 5}}
        entry.set({"qps": 6})
        eventually(lambda: json.loads(get(srv.port, "/configz", token=ADMIN)[1]) == {"componentconfig": {"qps": 6}},
                   timeout=3, interval=0.1, ignoring=NOT_YET)
    finally:
        srv.stop()
