"""Start-up cost of a component's ``--help``, as a ratio to a bare interpreter, measured in one run.

Target (issue 2): median(``python -m componentbase_examples.scheduler --help``) / median(``python -c pass``) <= 8.
Run from the repository root: ``python benchmarks/startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _verdict import Verdicts

ROOT = Path(__file__).resolve().parents[1]
TARGET = 8.0


def once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    # Interleave the two measurements in rounds so machine noise hits both alike.
    base, help_ = [], []
    for _ in range(args.runs):
        base.append(once([sys.executable, "-c", "pass"]))
        help_.append(once([sys.executable, "-m", "componentbase_examples.scheduler", "--help"]))
    b, h = statistics.median(base), statistics.median(help_)
    ratio = h / b
    print(f"python -c pass:                      {b * 1000:7.1f} ms (median of {args.runs})")
    print(f"python -m componentbase_examples.scheduler --help: {h * 1000:7.1f} ms (median of {args.runs})")
    verdicts = Verdicts()
    verdicts.at_most("ratio --help / python -c pass", ratio, TARGET)
    return verdicts.exit_code


if __name__ == "__main__":
    sys.exit(main())
