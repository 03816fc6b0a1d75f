"""Reading config files as a user sees it: every problem at once, each with its file, line and field path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from componentbase.componentconfig import (
    DebuggingConfiguration,
    DecodeError,
    LeaderElectionConfiguration,
)
from tests.config.schemetypes import (
    API,
    SCHEME,
    Mode,
    Plugin,
    Profile,
    SchedulerConfig,
    default_scheduler,
    doc,
    errors_of,
)


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
    default_scheduler(expected)
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
        ("podMaxBackoff: 15x", 'podMaxBackoff: Invalid value: "15x": time: unknown unit "x" in duration "15x"'),
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
        ("=", ["sched.yaml: the document must be a map of fields"]),  # YAML's value tag: a scalar without a line
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

