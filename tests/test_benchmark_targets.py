"""Each benchmark target is stated once, in its benchmark, judged with a verdict, and quoted as it is by the docs.

A target is a module-level ``TARGET`` (or ``TARGETS``) of its benchmark, read here without running it; every
benchmark that has one prints a verdict per target through ``benchmarks/_verdict.py`` and exits with its code.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "_verdict.py")


def _constants(path: Path) -> dict[str, Any]:
    """The module-level ``NAME = expression`` of ``path`` whose expression needs only earlier such names."""
    found: dict[str, Any] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            try:
                value = eval(compile(ast.Expression(node.value), str(path), "eval"), {"__builtins__": {}}, found)
            except Exception:  # calls, imports' names: not a constant
                continue
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                values = value if isinstance(target, ast.Tuple) else [value]
                found.update((n.id, v) for n, v in zip(names, values, strict=True) if isinstance(n, ast.Name))
    return found


def _target(benchmark: str, key: str | None = None) -> float:
    constants = _constants(ROOT / "benchmarks" / benchmark)
    return float(constants["TARGET"] if key is None else constants["TARGETS"][key])


#: (doc, a regex over its text with whitespace runs made single spaces, capturing the figure; the benchmark
#: and the key in its TARGETS, or None for its TARGET).
QUOTES = [
    ("virtual-kubelet.md", r"over the raw status-patch rate of the same client \(target ([\d.]+),",
     "virtual_kubelet.py", None),
    ("runtime.md", r"median about 0\.6; target ([\d.]+)\)", "virtual_kubelet.py", None),
    ("runtime.md", r"of the raw loop \(target ([\d.]+);", "controller.py", "ratio"),
    ("runtime.md", r"binding\+Event pairs one thread sends \(target ([\d.]+)\)", "scheduler.py", "pairs"),
    ("runtime.md", r"times the hello reconcile's per object \(target at most ([\d.]+)x", "operator.py", None),
    ("runtime.md", r"times the null scheduler's \(target at most ([\d.]+)\)", "scheduler.py", "cpu"),
    ("runtime.md", r"retryPeriod 0\.2 s; target ([\d.]+) s\)", "hello_takeover.py", None),
    ("runtime.md", r"the scheduler's first binding at a median [\d.]+ s \(target ([\d.]+) s\)",
     "scheduler_failover.py", None),
    ("scheduler.md", r"Target \(issue 19\): ([\d,]+) pods per CPU second", "scheduler_algorithm.py", None),
    ("scheduler.md", r"issue 19's hot paths \(target ([\d,]+)\)", "scheduler_algorithm.py", None),
    ("scheduler.md", r"\(c\) b/a \(target ([\d.]+)\)", "scheduler.py", "ceiling"),
    ("scheduler.md", r"short of the ([\d.]+) target", "scheduler.py", "ceiling"),
    ("scheduler.md", r"b over the pair rate \(target ([\d.]+)\)", "scheduler.py", "pairs"),
    ("scheduler.md", r"a null scheduler making the same API calls \(target ([\d.]+) times at most",
     "scheduler.py", "cpu"),
    ("serving.md", r"connections from a separate process; target ≥ ([\d.]+),", "serving.py", None),
    ("leaderelection.md", r"against its target \(at most ([\d.]+),", "leader_failover.py", "hard"),
    ("leaderelection.md", r"against its target \(at most [\d.]+, ([\d.]+) and", "leader_failover.py", "graceful"),
    ("leaderelection.md", r"against its target \(at most [\d.]+, [\d.]+ and ([\d.]+);", "leader_failover.py",
     "requests"),
    ("webhooks.md", r"CPU per review on kept-alive connections \(target at most ([\d.]+) ms\)", "webhooks.py", None),
]


@pytest.mark.parametrize(("doc", "pattern", "benchmark", "key"), QUOTES)
def test_the_docs_quote_each_target_as_its_benchmark_states_it(doc: str, pattern: str, benchmark: str,
                                                               key: str | None) -> None:
    text = " ".join((ROOT / "docs" / doc).read_text().split())
    found = re.findall(pattern, text)
    assert len(found) == 1, f"docs/{doc}: {pattern!r} found {len(found)} times"
    assert float(found[0].replace(",", "")) == _target(benchmark, key), (
        f"docs/{doc} gives {found[0]} where benchmarks/{benchmark} says {_target(benchmark, key)}")


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_a_benchmark_with_targets_judges_each_and_exits_with_the_verdict(path: Path) -> None:
    text = path.read_text()
    constants = _constants(path)
    targets = "TARGET" in constants or "TARGETS" in constants
    judged = "Verdicts()" in text and "return verdicts.exit_code" in text
    exits = re.search(r"^    (sys\.exit|raise SystemExit)\(main\(\)\)$", text, re.M) is not None
    assert targets == judged, f"{path.name}: a TARGET needs Verdicts to judge it, and Verdicts a TARGET"
    assert not targets or exits, f"{path.name}: main()'s exit code (1 on a missed target) must be the process's"
    assert not re.search(r"target [<>]=", text), f"{path.name}: print targets through _verdict.Verdicts"


def test_a_verdict_says_missed_and_sets_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("_verdict", ROOT / "benchmarks" / "_verdict.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    verdicts = module.Verdicts()
    assert verdicts.at_most("start-up", 412.04, 500, unit=" ms", digits=1)
    assert verdicts.exit_code == 0
    assert not verdicts.at_least("ratio", 0.7449, 0.8)
    assert verdicts.exit_code == 1
    assert capsys.readouterr().out.splitlines() == ["start-up: 412.0 ms (target <= 500 ms): OK",
                                                    "ratio: 0.74 (target >= 0.8): MISSED"]
