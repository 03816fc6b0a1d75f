"""The default scheduler plugins, registered exactly as a third party's are."""

from __future__ import annotations

from examples.scheduler.plugins.balancedallocation import NodeResourcesBalancedAllocation
from examples.scheduler.plugins.defaultbinder import DefaultBinder
from examples.scheduler.plugins.interpodaffinity import InterPodAffinity
from examples.scheduler.plugins.nodeaffinity import NodeAffinity
from examples.scheduler.plugins.nodename import NodeName
from examples.scheduler.plugins.nodeports import NodePorts
from examples.scheduler.plugins.noderesourcesfit import NodeResourcesFit
from examples.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from examples.scheduler.plugins.podtopologyspread import PodTopologySpread
from examples.scheduler.plugins.queuesort import PrioritySort
from examples.scheduler.plugins.tainttoleration import TaintToleration

__all__ = ["DEFAULT_PLUGINS"]

DEFAULT_PLUGINS: tuple[type, ...] = (
    PrioritySort,
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    PodTopologySpread,
    InterPodAffinity,
    NodeResourcesBalancedAllocation,
    DefaultBinder,
)
