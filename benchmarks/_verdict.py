"""The verdict line every benchmark prints for each of its targets, and the exit code they add up to.

One format for all of them, so one grep finds every verdict of a run and CI can act on the exit code:
``<figure>: <value> (target >= <target>): OK`` or ``... MISSED``; a benchmark exits 1 when any target is
missed, as a failing test does. Each target is a module-level ``TARGET`` (or ``TARGETS``) of its benchmark,
which the docs quote (tests/test_docs_benchmarks.py holds them equal).
Scripts run as ``python benchmarks/x.py`` have this folder on ``sys.path``, so they import it as ``_verdict``.
"""

from __future__ import annotations


class Verdicts:
    """One verdict per target; ``exit_code`` is 1 once any target was missed."""

    def __init__(self) -> None:
        self.missed: list[str] = []

    def at_least(self, figure: str, value: float, target: float, unit: str = "", digits: int = 2) -> bool:
        return self._judge(figure, value, target, value >= target, ">=", unit, digits)

    def at_most(self, figure: str, value: float, target: float, unit: str = "", digits: int = 2) -> bool:
        return self._judge(figure, value, target, value <= target, "<=", unit, digits)

    def child(self, figure: str, returncode: int) -> bool:
        """A verdict another benchmark printed (run as a child process), carried into this one's exit code."""
        if returncode != 0:
            self.missed.append(figure)
        return returncode == 0

    def _judge(self, figure: str, value: float, target: float, ok: bool, op: str, unit: str, digits: int) -> bool:
        print(f"{figure}: {value:.{digits}f}{unit} (target {op} {target:g}{unit}): {'OK' if ok else 'MISSED'}",
              flush=True)
        if not ok:
            self.missed.append(figure)
        return ok

    @property
    def exit_code(self) -> int:
        return 1 if self.missed else 0
