"""Start-up cost of every console script's ``--help``, as a ratio to a bare interpreter, measured in one run.

Target (issues 2 and 28): for each ``componentbase-*`` console script, median(``<script> --help``) /
median(``python -c pass``) <= 8, in wall time. The rounds interleave every command, so the machine's load
falls on the baseline and the scripts alike. Each script runs as installed (the bin folder of this
interpreter); where it is not installed, its entry point runs through ``python -c``, as the script would.
What ``--help`` may import is held by a test, by module names (tests/examples/test_scheduler_cli.py).
Run from the repository root: ``python benchmarks/startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _verdict import Verdicts

ROOT = Path(__file__).resolve().parents[1]
TARGET = 8.0
SCRIPTS = ("componentbase-scheduler", "componentbase-virtual-kubelet", "componentbase-hello", "componentbase-demo",
           "componentbase-apiserver")


def command(script: str) -> list[str]:
    """How to run ``script --help``: the installed script, else its entry point through this interpreter."""
    installed = Path(sys.executable).parent / script
    if installed.exists():
        return [str(installed), "--help"]
    entry = next((e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == script), None)
    if entry is None:
        raise SystemExit(f"{script}: not installed and no entry point of that name (pip install -e .)")
    module, _, attr = entry.value.partition(":")
    return [sys.executable, "-c", f"import sys; from {module} import {attr} as main; sys.exit(main())", "--help"]


def once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    commands = {"python -c pass": [sys.executable, "-c", "pass"]} | {s: command(s) for s in SCRIPTS}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, argv in commands.items():
            times[name].append(once(argv))
    medians = {name: statistics.median(t) for name, t in times.items()}
    base = medians["python -c pass"]
    for name, median in medians.items():
        print(f"{name + (' --help' if name in SCRIPTS else ''):38s} {median * 1000:7.1f} ms (median of {args.runs})")
    verdicts = Verdicts()
    for script in SCRIPTS:
        verdicts.at_most(f"ratio {script} --help / python -c pass", medians[script] / base, TARGET)
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
