"""The process provider's pods on disk, so a restarted virtual kubelet takes them up instead of starting them again.

Each pod's directory ``<root>/pods/<namespace>_<name>_<uid>/`` holds ``pod.json`` (the pod as it was handed
to the provider, and its startTime) beside one directory per container (see ``container.py``). A pod whose
directory is there when the provider starts is the provider's: its containers are adopted, and the pod
controller deletes it if the API no longer has it. Deleting a pod removes its directory.
"""

from __future__ import annotations

import glob
import os
from typing import Any

from componentbase_examples.virtual_kubelet.providers.process import shim

__all__ = ["load_pods", "save_pod"]

POD_FILE = "pod.json"


def save_pod(pod_dir: str, pod: dict[str, Any], start_time: str) -> None:
    """Record the pod before any of its containers starts, so none can run without the next start knowing it."""
    os.makedirs(pod_dir, mode=0o700, exist_ok=True)
    shim.write_json(os.path.join(pod_dir, POD_FILE), {"pod": pod, "startTime": start_time})


def load_pods(root: str) -> list[tuple[dict[str, Any], str, str]]:
    """(pod, startTime, directory) of every pod recorded under ``root``; unreadable records are skipped."""
    found = []
    for path in sorted(glob.glob(os.path.join(glob.escape(root), "pods", "*", POD_FILE))):
        record = shim.read_json(path)
        if isinstance(record, dict) and isinstance(record.get("pod"), dict):
            found.append((record["pod"], str(record.get("startTime") or ""), os.path.dirname(path)))
    return found
