"""The "Simulation flags": ``--dry-run=PATH`` schedules manifests in memory instead of a cluster's pods."""

from __future__ import annotations

import os

import attrs

import componentbase
from componentbase import field

SECTION = "Simulation flags"


@attrs.define
class SimulationOptions(componentbase.Options):
    dry_run: str = componentbase.flag(
        "dry-run", "If set, schedule the Nodes and Pods of this YAML file (several documents, Lists) or directory "
        "of manifests in memory with the configured profiles, print where each pod would go or why it fits "
        "nowhere, and exit. No cluster is contacted.", default="", section=SECTION)

    def validate(self) -> list[Exception]:
        if self.dry_run and not os.path.exists(self.dry_run):
            return [field.invalid("--dry-run", self.dry_run, "no such file or directory")]
        return []
