"""The end of ``--dry-run``'s report: how full each node is, and why the pods that fit nowhere do not fit.

A table of requested against allocatable cpu, memory and pods per node, each with a bar, so a glance shows
where the room is; then the unschedulable pods grouped by their reason (kube-scheduler's FailedScheduling
message), the largest group first, so one missing resource reads as one line, not as fifty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from componentbase_examples.scheduler.snapshot import NodeInfo

__all__ = ["BAR_WIDTH", "bar", "capacity_table", "unschedulable_by_reason"]

BAR_WIDTH = 10
_FULL, _EMPTY = "█", "░"
_BINARY = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def bar(used: int, total: int, width: int = BAR_WIDTH) -> str:
    """``███░░░░░░░ 30%``; over 100% the bar is full and the percentage says by how much."""
    if total <= 0:
        return _EMPTY * width + ("    -" if used <= 0 else " full")
    ratio = used / total
    filled = min(width, round(ratio * width))
    if used > 0 and filled == 0:
        filled = 1  # something is there: show it
    return _FULL * filled + _EMPTY * (width - filled) + f" {round(ratio * 100):3d}%"


def _cpu(milli: int) -> str:
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def _memory(amount: int) -> str:
    for suffix, size in _BINARY:
        if amount >= size:
            value = amount / size
            return f"{value:.0f}{suffix}" if value == int(value) or value >= 100 else f"{value:.1f}{suffix}"
    return str(amount)


def capacity_table(nodes: Iterable[NodeInfo]) -> list[str]:
    """One row per node: requested/allocatable cpu, memory and pods, each with its bar."""
    rows = [("NODE", "CPU", "MEMORY", "PODS")]
    for node in nodes:
        rows.append((node.name,
                     f"{bar(node.req_cpu, node.alloc_cpu)}  {_cpu(node.req_cpu)}/{_cpu(node.alloc_cpu)}",
                     f"{bar(node.req_memory, node.alloc_memory)}  "
                     f"{_memory(node.req_memory)}/{_memory(node.alloc_memory)}",
                     f"{bar(len(node.pods), node.alloc_pods)}  {len(node.pods)}/{node.alloc_pods}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def unschedulable_by_reason(reasons: Mapping[str, str]) -> list[str]:
    """``reasons`` maps each unschedulable pod to why; the lines grouping them, largest group first."""
    groups: dict[str, list[str]] = {}
    for pod, reason in reasons.items():
        groups.setdefault(reason, []).append(pod)
    lines = [f"{len(reasons)} {'pods fit' if len(reasons) != 1 else 'pod fits'} nowhere:"] if reasons else []
    for reason, pods in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        lines.append(f"  {len(pods)} × {reason}")
        lines.append(f"      {', '.join(pods)}")
    return lines
