"""``Command``: kube-scheduler's ``runCommand`` flow, which every component built here gets for free.

version -> print flags -> refuse arguments -> complete -> validate -> write-config-to -> config ->
complete -> configz -> run, with SIGINT/SIGTERM setting the stop event. Each failure is a short message
and exit code 1, never a traceback: component-base's ``cli.Run`` exits 1 for every error, a command line
that does not parse included (cobra's usage errors are errors like any other).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, TextIO

import pluggy

from componentbase.app._componentoptions import ComponentOptions
from componentbase.app._config import CompletedConfig
from componentbase.app._options import Options
from componentbase.cli import Options as OptionGroup
from componentbase.cli import _flags as cliflags
from componentbase.logs import (
    LogsOptions,
    V,
)
from componentbase.serving import configz
from componentbase.util import version
from componentbase.util._plugins import new_plugin_manager
from componentbase.util._signals import SignalThread
from componentbase.util.field import AggregateError

__all__ = ["Command", "RunFunc", "print_flags"]

log = logging.getLogger("componentbase.cli")

RunFunc = Callable[[CompletedConfig[Any], threading.Event], "int | None"]

GLOBAL = "Global flags"

#: How long ``main`` waits, once the component has stopped, for its threads to end before exiting without them.
EXIT_GRACE = 5.0


class _VersionFlag:
    """``--version``, ``--version=raw``, ``--version=vX.Y.Z`` (sets the reported version), as verflag."""

    def __init__(self) -> None:
        self.value = "false"

    @staticmethod
    def parse(text: str) -> str:
        lowered = text.strip().lower()
        if lowered in ("raw", "true", "false", "1", "0", "t", "f"):
            return {"1": "true", "t": "true", "0": "false", "f": "false"}.get(lowered, lowered)
        if text.startswith("v"):
            return text
        raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


_VERSION_TYPE = cliflags.FlagType("version", _VersionFlag.parse, str, "false")


class _Help:
    value = False


def print_flags(fss: cliflags.NamedFlagSets) -> None:
    """Log every flag at V(1) as ``FLAG: --name="value"``, sorted as pflag's VisitAll visits them.

    A secret flag that is set shows ``"<redacted>"``; an empty one shows as empty, so it is clear it is unset.
    """
    if not log.isEnabledFor(V(1)):
        return
    for flag in sorted(fss.flags(), key=lambda f: f.name):
        text = flag.value_text()
        if flag.secret and text not in ("", flag.type.format(flag.type.zero)):
            text = "<redacted>"
        log.log(V(1), "FLAG: --%s=%s", flag.name, json.dumps(text, ensure_ascii=False))


def _find_logs(options: OptionGroup) -> LogsOptions | None:
    if isinstance(options, LogsOptions):
        return options
    for sub in options.sub_options():
        found = _find_logs(sub)
        if found is not None:
            return found
    return None


class Command:
    """A component's command line and life cycle.

    ``run(completed, stop)`` is the component's work: it returns when ``stop`` is set (or on its own),
    and its return value is the exit code (``None`` is 0).
    """

    def __init__(
        self,
        name: str,
        options: Options,
        run: RunFunc,
        *,
        short: str = "",
        long: str = "",
        version_string: str | None = None,
        plugins: Iterable[object] = (),
        hookspecs: Iterable[type | ModuleType] = (),
        entry_point_group: str | None = None,
        configz_name: str = "componentconfig",
        configz_registry: configz.Registry | None = None,
        sections: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.options = options
        self.run = run
        self.short = short
        self.long = long
        self.version_string = version_string
        self.configz_name = configz_name
        self.configz_registry = configz_registry
        #: A plugin that could not be registered or loaded: ``execute`` reports it and exits 1.
        self.setup_error = ""
        try:
            self.plugins = new_plugin_manager(hookspecs, plugins, entry_point_group)
        except (pluggy.PluginValidationError, ImportError) as e:
            self.setup_error = _plugin_error(e)
            self.plugins = new_plugin_manager(hookspecs)
        self.flags = cliflags.NamedFlagSets()
        for section in (*sections, *getattr(options, "SECTIONS", ())):
            self.flags.flag_set(section)
        self._version = _VersionFlag()
        self._help = _Help()
        options.add_flags(self.flags)
        self.plugins.hook.componentbase_add_flags(options=options, flags=self.flags)
        g = self.flags.flag_set(GLOBAL)
        g.bool("help", self._help, "value", f"help for {name}", shorthand="h")
        g.var("version", self._version, "value", _VERSION_TYPE,
              "--version, --version=raw prints version information and quits; "
              "--version=vX.Y.Z... sets the reported version", no_opt_default="true")

    def help_text(self, width: int | None = None) -> str:
        head = (self.long or self.short).strip()
        usage = f"Usage:\n  {self.name} [flags]\n\n"
        return (f"{head}\n\n" if head else "") + usage + self.flags.help_sections(width)

    def _version_info(self) -> version.Info:
        requested = self._version.value
        override = requested if requested.startswith("v") else self.version_string
        return version.get(override)

    def execute(
        self, argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None,
        stop: threading.Event | None = None,
    ) -> int:
        """Run the whole flow; return the exit code. ``main`` is this plus ``sys.exit``."""
        out = stdout or sys.stdout
        err = stderr or sys.stderr
        if self.setup_error:
            err.write(f"Error: {self.setup_error}\n")
            return 1
        args = sys.argv[1:] if argv is None else list(argv)
        try:
            positional = self.flags.parse(args, warn=err)
        except cliflags.FlagError as e:
            err.write(f"Error: {cliflags.printable(str(e))}\nRun '{self.name} --help' for usage.\n")
            return 1
        if self._help.value:
            out.write(self.help_text(cliflags.terminal_width()))
            return 0
        if self._version.value in ("true", "raw"):
            info = self._version_info()
            out.write((info.raw() if self._version.value == "raw" else f"{self.name} {info}") + "\n")
            return 0
        logs = _find_logs(self.options)
        if logs is not None:
            logs.apply(err)
        print_flags(self.flags)
        if positional:
            err.write(f"Error: arguments are not supported, got {json.dumps(positional)}\n"
                      f"Run '{self.name} --help' for usage.\n")
            return 1
        errors = self.options.complete()
        if not errors:
            errors = self.options.validate()
            for found in self.plugins.hook.componentbase_validate(options=self.options):
                errors.extend(found or [])
        if errors:
            for problem in errors:  # one line per error: a newline in a key of the user's file is escaped
                for one in problem.errors if isinstance(problem, AggregateError) else [problem]:
                    err.write(f"Error: {cliflags.printable(str(one))}\n")
            return 1
        if isinstance(self.options, ComponentOptions) and self.options.write_config_to:
            return self._write_config(self.options, err)
        return self._run(err, stop)

    def _write_config(self, options: ComponentOptions, err: TextIO) -> int:
        path = options.write_config_to
        try:
            options.write_config(path)
        except OSError as e:
            err.write(f"Error: unable to write config to {path}: {e.strerror or e}\n")
            return 1
        log.info("Wrote configuration to: %s", path)
        return 0

    def _run(self, err: TextIO, stop: threading.Event | None) -> int:
        try:
            config = self.options.config()
        except Exception as e:  # a bad kubeconfig, an unreachable file: say it in one line
            if not _is_user_error(e):
                raise
            err.write(f"Error: {cliflags.printable(str(e))}\n")
            return 1
        config.plugins = self.plugins
        registry = self.configz_registry or config.configz_registry or configz.default_registry()
        config.configz_registry = registry  # /configz serves what is registered here
        self.plugins.hook.componentbase_configure(config=config)
        completed = config.complete()
        if completed.config.component_config is not None:
            try:
                registry.new(self.configz_name).set(completed.config.component_config)
            except configz.ConfigzError as e:
                err.write(f"Error: unable to register configz: {e}\n")
                return 1
        stop = stop or threading.Event()
        # What start-up built (modules, config, clients) lives for the whole run: keep it out of the
        # collector's full passes, which otherwise walk it again and again on a busy component's hot path.
        gc.freeze()
        from componentbase.app._run import run_component  # the runtime: serving, leader election; not for --help
        from componentbase.client import UnknownKind, describe, is_connection_error, status_of

        with _signals_set(stop):
            try:
                return run_component(completed, self.run, stop, err=err)
            except Exception as e:  # an API server that cannot be reached or refuses, a kind it does not serve:
                # one line, as Go's cli.Run prints what a component's Run returned
                if not (isinstance(e, UnknownKind) or is_connection_error(e) or status_of(e) is not None):
                    raise
                log.error("command failed: %s", e if isinstance(e, UnknownKind) else describe(e).summary)
                return 1

    def main(self, argv: Sequence[str] | None = None) -> None:
        """Execute and exit with its code, like a Go ``main``, once every thread has ended.

        The library's threads end when the component stops. Only if some thread (the component's own, or a call
        still blocked in the network) is alive ``EXIT_GRACE`` seconds later does the process end without it,
        naming it: a daemon thread running while the interpreter shuts down can abort the process.
        """
        code = self.execute(argv)
        alive = _join_threads(EXIT_GRACE)
        if alive:
            log.error("Threads still running %gs after stopping, exiting without them: %s", EXIT_GRACE,
                      ", ".join(sorted(t.name for t in alive)))
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        sys.exit(code)


def _join_threads(timeout: float) -> list[threading.Thread]:
    """Wait up to ``timeout`` seconds in all for every thread but this one to end; those still alive."""
    deadline = time.monotonic() + timeout
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    alive = []
    for thread in others:
        try:
            thread.join(max(0.0, deadline - time.monotonic()))
        except (AssertionError, RuntimeError):  # a thread ``threading`` did not start cannot be joined
            continue
        if thread.is_alive():
            alive.append(thread)
    return alive


def _plugin_error(e: Exception) -> str:
    if isinstance(e, pluggy.PluginValidationError):
        reason = str(e).splitlines()[-1]  # pluggy's last line says what is wrong
        return f"invalid plugin {_plugin_name(e.plugin)}: {reason}"
    return f"unable to load a plugin: {e}"


def _plugin_name(plugin: object) -> str:
    return getattr(plugin, "__name__", None) or type(plugin).__name__


def _is_user_error(e: Exception) -> bool:
    from componentbase.client import ClientConfigError  # the client: only once a config step failed

    return isinstance(e, ClientConfigError | OSError | ValueError)


class _signals_set(SignalThread):
    """SIGINT/SIGTERM set ``stop``; a second one exits at once, as component-base's SetupSignalHandler.

    Handled on a thread of their own (``componentbase.util._signals``): a Python signal handler setting
    ``stop`` could wait forever for the lock of a ``stop.wait()`` it interrupted.
    """

    def __init__(self, stop: threading.Event) -> None:
        super().__init__(self._on_signal)
        self.stop = stop

    def _on_signal(self, signum: int) -> None:
        if self.stop.is_set():
            os._exit(1)  # asked twice: exit now, without waiting for anything, as Go components do
        log.info("Received signal %s, shutting down", signal.Signals(signum).name)
        self.stop.set()
