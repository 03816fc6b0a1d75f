"""The default scheduler plugins, registered exactly as a third party's are.

``DEFAULT_PLUGINS`` imports them on first use (~25 ms): a module of this package, such as the args types
config defaulting needs (``args``), can be imported without them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_PLUGINS"]


def __getattr__(name: str) -> Any:
    if name != "DEFAULT_PLUGINS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    global DEFAULT_PLUGINS
    from componentbase_examples.scheduler.plugins.balancedallocation import NodeResourcesBalancedAllocation
    from componentbase_examples.scheduler.plugins.defaultbinder import DefaultBinder
    from componentbase_examples.scheduler.plugins.defaultpreemption import DefaultPreemption
    from componentbase_examples.scheduler.plugins.imagelocality import ImageLocality
    from componentbase_examples.scheduler.plugins.interpodaffinity import InterPodAffinity
    from componentbase_examples.scheduler.plugins.nodeaffinity import NodeAffinity
    from componentbase_examples.scheduler.plugins.nodename import NodeName
    from componentbase_examples.scheduler.plugins.nodeports import NodePorts
    from componentbase_examples.scheduler.plugins.noderesourcesfit import NodeResourcesFit
    from componentbase_examples.scheduler.plugins.nodeunschedulable import NodeUnschedulable
    from componentbase_examples.scheduler.plugins.nodevolumelimits import NodeVolumeLimits
    from componentbase_examples.scheduler.plugins.podtopologyspread import PodTopologySpread
    from componentbase_examples.scheduler.plugins.queuesort import PrioritySort
    from componentbase_examples.scheduler.plugins.schedulinggates import SchedulingGates
    from componentbase_examples.scheduler.plugins.tainttoleration import TaintToleration
    from componentbase_examples.scheduler.plugins.volumebinding import VolumeBinding
    from componentbase_examples.scheduler.plugins.volumerestrictions import VolumeRestrictions
    from componentbase_examples.scheduler.plugins.volumezone import VolumeZone

    DEFAULT_PLUGINS = (
        SchedulingGates,
        PrioritySort,
        NodeUnschedulable,
        NodeName,
        TaintToleration,
        NodeAffinity,
        NodePorts,
        NodeResourcesFit,
        VolumeRestrictions,
        NodeVolumeLimits,
        VolumeBinding,
        VolumeZone,
        PodTopologySpread,
        InterPodAffinity,
        DefaultPreemption,
        NodeResourcesBalancedAllocation,
        ImageLocality,
        DefaultBinder,
    )
    return DEFAULT_PLUGINS


DEFAULT_PLUGINS: tuple[type, ...]
