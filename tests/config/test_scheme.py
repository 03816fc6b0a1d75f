"""What a user of a config file sees: exact error lines, and files that read back into equal objects."""

from __future__ import annotations

import enum
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest

from componentbase.componentconfig import (
    JSON_NAME,
    ClientConnectionConfiguration,
    DebuggingConfiguration,
    DecodeError,
    LeaderElectionConfiguration,
    Scheme,
    decode_as,
    structure,
    to_dict,
    unstructure,
)
from componentbase.componentconfig import _scheme as scheme_mod
from componentbase.util import Duration

API = "example.config.k8s.io/v1"


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


@attrs.define(kw_only=True)
class Plugin:
    name: str
    weight: int | None = None
    args: dict[str, Any] = attrs.Factory(dict)


@attrs.define(kw_only=True)
class Profile:
    scheduler_name: str = "default-scheduler"
    percentage_of_nodes_to_score: int | None = None
    plugins: list[Plugin] = attrs.Factory(list)
    plugin_sets: dict[str, list[Plugin]] = attrs.Factory(dict)
    mode: Mode = Mode.SAFE
    phase: Literal["early", "late"] = "early"


@attrs.define(kw_only=True)
class SchedulerConfig:
    parallelism: int = 16
    qps_scale: float = 1.0
    enable_profiling: bool = True
    leader_election: LeaderElectionConfiguration = attrs.Factory(LeaderElectionConfiguration)
    client_connection: ClientConnectionConfiguration = attrs.Factory(ClientConnectionConfiguration)
    debugging: DebuggingConfiguration | None = None
    profiles: list[Profile] = attrs.Factory(list)
    pod_max_backoff: Duration = attrs.field(default=Duration(10), converter=Duration)
    bind_timeout: Duration | None = None
    labels: dict[str, str] = attrs.Factory(dict)
    extenders: list[dict[str, Any]] = attrs.Factory(list)
    raw: Any = None
    kube_api_qps: float = attrs.field(default=5.0, metadata={JSON_NAME: "kubeAPIQPS"})


@attrs.define(kw_only=True)
class Empty:
    pass


@attrs.define(kw_only=True)
class ProviderConfig:
    endpoint: str
    timeout: Duration = attrs.field(default=Duration(30), converter=Duration)


def _default_scheduler(cfg: SchedulerConfig) -> None:
    if not cfg.profiles:
        cfg.profiles.append(Profile())
    if not cfg.leader_election.resource_name:
        cfg.leader_election.resource_name = "kube-scheduler"


def make_scheme() -> Scheme:
    s = Scheme()
    s.register(SchedulerConfig, API, "SchedulerConfiguration", defaulter=_default_scheduler)
    s.register(Empty, API, "Empty")
    return s


SCHEME = make_scheme()


def doc(body: str, kind: str = "SchedulerConfiguration") -> str:
    return f"apiVersion: {API}\nkind: {kind}\n" + textwrap.dedent(body)


def errors_of(text: str, source: str = "sched.yaml") -> list[str]:
    with pytest.raises(DecodeError) as info:
        SCHEME.decode(text, source)
    return str(info.value).splitlines()


# ---------------------------------------------------------------------------------------------------
# Decoding


@pytest.mark.unit
def test_decode_fills_defaults_and_runs_the_defaulter() -> None:
    cfg = SCHEME.decode(doc("parallelism: 4\n"))
    assert isinstance(cfg, SchedulerConfig)
    assert cfg.parallelism == 4
    assert cfg.leader_election == LeaderElectionConfiguration(resource_name="kube-scheduler")
    assert cfg.profiles == [Profile()]
    assert cfg.pod_max_backoff == 10.0 and str(cfg.pod_max_backoff) == "10s"


@pytest.mark.unit
def test_decode_reads_every_supported_type() -> None:
    cfg = SCHEME.decode(doc("""\
        parallelism: 8
        qpsScale: 2
        kubeAPIQPS: 7.5
        enableProfiling: false
        leaderElection:
          leaseDuration: 1m30s
        debugging: {enableProfiling: true}
        profiles:
        - schedulerName: mine
          percentageOfNodesToScore: 50
          mode: fast
          phase: late
          plugins:
          - name: NodeAffinity
            weight: 2
            args: {addedAffinity: {terms: [1, "two", null]}}
          pluginSets:
            score: [{name: A}]
        podMaxBackoff: 500ms
        bindTimeout: 2s
        labels: {a: b}
        extenders: [{urlPrefix: "http://x"}]
        raw: [1, {b: true}]
        """))
    assert isinstance(cfg, SchedulerConfig)
    assert cfg.qps_scale == 2.0 and type(cfg.qps_scale) is float
    assert cfg.kube_api_qps == 7.5
    assert cfg.leader_election.lease_duration == 90.0
    assert cfg.debugging == DebuggingConfiguration(enable_profiling=True)
    profile = cfg.profiles[0]
    assert profile.mode is Mode.FAST and profile.phase == "late"
    args = {"addedAffinity": {"terms": [1, "two", None]}}
    assert profile.plugins == [Plugin(name="NodeAffinity", weight=2, args=args)]
    assert profile.plugin_sets == {"score": [Plugin(name="A")]}
    assert cfg.pod_max_backoff == 0.5 and cfg.bind_timeout == 2.0
    assert cfg.labels == {"a": "b"} and cfg.extenders == [{"urlPrefix": "http://x"}]
    assert cfg.raw == [1, {"b": True}] and type(cfg.raw) is list and type(cfg.raw[1]) is dict


@pytest.mark.unit
def test_decode_accepts_json() -> None:
    text = json.dumps({"apiVersion": API, "kind": "SchedulerConfiguration", "parallelism": 3,
                       "leaderElection": {"leaderElect": False}})
    cfg = SCHEME.decode(text)
    assert isinstance(cfg, SchedulerConfig)
    assert cfg.parallelism == 3 and cfg.leader_election.leader_elect is False


@pytest.mark.unit
def test_a_header_only_document_is_the_defaulted_config() -> None:
    cfg = SCHEME.decode(doc(""))
    expected = SchedulerConfig()
    _default_scheduler(expected)
    assert cfg == expected


@pytest.mark.unit
def test_every_problem_is_reported_with_file_line_and_path() -> None:
    text = doc("""\
        parallelism: x
        leaderElection:
          leaseDuration: abc
          leaderElect: true
          leaderElect: false
        profiles:
        - schedulerName: a
          foo: 1
          plugins:
          - name: A
            bogus: {}
          - weight: 1
        enableProfiling: "true"
        """)
    assert errors_of(text) == [
        'sched.yaml:3: parallelism: Invalid value: "x": must be an integer',
        'sched.yaml:5: leaderElection.leaseDuration: Invalid value: "abc": time: invalid duration "abc"',
        'sched.yaml:7: key "leaderElect" already set in map',
        'sched.yaml:10: unknown field "profiles[0].foo"',
        'sched.yaml:13: unknown field "profiles[0].plugins[0].bogus"',
        "sched.yaml:14: profiles[0].plugins[1].name: Required value",
        'sched.yaml:15: enableProfiling: Invalid value: "true": must be true or false',
    ]


@pytest.mark.unit
def test_errors_are_decode_errors_of_located_lines() -> None:
    with pytest.raises(DecodeError) as info:
        SCHEME.decode(doc("parallelism: x\nfoo: 1\n"), "sched.yaml")
    err = info.value
    assert len(err) == 2
    assert [(e.source, e.line) for e in err.errors] == [("sched.yaml", 3), ("sched.yaml", 4)]  # type: ignore[attr-defined]
    assert all(isinstance(e, ValueError) for e in err)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("parallelism: true", 'parallelism: Invalid value: true: must be an integer'),
        ("parallelism: 1.5", "parallelism: Invalid value: 1.5: must be an integer"),
        ("parallelism: null", "parallelism: Invalid value: null: must be an integer"),
        ("parallelism:", "parallelism: Invalid value: null: must be an integer"),
        ("qpsScale: false", "qpsScale: Invalid value: false: must be a number"),
        ("qpsScale: fast", 'qpsScale: Invalid value: "fast": must be a number'),
        ("enableProfiling: 1", "enableProfiling: Invalid value: 1: must be true or false"),
        ("enableProfiling: yes", 'enableProfiling: Invalid value: "yes": must be true or false'),
        ("labels: {a: 1}", "labels[a]: Invalid value: 1: must be a string"),
        ("labels: [a]", "labels: Invalid value: must be a map, not a list"),
        ("profiles: {a: 1}", "profiles: Invalid value: must be a list, not a map"),
        ("profiles: abc", 'profiles: Invalid value: "abc": must be a list'),
        ("profiles: [1]", "profiles[0]: Invalid value: 1: must be a map"),
        ("leaderElection: 5", "leaderElection: Invalid value: 5: must be a map"),
        ("leaderElection: {resourceName: [x]}",
         "leaderElection.resourceName: Invalid value: must be a string, not a list"),
        ("podMaxBackoff: 15", 'podMaxBackoff: Invalid value: 15: must be a duration string such as "1m30s"'),
        ("podMaxBackoff: 15x", 'podMaxBackoff: Invalid value: "15x": time: invalid duration "15x"'),
        ("bindTimeout: 10", 'bindTimeout: Invalid value: 10: must be a duration string such as "1m30s"'),
        ("profiles: [{mode: slow}]",
         'profiles[0].mode: Unsupported value: "slow": supported values: "fast", "safe"'),
        ("profiles: [{phase: mid}]",
         'profiles[0].phase: Unsupported value: "mid": supported values: "early", "late"'),
        ("profiles: [{pluginSets: {score: [{name: 1}]}}]",
         "profiles[0].pluginSets[score][0].name: Invalid value: 1: must be a string"),
        ("labels: {1: a}", "labels[1]: Invalid value: 1: keys must be strings"),
    ],
)
def test_wrong_types(body: str, line: str) -> None:
    assert errors_of(doc(body + "\n")) == [f"sched.yaml:3: {line}"]


@pytest.mark.unit
def test_unknown_fields_at_depth_name_the_key_line() -> None:
    text = doc("""\
        clientConnection:
          qps: 5
          kubeConfig: /etc/k
        profiles:
        - plugins:
          - name: A
            args: {anything: goes}
            wieght: 3
        """)
    assert errors_of(text) == [
        'sched.yaml:5: unknown field "clientConnection.kubeConfig"',
        'sched.yaml:10: unknown field "profiles[0].plugins[0].wieght"',
    ]


@pytest.mark.unit
def test_duplicate_keys_are_all_reported_at_every_depth() -> None:
    text = doc("""\
        parallelism: 1
        profiles:
        - schedulerName: a
          schedulerName: b
        parallelism: 2
        labels: {x: a, x: b}
        """)
    assert errors_of(text) == [
        'sched.yaml:6: key "schedulerName" already set in map',
        'sched.yaml:7: key "parallelism" already set in map',
        'sched.yaml:8: key "x" already set in map',
    ]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (f"apiVersion: {API}\nkind: Foo\n", [f'sched.yaml: no kind "Foo" is registered for version "{API}"']),
        ("apiVersion: other/v9\nkind: SchedulerConfiguration\n",
         ['sched.yaml: no kind "SchedulerConfiguration" is registered for version "other/v9"']),
        ("kind: SchedulerConfiguration\n", ["sched.yaml: apiVersion is missing"]),
        (f"apiVersion: {API}\n", ["sched.yaml: kind is missing"]),
        ("", ["sched.yaml: apiVersion is missing", "sched.yaml: kind is missing"]),
        ("parallelism: 1\n", ["sched.yaml: apiVersion is missing", "sched.yaml: kind is missing"]),
        ("apiVersion: 1\nkind: SchedulerConfiguration\n",
         ["sched.yaml:1: apiVersion: Invalid value: 1: must be a string"]),
        ("- a\n- b\n", ["sched.yaml:1: the document must be a map of fields"]),
    ],
)
def test_header_problems(text: str, lines: list[str]) -> None:
    assert errors_of(text) == lines


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "line"),
    [
        (doc("parallelism: 1\n  bad: 2\n"), "sched.yaml:4: mapping values are not allowed here"),
        (doc("labels: {a: b\n"),
         "sched.yaml:4: while parsing a flow mapping at line 3, expected ',' or '}', but got '<stream end>'"),
        (doc("name: \"unterminated\n"),
         "sched.yaml:4: while scanning a quoted scalar at line 3, found unexpected end of stream"),
        (doc("a: 1\n---\nb: 2\n"),
         "sched.yaml:4: expected a single document in the stream at line 1, but found another document"),
    ],
)
def test_yaml_syntax_errors_name_their_line(text: str, line: str) -> None:
    assert errors_of(text) == [line]


@pytest.mark.unit
def test_decode_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("sched.yaml").write_text(doc("parallelism: 2\n"))
    cfg = SCHEME.decode_file("sched.yaml")
    assert isinstance(cfg, SchedulerConfig) and cfg.parallelism == 2
    Path("bad.yaml").write_text(doc("parallelism: 2\nfoo: 1\n"))
    with pytest.raises(DecodeError) as info:
        SCHEME.decode_file(Path("bad.yaml"))
    assert str(info.value) == 'bad.yaml:4: unknown field "foo"'


@pytest.mark.unit
def test_missing_file_reads_like_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DecodeError) as info:
        SCHEME.decode_file("sched.yaml")
    assert str(info.value) == "open sched.yaml: no such file or directory"
    Path("dir.yaml").mkdir()
    with pytest.raises(DecodeError) as info:
        SCHEME.decode_file("dir.yaml")
    assert str(info.value) == "open dir.yaml: is a directory"


# ---------------------------------------------------------------------------------------------------
# Encoding


@pytest.mark.unit
def test_encode_is_header_first_declaration_order_camel_case() -> None:
    cfg = SchedulerConfig(
        profiles=[Profile(plugins=[Plugin(name="A", args={"z": 1, "a": [True, None]})])],
        bind_timeout=Duration("1m30s"),
        labels={"b": "2", "a": "true"},
    )
    _default_scheduler(cfg)
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
          contentType: application/json
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
    _default_scheduler(cfg)
    data = SCHEME.to_dict(cfg)
    assert list(data)[:3] == ["apiVersion", "kind", "parallelism"]
    assert data["leaderElection"]["leaseDuration"] == "15s" and data["bindTimeout"] == "2s"
    assert type(data["leaderElection"]["leaseDuration"]) is str
    assert json.loads(json.dumps(data)) == data
    assert to_dict(cfg) == {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}


@pytest.mark.unit
def test_write_file_round_trips(tmp_path: Path) -> None:
    cfg = SchedulerConfig(parallelism=3)
    _default_scheduler(cfg)
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
    _default_scheduler(cfg)  # decode defaults, so only a defaulted config reads back unchanged
    for obj in (cfg, Empty()):
        text = SCHEME.encode(obj)
        again = SCHEME.decode(text)
        assert again == obj, text
        assert SCHEME.encode(again) == text  # deterministic
        json.dumps(SCHEME.to_dict(obj))


@pytest.mark.unit
def test_round_trip_of_a_defaulted_config_with_empty_and_none_values() -> None:
    cfg = SchedulerConfig(profiles=[Profile(plugins=[], plugin_sets={"x": []})], debugging=None, raw={"k": None})
    _default_scheduler(cfg)
    assert SCHEME.decode(SCHEME.encode(cfg)) == cfg


# ---------------------------------------------------------------------------------------------------
# Registration, non-registered types


@pytest.mark.unit
def test_register_rules() -> None:
    s = Scheme()
    s.register(SchedulerConfig, API, "SchedulerConfiguration")
    s.register(SchedulerConfig, API, "SchedulerConfiguration")  # the same registration again is fine
    with pytest.raises(ValueError, match='kind "SchedulerConfiguration" is already registered'):
        s.register(Empty, API, "SchedulerConfiguration")
    with pytest.raises(TypeError, match="not an attrs class"):
        s.register(dict, API, "Dict")

    @s.kind("example.io/v2", "Empty")
    @attrs.define
    class Local:
        pass

    assert s.kind_of(Local()) == ("example.io/v2", "Empty")
    with pytest.raises(ValueError, match="no kind is registered for the type"):
        s.encode(Plugin(name="x"))


@pytest.mark.unit
def test_structure_and_decode_as_for_non_registered_types() -> None:
    assert structure({"endpoint": "unix:///x", "timeout": "5s"}, ProviderConfig) == ProviderConfig(
        endpoint="unix:///x", timeout=Duration(5))
    with pytest.raises(DecodeError) as info:
        structure({"timeout": 5, "extra": 1}, ProviderConfig, "provider")
    assert str(info.value).splitlines() == [
        "provider: endpoint: Required value",
        'provider: timeout: Invalid value: 5: must be a duration string such as "1m30s"',
        'provider: unknown field "extra"',
    ]
    with pytest.raises(DecodeError) as info:
        decode_as("endpoint: x\ntimeout: 1\n", ProviderConfig, "p.yaml")
    assert str(info.value) == 'p.yaml:2: timeout: Invalid value: 1: must be a duration string such as "1m30s"'
    assert unstructure(ProviderConfig(endpoint="e")) == {"endpoint": "e", "timeout": "30s"}
    assert unstructure({"b": [Duration(1)], "a": Mode.FAST}) == {"a": "fast", "b": ["1s"]}
    with pytest.raises(TypeError, match="cannot encode a object"):
        unstructure(object())


@pytest.mark.process
def test_importing_the_scheme_stays_light() -> None:
    code = ("import sys, componentbase.componentconfig._scheme\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'kubernetes', 'cattrs', 'ruamel'}))")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    assert "kubernetes" not in out.stderr


@pytest.mark.unit
def test_module_namespace() -> None:
    assert set(scheme_mod.__all__) <= set(dir(scheme_mod))


@attrs.define(kw_only=True)
class Unsupported:
    either: int | str = 1


@pytest.mark.unit
def test_an_unsupported_field_type_is_a_program_error_not_a_file_error() -> None:
    import cattrs

    with pytest.raises(cattrs.errors.StructureHandlerNotFoundError):
        decode_as("either: 1\n", Unsupported)


@pytest.mark.unit
def test_new_is_what_an_empty_document_decodes_to() -> None:
    from examples.scheduler.config import API_VERSION, KIND, SCHEME

    assert SCHEME.new(API_VERSION, KIND) == SCHEME.decode(f"apiVersion: {API_VERSION}\nkind: {KIND}\n")
    with pytest.raises(ValueError, match='no kind "Nope" is registered for version "x/v1"'):
        SCHEME.new("x/v1", "Nope")
