"""DynamicResources: kube's DRA plugin, in the default set as in kube-scheduler 1.37, without DRA.

A pod that names no ``resourceClaims`` skips it at PreFilter, as upstream's does, and that is every pod this
scheduler can place. A pod with claims needs devices allocated from ResourceSlices, which this scheduler does
not do: PreFilter rejects it as UnschedulableAndUnresolvable with a message that says so, rather than placing
it on a node whose devices nobody reserved (before the plugin was listed, such a pod was bound regardless).
Its args (``DynamicResourcesArgs``: ``filterTimeout``, ``bindingTimeout``) are read, defaulted and validated
as kube's.
"""

from __future__ import annotations

from typing import Any

import componentbase
from componentbase_examples.scheduler.framework import SKIP, Code, CycleState, Plugin, Status
from componentbase_examples.scheduler.plugins.args import DynamicResourcesArgs
from componentbase_examples.scheduler.podinfo import PodInfo

ERR_NOT_SUPPORTED = "resource claims are not supported by this scheduler (no dynamic resource allocation)"


class DynamicResources(Plugin):
    name = "DynamicResources"
    Args = DynamicResourcesArgs

    def __init__(self, args: DynamicResourcesArgs | None, handle: Any) -> None:
        super().__init__(args, handle)

    @componentbase.hookimpl
    def scheduler_pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        if not pod.spec.get("resourceClaims"):
            return SKIP
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NOT_SUPPORTED, plugin=self.name)
