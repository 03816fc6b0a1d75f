"""The "Metrics flags" section, validated as component-base's ``metrics.Options``.

``--disabled-metrics`` keeps the named metrics out of ``/metrics``; ``--allow-metric-labels`` maps
``metric,label`` to the values the label may show (others read ``unexpected``), bounding cardinality;
``--show-hidden-metrics-for-version`` accepts only the previous minor version (the library hides no
metric today, so it changes nothing yet).
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from componentbase.cli import _flags as cliflags
from componentbase.cli._options import (
    Options,
    flag,
)
from componentbase.metrics._registry import Metrics
from componentbase.util import version

__all__ = ["SECTION", "STRING_TO_STRING", "MetricsOptions"]

SECTION = "Metrics flags"

#: A new ``metric,label=`` starts after a comma or a space (values are comma lists, maybe quoted).
_PAIR_START = re.compile(r"[,\s]+(?=[^,=\s'\"]+,[^,=\s'\"]+=)")
_KEY = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*,[a-zA-Z_][a-zA-Z0-9_]*")


def _parse_allow_labels(text: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in _PAIR_START.split(text.strip()))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{part} must be formatted as key=value")
        result[key.strip()] = value.strip().strip("'\"")
    return result


def _format_allow_labels(value: Any) -> str:
    return "[" + ",".join(f"{k}={v}" for k, v in sorted((value or {}).items())) + "]"


def _read_manifest(path: str) -> dict[str, str]:
    """component-base's allow-list manifest: ``allowListMapping: {"metric,label": "v1,v2"}``."""
    if not path:
        return {}
    from ruamel.yaml import YAML  # slow import: only when a manifest is given
    from ruamel.yaml.error import YAMLError  # slow import, as above

    try:
        with open(path, encoding="utf-8") as f:
            data = YAML(typ="safe").load(f) or {}
    except OSError as err:
        raise ValueError(f"--allow-metric-labels-manifest: failed to read allow list manifest {path}: "
                         f"{err.strerror or err}") from None
    except YAMLError as err:
        raise ValueError(f"--allow-metric-labels-manifest: failed to parse allow list manifest {path}: "
                         f"{str(err).splitlines()[0]}") from None
    mapping = data.get("allowListMapping") if isinstance(data, dict) else None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise ValueError(f"--allow-metric-labels-manifest: {path}: want allowListMapping, a map of strings")
    return {str(k): v for k, v in mapping.items()}


#: pflag's ``stringToString``, split so that values may hold commas (``m,l='v1,v2' m,l2='v3'``).
STRING_TO_STRING = cliflags.FlagType("stringToString", _parse_allow_labels, _format_allow_labels, {})


@attrs.define
class MetricsOptions(Options):
    """component-base's metrics flags: hide or disable metrics and bound label values, the cardinality escape
    hatches an operator needs when a metric misbehaves in production."""

    show_hidden_metrics_for_version: str = flag(
        "show-hidden-metrics-for-version", "The previous version for which you want to show hidden metrics. Only "
        "the previous minor version is meaningful, other values will not be allowed. The format is "
        "<major>.<minor>, e.g.: '1.16'. The purpose of this format is make sure you have the opportunity to notice "
        "if the next release hides additional metrics, rather than being surprised when they are permanently "
        "removed in the release after that.", default="", section=SECTION)
    disabled_metrics: list[str] = flag(
        "disabled-metrics", "This flag provides an escape hatch for misbehaving metrics. You must provide the fully "
        "qualified metric name in order to disable it. Disclaimer: disabling metrics is higher in precedence than "
        "showing hidden metrics.", factory=list, section=SECTION)
    allow_metric_labels_manifest: str = flag(
        "allow-metric-labels-manifest", "The path to the manifest file that contains the allow-list mapping. The "
        "format of the file is the same as the flag --allow-metric-labels, i.e.,\nallowListMapping:\n"
        '"metric1,label1": "value11,value12"\n"metric2,label2": ""\nNote that the flag --allow-metric-labels '
        "will override the manifest file.", default="", section=SECTION)
    allow_metric_labels: dict[str, str] = attrs.field(factory=dict)
    #: What ``--allow-metric-labels-manifest`` holds, read by ``validate``.
    manifest_labels: dict[str, str] = attrs.field(factory=dict)
    #: The version ``--show-hidden-metrics-for-version`` is checked against; componentbase's by default.
    current_version: str = ""

    def add_flags(self, fss: cliflags.NamedFlagSets) -> None:
        super().add_flags(fss)
        fss.flag_set(SECTION).var(
            "allow-metric-labels", self, "allow_metric_labels", STRING_TO_STRING,
            "The map from metric-label to value allow-list of this label. The key's format is "
            "<MetricName>,<LabelName>. The value's format is <allowed_value>,<allowed_value>...e.g. "
            "metric1,label1='v1,v2,v3', metric1,label2='v1,v2,v3' metric2,label1='v1,v2,v3'.",
            setter=self.allow_metric_labels.update)

    def validate(self) -> list[Exception]:
        errs = super().validate()
        problem = self._hidden_version_problem()
        if problem:
            errs.append(ValueError(problem))
        try:
            self.manifest_labels = _read_manifest(self.allow_metric_labels_manifest)
        except ValueError as err:
            errs.append(err)
        for key in {**self.manifest_labels, **self.allow_metric_labels}:
            if not _KEY.fullmatch(key):
                errs.append(ValueError(f"--allow-metric-labels: {key!r}: must have a list of kv pair with format "
                                       "`metricName,labelName=labelValue, labelValue,...`"))
        return errs

    def _hidden_version_problem(self) -> str:
        target = self.show_hidden_metrics_for_version
        if not target:
            return ""
        info = version.get(self.current_version or None)
        try:
            major, minor = int(info.major), int(info.minor)
        except ValueError:
            return f"--show-hidden-metrics-for-version: the current version {info.git_version} has no minor version"
        if minor == 0:
            return (f"--show-hidden-metrics-for-version must be omitted: version {major}.0 has no previous minor "
                    "version")
        valid = f"{major}.{minor - 1}"
        if target != valid:
            return (f"--show-hidden-metrics-for-version must be omitted or have the value '{valid}'. Only the "
                    "previous minor version is allowed")
        return ""

    def allow_labels(self) -> dict[str, list[str]]:
        return {key: [v.strip() for v in value.split(",") if v.strip()]
                for key, value in {**self.manifest_labels, **self.allow_metric_labels}.items()}

    def apply_to(self, config: Any) -> None:
        super().apply_to(config)
        config.metrics = Metrics(disabled=self.disabled_metrics, allow_labels=self.allow_labels(),
                                 info=version.get(self.current_version or None))
