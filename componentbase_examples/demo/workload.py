"""The demo's pods: short Python processes the ``process`` provider runs on the virtual nodes."""

from __future__ import annotations

import random
import sys
from typing import Any

LABEL = "componentbase-demo"
SCHEDULER_NAME = "componentbase-demo"
TAINT_KEY = "virtual-kubelet.io/provider"

_SCRIPT = (
    "import os, socket, time\n"
    "print(f'hello from {os.environ[\"POD_NAME\"]} on {os.environ[\"NODE_NAME\"]}', flush=True)\n"
    "time.sleep(float(os.environ['WORK_SECONDS']))\n"
    "print('done', flush=True)\n"
)


def pod_manifest(index: int, rng: random.Random) -> dict[str, Any]:
    """A pod for the demo's scheduler, tolerating the virtual nodes' taint, that sleeps a second or two."""
    name = f"demo-{index:03d}"
    env = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "WORK_SECONDS", "value": f"{rng.uniform(1.0, 2.5):.2f}"},
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": LABEL}},
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "restartPolicy": "Never",
            "nodeSelector": {"type": "virtual-kubelet"},
            "tolerations": [{"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{
                "name": "work",
                "image": "python:3-slim",
                "command": [sys.executable, "-c", _SCRIPT],
                "env": env,
                "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}},
            }],
        },
    }


def state_of(pod: dict[str, Any]) -> str:
    """Pending (not yet placed), Scheduled, Running, Succeeded or Failed."""
    phase = (pod.get("status") or {}).get("phase", "Pending")
    if phase in ("Running", "Succeeded", "Failed"):
        return str(phase)
    return "Scheduled" if (pod.get("spec") or {}).get("nodeName") else "Pending"
