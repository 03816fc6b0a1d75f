"""The run flow every component gets: version, flags, arguments, validation, write-config-to."""

from __future__ import annotations

import io
import logging
import threading
from pathlib import Path
from typing import Any

import attrs
import pytest

import componentbase
from componentbase.serving import configz


@attrs.define
class HelloOptions(componentbase.Options):
    greeting: str = componentbase.flag("greeting", "What to say.", default="hello")
    times: int = componentbase.flag("times", "How often to say it.", default=1)
    old: str = componentbase.flag("old-greeting", "Old spelling of --greeting.", default="",
                                  deprecated="use --greeting instead.", section="Deprecated flags")
    secret: bool = componentbase.flag("secret-mode", "Nobody sees this.", default=False, hidden=True)
    logs: componentbase.LogsOptions = attrs.field(factory=componentbase.LogsOptions)

    def validate(self) -> list[Exception]:
        errs = super().validate()
        if not self.greeting:
            errs.append(componentbase.field.required("greeting"))
        if self.times < 1:
            errs.append(componentbase.field.invalid("times", self.times, "must be at least 1"))
        return errs

    def apply_to(self, config: Any) -> None:
        config.component_config = {"greeting": self.greeting, "times": self.times}


def execute(args: list[str], run: Any = None, **kw: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    calls: list[Any] = []

    def default_run(cc: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
        calls.append(cc)
        return 0

    cmd = componentbase.Command("hello", HelloOptions(), run or default_run,
                                configz_registry=kw.pop("registry", configz.Registry()), **kw)
    code = cmd.execute(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.unit
def test_version_and_raw_version() -> None:
    code, out, _ = execute(["--version"], version_string="v1.2.3")
    assert (code, out) == (0, "hello v1.2.3\n")
    code, out, _ = execute(["--version=raw"], version_string="v1.2.3")
    assert code == 0
    assert out.startswith('version.Info{Major:"1", Minor:"2", GitVersion:"v1.2.3"')
    for name in ("GitCommit:", "GitTreeState:", "BuildDate:", "PythonVersion:", "Compiler:", "Platform:"):
        assert name in out
    # As verflag: a version string sets the reported version and the component runs on.
    code, out, _ = execute(["--version=v9.8.7"], run=lambda cc, stop: 7)
    assert (code, out) == (7, "")


@pytest.mark.unit
def test_help_has_sections_defaults_and_hides_hidden() -> None:
    code, out, _ = execute(["--help"])
    assert code == 0
    assert out.startswith("Usage:\n  hello [flags]\n")
    assert '      --greeting string   What to say. (default "hello")' in out
    assert "Deprecated flags:\n\n      --old-greeting string   DEPRECATED: Old spelling of --greeting." in out
    assert "secret-mode" not in out
    assert "  -v, --v Level" in out and "Global flags:" in out


@pytest.mark.unit
def test_flags_are_logged_at_v1(caplog: pytest.LogCaptureFixture) -> None:
    code, _, err = execute(["-v=1", "--greeting=hi"])
    assert code == 0
    assert 'FLAG: --greeting="hi"' in err
    assert 'FLAG: --times="1"' in err
    assert 'FLAG: --secret-mode="false"' in err
    code, _, err = execute(["--greeting=hi"])
    assert "FLAG:" not in err
    logging.getLogger().handlers.clear()


@pytest.mark.unit
def test_arguments_are_refused() -> None:
    code, _, err = execute(["extra", "words"])
    assert code == 1
    assert 'Error: arguments are not supported, got ["extra", "words"]' in err


@pytest.mark.unit
def test_bad_flag_value_exits_1_with_one_line() -> None:
    code, _, err = execute(["--times=many"])
    assert code == 1
    assert err.splitlines()[0] == ('Error: invalid argument "many" for "--times" flag: '
                                   'strconv.ParseInt: parsing "many": invalid syntax')


@pytest.mark.unit
def test_all_validation_errors_at_once() -> None:
    code, _, err = execute(["--greeting=", "--times=0"])
    assert code == 1
    assert err.splitlines() == ["Error: greeting: Required value",
                                "Error: times: Invalid value: 0: must be at least 1"]


@pytest.mark.unit
def test_deprecated_flag_warns_and_works() -> None:
    code, _, err = execute(["--old-greeting=yo"])
    assert code == 0
    assert "Flag --old-greeting has been deprecated, use --greeting instead." in err


@pytest.mark.unit
def test_run_gets_a_completed_config_and_configz_is_registered() -> None:
    registry = configz.Registry()
    seen: list[Any] = []

    def run(cc: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
        seen.append(cc)
        return 3

    code, _, _ = execute(["--greeting=hi"], run=run, registry=registry)
    assert code == 3
    assert isinstance(seen[0], componentbase.CompletedConfig)
    assert b'"greeting": "hi"' in registry.render().replace(b'":"', b'": "')
    # The name is taken now: a second component under it fails cleanly.
    code, _, err = execute([], registry=registry)
    assert code == 1
    assert 'Error: unable to register configz: register config "componentconfig" twice' in err


@pytest.mark.unit
def test_plugins_add_flags_and_validation() -> None:
    class Plugin:
        value = ""

        @componentbase.hookimpl
        def componentbase_add_flags(self, options: Any, flags: componentbase.cli.NamedFlagSets) -> None:
            flags.flag_set("Plugin flags").string("plugin-value", self, "value", "A plugin's flag.")

        @componentbase.hookimpl
        def componentbase_validate(self, options: Any) -> list[Exception]:
            return [] if self.value else [componentbase.field.required("plugin-value")]

    plugin = Plugin()
    code, out, _ = execute(["--help"], plugins=[plugin])
    assert "Plugin flags:\n\n      --plugin-value string   A plugin's flag." in out
    code, _, err = execute([], plugins=[Plugin()])
    assert (code, err.strip()) == (1, "Error: plugin-value: Required value")
    code, _, _ = execute(["--plugin-value=x"], plugins=[Plugin()])
    assert code == 0


@pytest.mark.unit
def test_run_refuses_an_uncompleted_config() -> None:
    from componentbase.app import run_component

    with pytest.raises(TypeError, match="CompletedConfig"):
        run_component(componentbase.Config(), lambda cc, stop: 0, threading.Event())  # type: ignore[arg-type]


@pytest.mark.unit
def test_stop_event_reaches_run(tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()

    def run(cc: componentbase.CompletedConfig[Any], s: threading.Event) -> int:
        return 0 if s.wait(1) else 1

    out, err = io.StringIO(), io.StringIO()
    cmd = componentbase.Command("hello", HelloOptions(), run, configz_registry=configz.Registry())
    assert cmd.execute([], stdout=out, stderr=err, stop=stop) == 0


@pytest.mark.unit
def test_a_plugin_with_a_wrong_hook_signature_is_one_line_and_exit_1() -> None:
    class Broken:
        @componentbase.hookimpl
        def componentbase_validate(self, options: Any, nonsense: Any) -> list[Exception]:
            return []

    code, _, err = execute([], plugins=[Broken()])
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: invalid plugin Broken: ")
    assert "nonsense" in lines[0]


@pytest.mark.unit
def test_the_command_registry_is_the_one_the_config_serves() -> None:
    registry = configz.Registry()
    seen: list[Any] = []

    def run(cc: componentbase.CompletedConfig[Any], stop: threading.Event) -> int:
        seen.append(cc.config.configz_registry)
        return 0

    assert execute([], run=run, registry=registry)[0] == 0
    assert seen == [registry]


@pytest.mark.process
def test_the_controller_machinery_is_not_loaded_by_the_package_root() -> None:
    import subprocess
    import sys

    probe = ("import sys, componentbase; print(*(m in sys.modules for m in "
             "('componentbase.informers', 'componentbase.events', 'componentbase.workqueue', 'kubernetes')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.split() == ["False", "False", "False", "False"]


@pytest.mark.unit
def test_an_api_server_that_cannot_be_reached_is_one_logged_line_and_exit_1(tmp_path: Path) -> None:
    from componentbase.controller import Manager

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        '{"apiVersion": "v1", "kind": "Config", "current-context": "c",'
        ' "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],'  # nothing listens on port 1
        ' "users": [{"name": "u", "user": {}}], "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}')

    def setup(mgr: Manager) -> None:
        mgr.informer("v1", "ConfigMap")  # discovery: the first call to the server

    cmd = componentbase.controller_command("hello", setup)
    cmd.configz_registry = configz.Registry()
    err = io.StringIO()
    assert cmd.execute([f"--kubeconfig={kubeconfig}", "--leader-elect=false", "--secure-port=0"],
                       stdout=io.StringIO(), stderr=err) == 1
    assert "Traceback" not in err.getvalue()
    assert "] command failed: NewConnectionError: " in err.getvalue().splitlines()[-1]
    assert "Connection refused" in err.getvalue().splitlines()[-1]
