"""kube-scheduler's feature gates that change what this scheduler does, on ``--feature-gates``.

One gate per process, as upstream's ``DefaultFeatureGate``: the v1 defaulting of a config file and plugin
args validation read it, and they run when the file is loaded, after the flags set it.
"""

from __future__ import annotations

from componentbase.componentconfig import FeatureGate, FeatureSpec, Stage

__all__ = ["FEATURE_GATE", "STORAGE_CAPACITY_SCORING", "enabled"]

#: VolumeBinding scores nodes by the capacity of the volumes a pod's claims would get (KEP-4049; alpha in 1.33,
#: beta and on by default in 1.37, where it replaced VolumeCapacityPriority).
STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"

FEATURE_GATE = FeatureGate()
FEATURE_GATE.add({STORAGE_CAPACITY_SCORING: FeatureSpec(True, Stage.BETA)})


def enabled(name: str) -> bool:
    return FEATURE_GATE.enabled(name)
