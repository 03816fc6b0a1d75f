"""NodePorts: a pod's host ports must be free on the node, per protocol and host IP.

``0.0.0.0`` (or no ``hostIP``) conflicts with the same protocol and port on any IP of the node; a
specific IP conflicts with itself and with ``0.0.0.0``, as kube's ``HostPortInfo.CheckConflict``.
"""

from __future__ import annotations

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, Plugin, Status
from componentbase_examples.scheduler.podinfo import PodInfo
from componentbase_examples.scheduler.snapshot import NodeInfo

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
ANY_IP = "0.0.0.0"


def conflicts(used: dict[str, dict[tuple[str, int], int]], ip: str, protocol: str, port: int) -> bool:
    wanted = (protocol, port)
    if ip == ANY_IP:
        return any(wanted in ports for ports in used.values())
    return wanted in used.get(ANY_IP, ()) or wanted in used.get(ip, ())


class NodePorts(Plugin):
    name = "NodePorts"
    _REJECTED = Status(Code.UNSCHEDULABLE, ERR_REASON, plugin=name)

    @componentbase.hookimpl
    def scheduler_pre_filter(self, pod: PodInfo) -> Status | None:
        return None if pod.host_ports else SKIP

    @componentbase.hookimpl
    def scheduler_filter(self, pod: PodInfo, nodes: list[NodeInfo], rejected: dict[str, Status]) -> list[NodeInfo]:
        wanted = pod.host_ports
        passed = []
        for n in nodes:
            used = n.used_ports
            if used and any(conflicts(used, ip, protocol, port) for ip, protocol, port in wanted):
                rejected[n.name] = self._REJECTED
            else:
                passed.append(n)
        return passed
