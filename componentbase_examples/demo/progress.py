"""What the demo shows while it runs: every pod's state, per node, live on a terminal or as plain lines."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from typing import Any, TextIO

from componentbase_examples.demo.workload import state_of

STATES = ("Pending", "Scheduled", "Running", "Succeeded", "Failed")
BAR = 30


class Progress:
    """Fed by an informer's handlers; ``render`` draws it. Thread-safe."""

    def __init__(self, total: int, out: TextIO | None = None) -> None:
        self.total = total
        self.out = out or sys.stdout
        self.live = self.out.isatty()
        self._lock = threading.Lock()
        self._pods: dict[str, tuple[str, str]] = {}  # name -> (state, node)
        self._drawn = 0
        self.leader = ""

    def observe(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        state, node = state_of(pod), (pod.get("spec") or {}).get("nodeName", "")
        with self._lock:
            before = self._pods.get(name)
            self._pods[name] = (state, node)
        if not self.live and before != (state, node) and (before is None or before[0] != state):
            where = f" on {node}" if node and state != "Pending" else ""
            self.say(f"pod {name}: {state}{where}")

    def say(self, line: str) -> None:
        """A line that stays, printed above the live view."""
        with self._lock:
            self._erase()
            self.out.write(line + "\n")
            self.out.flush()
            self._drawn = 0

    def snapshot(self) -> dict[str, tuple[str, str]]:
        """Each pod's (state, node)."""
        with self._lock:
            return dict(self._pods)

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(state for state, _ in self._pods.values())

    def per_node(self) -> dict[str, Counter[str]]:
        with self._lock:
            nodes: dict[str, Counter[str]] = {}
            for state, node in self._pods.values():
                nodes.setdefault(node or "(unscheduled)", Counter())[state] += 1
            return dict(sorted(nodes.items()))

    def done(self) -> bool:
        counts = self.counts()
        return counts["Succeeded"] + counts["Failed"] >= self.total

    def render(self) -> None:
        if not self.live:
            return
        counts = self.counts()
        finished = counts["Succeeded"] + counts["Failed"]
        filled = BAR * finished // max(1, self.total)
        lines = [f"pods [{'#' * filled}{'.' * (BAR - filled)}] {finished}/{self.total} finished   "
                 + "  ".join(f"{s} {counts[s]}" for s in STATES)]
        for node, c in self.per_node().items():
            lines.append(f"  {node:<16} " + "  ".join(f"{s.lower()} {c[s]}" for s in STATES[1:] if c[s]))
        lines.append(f"  scheduler leader: {self.leader or '(electing)'}")
        with self._lock:
            self._erase()
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()
            self._drawn = len(lines)

    def _erase(self) -> None:
        if self.live and self._drawn:
            self.out.write(f"\x1b[{self._drawn}F\x1b[J")

    def summary(self) -> str:
        rows = [("node", *(s.lower() for s in STATES[1:]))]
        for node, c in self.per_node().items():
            rows.append((node, *(str(c[s]) for s in STATES[1:])))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                         for row in rows)
