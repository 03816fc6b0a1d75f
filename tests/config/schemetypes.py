"""The config types the scheme tests read and write: every field shape a component config uses."""

from __future__ import annotations

import enum
import textwrap
from typing import Any, Literal

import attrs
import pytest

from componentbase.componentconfig import (
    JSON_NAME,
    ClientConnectionConfiguration,
    DebuggingConfiguration,
    DecodeError,
    LeaderElectionConfiguration,
    Scheme,
)
from componentbase.util import Duration

API = "example.config.k8s.io/v1"


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


@attrs.define(kw_only=True)
class Plugin:
    name: str
    weight: int | None = None
    args: dict[str, Any] = attrs.Factory(dict)


@attrs.define(kw_only=True)
class Profile:
    scheduler_name: str = "default-scheduler"
    percentage_of_nodes_to_score: int | None = None
    plugins: list[Plugin] = attrs.Factory(list)
    plugin_sets: dict[str, list[Plugin]] = attrs.Factory(dict)
    mode: Mode = Mode.SAFE
    phase: Literal["early", "late"] = "early"


@attrs.define(kw_only=True)
class SchedulerConfig:
    parallelism: int = 16
    qps_scale: float = 1.0
    enable_profiling: bool = True
    leader_election: LeaderElectionConfiguration = attrs.Factory(LeaderElectionConfiguration)
    client_connection: ClientConnectionConfiguration = attrs.Factory(ClientConnectionConfiguration)
    debugging: DebuggingConfiguration | None = None
    profiles: list[Profile] = attrs.Factory(list)
    pod_max_backoff: Duration = attrs.field(default=Duration(10), converter=Duration)
    bind_timeout: Duration | None = None
    labels: dict[str, str] = attrs.Factory(dict)
    extenders: list[dict[str, Any]] = attrs.Factory(list)
    raw: Any = None
    kube_api_qps: float = attrs.field(default=5.0, metadata={JSON_NAME: "kubeAPIQPS"})


@attrs.define(kw_only=True)
class Empty:
    pass


@attrs.define(kw_only=True)
class ProviderConfig:
    endpoint: str
    timeout: Duration = attrs.field(default=Duration(30), converter=Duration)


def default_scheduler(cfg: SchedulerConfig) -> None:
    if not cfg.profiles:
        cfg.profiles.append(Profile())
    if not cfg.leader_election.resource_name:
        cfg.leader_election.resource_name = "kube-scheduler"


def make_scheme() -> Scheme:
    s = Scheme()
    s.register(SchedulerConfig, API, "SchedulerConfiguration", defaulter=default_scheduler)
    s.register(Empty, API, "Empty")
    return s


SCHEME = make_scheme()


def doc(body: str, kind: str = "SchedulerConfiguration") -> str:
    return f"apiVersion: {API}\nkind: {kind}\n" + textwrap.dedent(body)


def errors_of(text: str, source: str = "sched.yaml") -> list[str]:
    with pytest.raises(DecodeError) as info:
        SCHEME.decode(text, source)
    return str(info.value).splitlines()

