"""The scheduler's --dry-run report ends with how full each node is and why the rest fit nowhere."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from componentbase_examples.scheduler.__main__ import new_command
from componentbase_examples.scheduler.report import bar

pytestmark = pytest.mark.unit

MANIFESTS = """\
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 1500m, memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: batch-1, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "5"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: batch-2, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "5"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: default}
spec: {schedulerName: nobody, containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m, memory: 300Mi}}}]}
"""


def test_the_report_ends_with_a_table_per_node_and_the_unschedulable_grouped_by_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MANIFESTS)
    assert new_command().execute([f"--dry-run={path}"], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    report = capsys.readouterr().out.split("Scheduled 2 of 5 pods on 2 nodes; 3 unschedulable.\n", 1)[1]
    assert report.splitlines() == [
        "",
        "NODE    CPU                       MEMORY                      PODS",
        "node-a  █░░░░░░░░░   5%  100m/2   █░░░░░░░░░   7%  300Mi/4Gi  █░░░░░░░░░  10%  1/10",
        "node-b  ████░░░░░░  38%  1500m/4  █░░░░░░░░░  12%  1Gi/8Gi    █░░░░░░░░░   1%  1/110",
        "",
        "3 pods fit nowhere:",
        "  2 × 0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
        "      default/batch-1, default/batch-2",
        '  1 × skipped: no profile has schedulerName "nobody"',
        "      default/other",
    ]


@pytest.mark.parametrize(("used", "total", "shown"), [
    (0, 4000, "░░░░░░░░░░   0%"), (1, 4000, "█░░░░░░░░░   0%"), (2000, 4000, "█████░░░░░  50%"),
    (4000, 4000, "██████████ 100%"), (6000, 4000, "██████████ 150%"), (0, 0, "░░░░░░░░░░    -"),
])
def test_a_bar_shows_any_use_and_overcommitment(used: int, total: int, shown: str) -> None:
    assert bar(used, total) == shown
