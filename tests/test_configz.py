"""What ``/configz`` will show: every registered config in its wire form, by name."""

from __future__ import annotations

import json
import threading
from typing import Any

import attrs
import pytest

from componentbase.componentconfig import LeaderElectionConfiguration
from componentbase.serving import configz
from componentbase.util import Duration

pytestmark = pytest.mark.unit


@attrs.define(kw_only=True)
class SchedulerConfig:
    parallelism: int = 16
    leader_election: LeaderElectionConfiguration = attrs.Factory(LeaderElectionConfiguration)
    secret_token: str = "hunter2"


def test_render_shows_wire_form_sorted_by_name() -> None:
    reg = configz.Registry()
    reg.new("kubescheduler.config.k8s.io").set(SchedulerConfig())
    reg.new("a-plain-map").set({"timeout": Duration(90), "z": 1, "b": [Duration(0.5)]})
    data = json.loads(reg.render())
    assert list(data) == ["a-plain-map", "kubescheduler.config.k8s.io"]
    assert data["a-plain-map"] == {"b": ["500ms"], "timeout": "1m30s", "z": 1}
    cfg = data["kubescheduler.config.k8s.io"]
    assert list(cfg) == ["parallelism", "leaderElection", "secretToken"]  # declaration order, camelCase
    assert cfg["leaderElection"]["leaseDuration"] == "15s"


def test_render_is_pretty_json_bytes() -> None:
    reg = configz.Registry()
    reg.new("x").set({"a": 1})
    assert reg.render() == b'{\n  "x": {\n    "a": 1\n  }\n}\n'
    assert configz.Registry().render() == b"{}\n"


def test_unset_and_unencodable_values() -> None:
    reg = configz.Registry()
    reg.new("unset")
    reg.new("odd").set(object)
    data = json.loads(reg.render())
    assert data == {"odd": "<class 'object'>", "unset": None}


def test_names_are_unique_until_deleted() -> None:
    reg = configz.Registry()
    cfg = reg.new("componentconfig")
    with pytest.raises(configz.ConfigzError) as info:
        reg.new("componentconfig")
    assert str(info.value) == 'register config "componentconfig" twice'
    reg.delete("componentconfig")
    reg.delete("never-registered")
    reg.new("componentconfig")
    cfg.set(1)  # a deleted config no longer shows
    assert json.loads(reg.render()) == {"componentconfig": None}


def test_get_returns_what_was_set() -> None:
    reg = configz.Registry()
    cfg = reg.new("c")
    value = SchedulerConfig()
    cfg.set(value)
    assert cfg.get() is value


def test_redact_hook_sees_name_and_wire_value() -> None:
    reg = configz.Registry()
    reg.new("c").set(SchedulerConfig())
    seen: list[str] = []

    def redact(name: str, value: Any) -> Any:
        seen.append(name)
        return {**value, "secretToken": "<redacted>"}

    data = json.loads(reg.render(redact=redact))
    assert seen == ["c"] and data["c"]["secretToken"] == "<redacted>"


def test_module_functions_use_the_default_registry() -> None:
    name = "test_configz.default"
    cfg = configz.new(name)
    try:
        cfg.set({"k": "v"})
        assert json.loads(configz.render())[name] == {"k": "v"}
        assert configz.default_registry().snapshot()[name] == {"k": "v"}
        with pytest.raises(configz.ConfigzError):
            configz.new(name)
    finally:
        configz.delete(name)
    assert name not in json.loads(configz.render())


def test_concurrent_set_and_render() -> None:
    reg = configz.Registry()
    cfg = reg.new("c")
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            cfg.set({"i": i})
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(200):
            assert set(json.loads(reg.render())["c"] or {"i": 0}) == {"i"}
    finally:
        stop.set()
        t.join()
