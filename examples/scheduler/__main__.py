"""``python -m examples.scheduler``: the example kube-scheduler."""

from __future__ import annotations

import logging
import threading
from typing import Any

import componentbase
from examples.scheduler.options import SchedulerOptions

log = logging.getLogger("examples.scheduler")

LONG = """The Kubernetes scheduler is a control plane process which assigns Pods to Nodes. The scheduler
determines which Nodes are valid placements for each Pod in the scheduling queue according to constraints
and available resources. The scheduler then ranks each valid Node and binds the Pod to a suitable Node."""


def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
    log.error("The scheduling loop is not built yet; this example cannot schedule pods.")
    return 1


def new_command() -> componentbase.Command:
    return componentbase.Command("kube-scheduler", SchedulerOptions(), run, long=LONG)


if __name__ == "__main__":
    new_command().main()
