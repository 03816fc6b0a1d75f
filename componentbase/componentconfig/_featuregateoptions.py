"""The "Feature gate flags" section: ``--feature-gates=A=true,B=false`` set on a ``FeatureGate``, and the
compatibility versions (``--emulated-version``, ``--min-compatibility-version``) every kube component takes."""

from __future__ import annotations

from typing import Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import Options
from componentbase.componentconfig._featuregate import FeatureGate

__all__ = ["FeatureGateOptions"]

SECTION = "Feature gate flags"

_VERSIONS = ("Version format could only be major.minor, for example: '--{flag}=wardle=1.2,kube=1.31'.\n"
             "Options are: kube={low}..{high}(default:{default})\nIf the component is not specified, defaults to "
             '"kube"')
_NOT_EMULATED = "this build's behaviour is the only one; no other version is emulated"


def _minor(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor)


@attrs.define
class FeatureGateOptions(Options):
    """Binds ``--feature-gates`` to a gate; the flag's help lists the gate's known features."""

    gate: FeatureGate = attrs.field(factory=FeatureGate)
    requested: dict[str, bool] = attrs.field(factory=dict, init=False)
    #: The Kubernetes minor version whose behaviour this component has; three before it may be asked for.
    kube_version: str = "1.34"
    emulated_version: list[str] = attrs.field(factory=list)
    min_compatibility_version: list[str] = attrs.field(factory=list)

    def add_flags(self, fss: cliflags.NamedFlagSets) -> None:
        usage = ("A set of key=value pairs that describe feature gates for alpha/experimental features. "
                 "Options are:\n" + "\n".join(self.gate.known_features()))
        fs = fss.flag_set(SECTION)
        fs.var("feature-gates", self, "requested", cliflags.MAP_STRING_BOOL, usage, setter=self._set)
        major, minor = _minor(self.kube_version)
        low, high = f"{major}.{max(0, minor - 3)}", self.kube_version
        fs.strings("emulated-version", self, "emulated_version",
                   "The versions different components emulate their capabilities (APIs, features, ...) of.\nIf set, "
                   "the component will emulate the behavior of this version instead of the underlying binary "
                   "version.\n" + _VERSIONS.format(flag="emulated-version", low=low, high=high, default=high)
                   + f" [No effect here: {_NOT_EMULATED}]", inert=_NOT_EMULATED)
        fs.strings("min-compatibility-version", self, "min_compatibility_version",
                   "The min version of control plane components the server should be compatible with.\nMust be less "
                   "or equal to the emulated-version. "
                   + _VERSIONS.format(flag="min-compatibility-version", low=low, high=high,
                                      default=f"{major}.{max(0, minor - 1)}")
                   + f" [No effect here: {_NOT_EMULATED}]", inert=_NOT_EMULATED)

    def validate(self) -> list[Exception]:
        """Each version names the kube component (or none) and a major.minor in the supported range."""
        errs = super().validate()
        major, minor = _minor(self.kube_version)
        for name, values in (("emulated-version", self.emulated_version),
                             ("min-compatibility-version", self.min_compatibility_version)):
            for value in values:
                component, _, ver = value.rpartition("=")
                if component not in ("", "kube"):
                    errs.append(ValueError(f"--{name}: component not registered: {component}"))
                    continue
                try:
                    want = _minor(ver.strip())
                except ValueError:
                    errs.append(ValueError(f"--{name}: illegal version string {ver!r}: must be major.minor"))
                    continue
                if want[0] != major or not minor - 3 <= want[1] <= minor:
                    errs.append(ValueError(f"--{name}: {ver} is outside the supported range "
                                           f"{major}.{max(0, minor - 3)}..{self.kube_version}"))
        return errs

    def _set(self, value: dict[str, bool]) -> None:
        self.gate.set_from_map(value)
        self.requested.update(value)

    def apply_to(self, config: Any) -> None:
        if hasattr(config, "feature_gate"):
            config.feature_gate = self.gate
