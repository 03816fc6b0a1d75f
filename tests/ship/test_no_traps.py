"""No traps for a component author: leader election is validated by run itself, a written config loads back,
and the client's warning names no flag the component may lack."""

from __future__ import annotations

import io
import logging
import threading
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

import componentbase
from componentbase_examples.greeter.__main__ import HelloOptions
from componentbase_examples.greeter.__main__ import run as greet

pytestmark = pytest.mark.unit

SCHEME = componentbase.Scheme()


@attrs.define(kw_only=True)
class ForgetfulConfiguration:
    """A config whose component never validates its leader election (as a hurried author might write it)."""

    client_connection: componentbase.ClientConnectionConfiguration = attrs.field(
        factory=componentbase.ClientConnectionConfiguration)
    leader_election: componentbase.LeaderElectionConfiguration = attrs.field(
        factory=lambda: componentbase.LeaderElectionConfiguration(resource_name="forgetful",
                                                                  resource_namespace="default"))


SCHEME.register(ForgetfulConfiguration, "forgetful.example.com/v1", "ForgetfulConfiguration")


@attrs.define
class ForgetfulOptions(componentbase.ComponentOptions):
    SCHEME: ClassVar[componentbase.Scheme] = SCHEME
    CONFIG_API_VERSION: ClassVar[str] = "forgetful.example.com/v1"
    CONFIG_KIND: ClassVar[str] = "ForgetfulConfiguration"


def execute(command: componentbase.Command, *argv: str) -> tuple[int, str]:
    err = io.StringIO()
    code = command.execute(list(argv), stdout=io.StringIO(), stderr=err, stop=threading.Event())
    return code, err.getvalue()


def test_run_refuses_a_bad_lease_config_the_component_did_not_check(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"  # the client is built, never used: nothing listens there
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
                          "users: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
                          "current-context: c\n")
    config = tmp_path / "config.yaml"
    config.write_text(f"apiVersion: forgetful.example.com/v1\nkind: ForgetfulConfiguration\n"
                      f"clientConnection:\n  kubeconfig: {kubeconfig}\n"
                      "leaderElection:\n  leaderElect: true\n  leaseDuration: 5s\n  renewDeadline: 10s\n"
                      "  resourceName: forgetful\n  resourceNamespace: default\n")
    worked: list[Any] = []
    command = componentbase.Command("forgetful", ForgetfulOptions(), lambda c, s: worked.append(c),
                                    configz_registry=componentbase.serving.configz.Registry())  # not the process's
    code, err = execute(command, f"--config={config}")
    assert code == 1
    assert err.splitlines() == ['Error: leaderElection.renewDeadline: Invalid value: "10s": '
                                "must be less than leaseDuration"]
    assert worked == []


def test_the_hello_components_written_config_loads_back_unchanged(tmp_path: Path) -> None:
    """The greeter component (named hello) with leader election and overridden flags: written, read, written."""
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    code, err = execute(componentbase.Command("hello", HelloOptions(), greet), f"--write-config-to={first}",
                        "--name=you", "--leader-elect=true", "--leader-elect-lease-duration=20s",
                        "--leader-elect-resource-namespace=kube-system")
    assert code == 0, err
    assert "leaseDuration: 20s" in first.read_text() and "name: you" in first.read_text()
    code, err = execute(componentbase.Command("hello", HelloOptions(), greet), f"--config={first}",
                        f"--write-config-to={second}")
    assert code == 0, err
    assert second.read_text() == first.read_text()


def test_the_in_cluster_warning_names_no_flag(caplog: pytest.LogCaptureFixture,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with caplog.at_level(logging.WARNING), pytest.raises(componentbase.ClientConfigError):
        componentbase.new_api_client(componentbase.ClientConnectionConfiguration())
    (warning,) = [r.getMessage() for r in caplog.records if "inClusterConfig" in r.getMessage()]
    assert "--" not in warning


class EchoProviders:
    """A provider plugin a program passes to the command (a package would use the entry point group)."""

    @componentbase.hookimpl
    def virtual_kubelet_providers(self) -> list[Any]:
        from componentbase_examples.virtual_kubelet.provider_types import ProviderSpec

        return [ProviderSpec(name="echo", factory=lambda context: object())]


def test_the_virtual_kubelets_help_describes_it_and_lists_every_installed_provider() -> None:
    from componentbase_examples.virtual_kubelet.__main__ import new_command

    out = io.StringIO()
    assert new_command(plugins=[EchoProviders()]).execute(["--help"], stdout=out, stderr=io.StringIO()) == 0
    head = out.getvalue().split("Usage:", 1)[0]
    assert "runs the pods scheduled to it through a provider" in head
    assert "Providers installed (--provider): mock, process (built in); echo (plugin " in head
