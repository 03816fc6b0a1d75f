"""``python -m examples.virtual_kubelet``: the example virtual kubelet."""

from __future__ import annotations

import logging
import threading
from typing import Any

import componentbase
from examples.virtual_kubelet.options import VirtualKubeletOptions

log = logging.getLogger("examples.virtual_kubelet")


def run(completed: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
    log.error("The node and pod controllers are not built yet; this example cannot run pods.")
    return 1


def new_command() -> componentbase.Command:
    return componentbase.Command("virtual-kubelet", VirtualKubeletOptions(), run,
                                 short="virtual-kubelet provides a virtual kubelet interface for your "
                                       "kubernetes cluster.")


if __name__ == "__main__":
    new_command().main()
