"""Writing config files: header first, declaration order, camelCase; and what is written reads back equal."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest

from componentbase.componentconfig import (
    ClientConnectionConfiguration,
    DebuggingConfiguration,
    LeaderElectionConfiguration,
    to_dict,
)
from componentbase.util import Duration
from tests.config.schemetypes import (
    API,
    SCHEME,
    Empty,
    Mode,
    Plugin,
    Profile,
    SchedulerConfig,
    default_scheduler,
)


@pytest.mark.unit
def test_encode_is_header_first_declaration_order_camel_case() -> None:
    cfg = SchedulerConfig(
        profiles=[Profile(plugins=[Plugin(name="A", args={"z": 1, "a": [True, None]})])],
        bind_timeout=Duration("1m30s"),
        labels={"b": "2", "a": "true"},
    )
    default_scheduler(cfg)
    text = SCHEME.encode(cfg)
    assert text == textwrap.dedent(f"""\
        apiVersion: {API}
        kind: SchedulerConfiguration
        parallelism: 16
        qpsScale: 1.0
        enableProfiling: true
        leaderElection:
          leaderElect: true
          leaseDuration: 15s
          renewDeadline: 10s
          retryPeriod: 2s
          resourceLock: leases
          resourceName: kube-scheduler
          resourceNamespace: ''
        clientConnection:
          kubeconfig: ''
          acceptContentTypes: ''
          contentType: ''
          qps: 50.0
          burst: 100
        debugging: null
        profiles:
        - schedulerName: default-scheduler
          percentageOfNodesToScore: null
          plugins:
          - name: A
            weight: null
            args:
              a:
              - true
              - null
              z: 1
          pluginSets: {{}}
          mode: safe
          phase: early
        podMaxBackoff: 10s
        bindTimeout: 1m30s
        labels:
          a: 'true'
          b: '2'
        extenders: []
        raw: null
        kubeAPIQPS: 5.0
        """)
    assert SCHEME.decode(text) == cfg


@pytest.mark.unit
def test_to_dict_is_plain_json() -> None:
    cfg = SchedulerConfig(bind_timeout=Duration(2))
    default_scheduler(cfg)
    data = SCHEME.to_dict(cfg)
    assert list(data)[:3] == ["apiVersion", "kind", "parallelism"]
    assert data["leaderElection"]["leaseDuration"] == "15s" and data["bindTimeout"] == "2s"
    assert type(data["leaderElection"]["leaseDuration"]) is str
    assert json.loads(json.dumps(data)) == data
    assert to_dict(cfg) == {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}


@pytest.mark.unit
def test_write_file_round_trips(tmp_path: Path) -> None:
    cfg = SchedulerConfig(parallelism=3)
    default_scheduler(cfg)
    target = tmp_path / "out.yaml"
    SCHEME.write_file(target, cfg)
    assert target.read_text() == SCHEME.encode(cfg)
    assert SCHEME.decode_file(target) == cfg
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


# ---------------------------------------------------------------------------------------------------
# Round trip over random configs


_TRICKY_STRINGS = ["", "true", "False", "null", "~", "1", "0x1F", "1e3", "yes", "on", "15s", "a: b", "- x",
                   "#c", "  padded ", "multi\nline", "tab\there", "ünïcødé", "'quoted'", '"dq"', "{x}", "[y]",
                   "*alias", "&anchor", "!tag", "%pct", "@at", "`tick`", "a" * 200]


def _rand_str(r: random.Random) -> str:
    if r.random() < 0.5:
        return r.choice(_TRICKY_STRINGS)
    return "".join(r.choice("abcXYZ019-_./: ") for _ in range(r.randint(0, 12)))


def _rand_float(r: random.Random) -> float:
    return r.choice([0.0, -1.5, 1e20, 1e-7, 123456789.125, 0.1, r.uniform(-1e6, 1e6), float(r.randint(0, 9))])


def _rand_raw(r: random.Random, depth: int = 0) -> Any:
    kinds = ["str", "int", "float", "bool", "none"] + (["list", "dict"] * 2 if depth < 3 else [])
    kind = r.choice(kinds)
    if kind == "list":
        return [_rand_raw(r, depth + 1) for _ in range(r.randint(0, 3))]
    if kind == "dict":
        return {_rand_str(r): _rand_raw(r, depth + 1) for _ in range(r.randint(0, 3))}
    if kind == "str":
        return _rand_str(r)
    if kind == "int":
        return r.randint(-(2**40), 2**40)
    if kind == "float":
        return _rand_float(r)
    return r.random() < 0.5 if kind == "bool" else None


def _rand_duration(r: random.Random) -> Duration:
    nanos = r.choice([0, 1, 999, 1_500_000, 2_000_000_000, 90 * 10**9, 3723 * 10**9 + 5, r.randint(0, 10**15)])
    return Duration(nanos / 1e9)


def _rand_plugin(r: random.Random) -> Plugin:
    weight = None if r.random() < 0.5 else r.randint(-5, 100)
    return Plugin(name=_rand_str(r), weight=weight, args={_rand_str(r): _rand_raw(r) for _ in range(r.randint(0, 3))})


def _rand_profile(r: random.Random) -> Profile:
    return Profile(
        scheduler_name=_rand_str(r),
        percentage_of_nodes_to_score=r.choice([None, 0, 50]),
        plugins=[_rand_plugin(r) for _ in range(r.randint(0, 3))],
        plugin_sets={_rand_str(r): [_rand_plugin(r) for _ in range(r.randint(0, 2))] for _ in range(r.randint(0, 2))},
        mode=r.choice(list(Mode)),
        phase=r.choice(["early", "late"]),
    )


def _rand_scheduler(r: random.Random) -> SchedulerConfig:
    return SchedulerConfig(
        parallelism=r.randint(0, 2**31),
        qps_scale=_rand_float(r),
        enable_profiling=r.random() < 0.5,
        leader_election=LeaderElectionConfiguration(
            leader_elect=r.random() < 0.5, lease_duration=_rand_duration(r), renew_deadline=_rand_duration(r),
            retry_period=_rand_duration(r), resource_name=_rand_str(r), resource_namespace=_rand_str(r)),
        client_connection=ClientConnectionConfiguration(kubeconfig=_rand_str(r), qps=_rand_float(r),
                                                        burst=r.randint(0, 1000)),
        debugging=r.choice([None, DebuggingConfiguration(enable_profiling=True)]),
        profiles=[_rand_profile(r) for _ in range(r.randint(1, 3))],
        pod_max_backoff=_rand_duration(r),
        bind_timeout=r.choice([None, _rand_duration(r)]),
        labels={_rand_str(r): _rand_str(r) for _ in range(r.randint(0, 3))},
        extenders=[{_rand_str(r): _rand_raw(r)} for _ in range(r.randint(0, 2))],
        raw=_rand_raw(r),
        kube_api_qps=_rand_float(r),
    )


@pytest.mark.unit
@pytest.mark.parametrize("seed", range(60))
def test_random_configs_round_trip(seed: int) -> None:
    r = random.Random(seed)
    cfg = _rand_scheduler(r)
    default_scheduler(cfg)  # decode defaults, so only a defaulted config reads back unchanged
    for obj in (cfg, Empty()):
        text = SCHEME.encode(obj)
        again = SCHEME.decode(text)
        assert again == obj, text
        assert SCHEME.encode(again) == text  # deterministic
        json.dumps(SCHEME.to_dict(obj))


@pytest.mark.unit
def test_round_trip_of_a_defaulted_config_with_empty_and_none_values() -> None:
    cfg = SchedulerConfig(profiles=[Profile(plugins=[], plugin_sets={"x": []})], debugging=None, raw={"k": None})
    default_scheduler(cfg)
    assert SCHEME.decode(SCHEME.encode(cfg)) == cfg



@pytest.mark.unit
def test_a_nil_omitempty_pointer_is_left_out_as_go_leaves_it_and_reads_back() -> None:
    """kube-scheduler's v1 ``Plugin.Weight`` is ``*int32 `json:"weight,omitempty"```: a written file says
    ``- name: PrioritySort`` with no weight, not ``weight: null``."""
    import attrs

    from componentbase.componentconfig import pointer

    @attrs.define(kw_only=True)
    class Weighted:
        name: str
        weight: int | None = pointer(None, omitempty=True)
        other: int | None = pointer(None)

    assert to_dict(Weighted(name="a")) == {"name": "a", "other": None}
    assert to_dict(Weighted(name="a", weight=0)) == {"name": "a", "weight": 0, "other": None}
