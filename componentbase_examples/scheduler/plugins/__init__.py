"""The default scheduler plugins, registered exactly as a third party's are."""

from __future__ import annotations

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

__all__ = ["DEFAULT_PLUGINS"]

DEFAULT_PLUGINS: tuple[type, ...] = (
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
