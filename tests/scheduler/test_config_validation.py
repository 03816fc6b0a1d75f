"""Config errors in kube-scheduler 1.37's words: cases of pkg/scheduler/apis/config/validation's
validation_test.go (TestValidateKubeSchedulerConfigurationV1) and validation_pluginargs_test.go
(TestValidateNodeAffinityArgs, TestValidateVolumeBindingArgs), through ``--config`` as a user sees them. Upstream's
tables pin the field path and the error type; the details are validation.go's and validation_pluginargs.go's."""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from componentbase.serving import configz
from componentbase_examples.scheduler import features
from componentbase_examples.scheduler.__main__ import new_command

pytestmark = pytest.mark.unit

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def errors(text: str, *flags: str) -> list[str]:
    """The command's error lines for a config file, the file's name left out."""
    cmd = new_command()
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "c.yaml"
        source.write_text(HEADER + text)
        code = cmd.execute([*flags, f"--config={source}"], stdout=io.StringIO(), stderr=err)
    assert code == 1
    return [line.removeprefix("Error: ").replace(f"{source}:", "") for line in err.getvalue().splitlines()
            if line.startswith("Error: ")]


ARGS = "profiles:\n- pluginConfig:\n  - name: {name}\n    args: {args}\n"
KEY_DETAIL = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize(("config", "expected"), [
    # "repeated-scheduler-name": Duplicate at profiles[1].schedulerName, the earlier field as its value
    ("profiles:\n- schedulerName: other\n- schedulerName: other\n",
     ["profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName"]),
    # "bad-resource-lock-not-leases": kube-scheduler's own check, an Invalid value
    ("leaderElection:\n  resourceLock: configmap\n",
     ['leaderElection.resourceLock: Invalid value: "configmap": resourceLock value must be "leases"']),
    # ...and only while electing
    ("leaderElection:\n  leaderElect: false\n  resourceLock: configmap\nparallelism: 0\n",
     ["parallelism: Invalid value: 0: should be an integer value greater than zero"]),
    # "scheduler-name-not-set"
    ("profiles:\n- schedulerName: me\n- schedulerName: ''\n", ["profiles[1].schedulerName: Required value"]),
    # "greater-than-100-profile-percentage-of-nodes-to-score" and the global one, in kube's order
    ("percentageOfNodesToScore: -1\nprofiles:\n- schedulerName: me\n  percentageOfNodesToScore: 101\n",
     ["profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
      "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"]),
    # "invalid-node-percentage"
    (ARGS.format(name="DefaultPreemption", args="{minCandidateNodesPercentage: 200}"),
     ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in valid range "
      "[0, 100]"]),
    # "invalid-plugin-args": another plugin's args type
    (ARGS.format(name="DefaultPreemption", args="{kind: InterPodAffinityArgs}"),
     ['profiles[0].pluginConfig[0].args: Invalid value: "InterPodAffinityArgs": has to match plugin args']),
    # "duplicated-plugin-config"
    ("profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
     ['profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"']),
], ids=["repeated-scheduler-name", "bad-resource-lock-not-leases", "resource-lock-without-election",
        "scheduler-name-not-set", "percentage-of-nodes-to-score", "invalid-node-percentage", "invalid-plugin-args",
        "duplicated-plugin-config"])
def test_configuration_validation(config: str, expected: list[str]) -> None:
    assert errors(config) == expected


def test_node_affinity_args_terms_are_parsed_as_component_helpers_parses_them() -> None:
    """TestValidateNodeAffinityArgs' "invalid added affinity": a required term's key and a preferred term's
    matchFields with two values, each at its path under addedAffinity."""
    args = ("{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
            "[{matchExpressions: [{key: 'invalid key', operator: In, values: [label-value]}]}]}, "
            "preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchFields: "
            "[{key: metadata.name, operator: In, values: [node-1, node-2]}]}}]}}")
    prefix = "profiles[0].pluginConfig[0].args.addedAffinity."
    assert errors(ARGS.format(name="NodeAffinity", args=args)) == [
        f'{prefix}requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: '
        f'Invalid value: "invalid key": {KEY_DETAIL}',
        f'{prefix}preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value: '
        '["node-1" "node-2"]: must have one element',
    ]


def test_node_affinity_args_skip_empty_terms_and_weightless_preferences() -> None:
    """NewLazyErrorNodeSelector skips empty terms, NewPreferredSchedulingTerms those of weight 0: not errors."""
    args = ("{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}, "
            "{matchExpressions: [{key: zone, operator: Gt, values: ['1.5']}]}]}, "
            "preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {matchExpressions: "
            "[{key: 'bad key', operator: Exists}]}}]}}")
    assert errors(ARGS.format(name="NodeAffinity", args=args)) == [
        "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[1].matchExpressions[0].values[0]: Invalid value: \"1.5\": for 'Gt', 'Lt' operators, "
        "the value must be an integer"]


@pytest.fixture
def gate_restored() -> Iterator[None]:
    """--feature-gates sets the process's gate, as kube's DefaultFeatureGate: put StorageCapacityScoring back."""
    yield
    features.FEATURE_GATE.set_from_map({features.STORAGE_CAPACITY_SCORING: True})


def test_volume_binding_shape_without_storage_capacity_scoring(gate_restored: None) -> None:
    """TestValidateVolumeBindingArgs' "[StorageCapacityScoring=off] error if the shape is not nil"."""
    (line,) = errors(ARGS.format(name="VolumeBinding", args="{shape: [{utilization: 1, score: 1}]}"),
                     "--feature-gates=StorageCapacityScoring=false")
    assert line.startswith("profiles[0].pluginConfig[0].args.shape: Invalid value: ")
    assert line.endswith(": unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring")


@pytest.mark.parametrize(("shape", "expected"), [
    # "[StorageCapacityScoring=on] shape points must be sorted in increasing order"
    ("[{utilization: 3, score: 3}, {utilization: 1, score: 1}]",
     ["shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"]),
    # "[StorageCapacityScoring=on] shape point: invalid utilization and score"
    ("[{utilization: -1, score: 1}, {utilization: 10, score: -1}, {utilization: 20, score: 11}, "
     "{utilization: 101, score: 1}]",
     ["shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
      "shape[1].score: Invalid value: -1: not in valid range [0, 10]",
      "shape[2].score: Invalid value: 11: not in valid range [0, 10]",
      "shape[3].utilization: Invalid value: 101: not in valid range [0, 100]"]),
], ids=["sorted", "ranges"])
def test_volume_binding_shape_with_storage_capacity_scoring(shape: str, expected: list[str]) -> None:
    prefix = "profiles[0].pluginConfig[0].args."
    assert errors(ARGS.format(name="VolumeBinding", args=f"{{shape: {shape}}}")) == [prefix + e for e in expected]
