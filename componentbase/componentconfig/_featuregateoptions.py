"""The "Feature gate flags" section: ``--feature-gates=A=true,B=false`` set on a ``FeatureGate``."""

from __future__ import annotations

from typing import Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import Options
from componentbase.componentconfig._featuregate import FeatureGate

__all__ = ["FeatureGateOptions"]

SECTION = "Feature gate flags"


@attrs.define
class FeatureGateOptions(Options):
    """Binds ``--feature-gates`` to a gate; the flag's help lists the gate's known features."""

    gate: FeatureGate = attrs.field(factory=FeatureGate)
    requested: dict[str, bool] = attrs.field(factory=dict, init=False)

    def add_flags(self, fss: cliflags.NamedFlagSets) -> None:
        usage = ("A set of key=value pairs that describe feature gates for alpha/experimental features. "
                 "Options are:\n" + "\n".join(self.gate.known_features()))
        fss.flag_set(SECTION).var("feature-gates", self, "requested", cliflags.MAP_STRING_BOOL, usage,
                                  setter=self._set)

    def _set(self, value: dict[str, bool]) -> None:
        self.gate.set_from_map(value)
        self.requested.update(value)

    def apply_to(self, config: Any) -> None:
        if hasattr(config, "feature_gate"):
            config.feature_gate = self.gate
