"""The default scheduler plugins and a plugin manager holding them: kube's in-tree registry.

It sits above both the framework and the plugins, which import the framework: the framework names no plugin,
so no import goes round in a circle. Importing it loads every default plugin (~25 ms): ``--help`` and
``--version`` do not, the command registers them once its options are validated.
"""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

import componentbase
from componentbase_examples.scheduler.interface import ENTRY_POINT_GROUP, SchedulerHooks
from componentbase_examples.scheduler.plugins.balancedallocation import NodeResourcesBalancedAllocation
from componentbase_examples.scheduler.plugins.defaultbinder import DefaultBinder
from componentbase_examples.scheduler.plugins.defaultpreemption import DefaultPreemption
from componentbase_examples.scheduler.plugins.dynamicresources import DynamicResources
from componentbase_examples.scheduler.plugins.imagelocality import ImageLocality
from componentbase_examples.scheduler.plugins.interpodaffinity import InterPodAffinity
from componentbase_examples.scheduler.plugins.nodeaffinity import NodeAffinity
from componentbase_examples.scheduler.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
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

__all__ = ["DEFAULT_PLUGINS", "new_plugin_manager"]

#: The default plugins, registered exactly as a third party's are.
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
    DynamicResources,
    DefaultPreemption,
    NodeResourcesBalancedAllocation,
    ImageLocality,
    DefaultBinder,
    NodeDeclaredFeatures,
)


def new_plugin_manager(plugins: Iterable[object] = (), entry_point_group: str | None = ENTRY_POINT_GROUP,
                       with_defaults: bool = True) -> pluggy.PluginManager:
    """A manager with the scheduler's hooks, the default plugins, ``plugins``, then entry-point plugins."""
    chosen = [*DEFAULT_PLUGINS, *plugins] if with_defaults else list(plugins)
    return componentbase.util.new_plugin_manager([SchedulerHooks], chosen, entry_point_group)
