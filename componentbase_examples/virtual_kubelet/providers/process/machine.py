"""What this machine offers, for a node that advertises it."""

from __future__ import annotations

import os

__all__ = ["memory"]


def memory() -> str:
    """Physical memory as a quantity in Ki, as the kubelet reports it (``16314040Ki``)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "0"
    return f"{total // 1024}Ki"
