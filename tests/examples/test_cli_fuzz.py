"""Fuzzing the example components' command lines and config files, in-process through each ``Command``.

Whatever a user or an attacker types, a component exits 0 or prints one-line errors and exits non-zero, in
well under 2 s: never a traceback, never a hang. Inputs are generated (hypothesis) from each command's own
flags and from each component's defaulted config; the number of examples is bounded so CI stays fast.

Nothing here reaches a cluster: the scheduler and the greeter stop after ``--write-config-to`` (parsing,
loading, validation and writing all run), and the virtual kubelet is pointed at a kubeconfig that does not
exist, so it stops when it builds its client. Flags naming files to read or write are drawn from paths this
test owns, never from system paths such as ``/dev/null``.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import componentbase
from componentbase.serving import configz

pytestmark = pytest.mark.unit

#: The bound on one input's CPU time (this thread's: a busy machine stalls wall time, not the work done; a
#: quadratic blow-up burns CPU, a true hang meets pytest-timeout), and the examples per test (about 10 ms
#: each in-process); raise it for a deeper run with CB_FUZZ_EXAMPLES=5000.
LIMIT_SECONDS = 2.0
EXAMPLES = int(os.environ.get("CB_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

#: Flags that read or write files, start servers or reach a cluster: the test sets them itself.
OWN_FLAGS = {"config", "write-config-to", "kubeconfig", "authentication-kubeconfig", "authorization-kubeconfig",
             "cert-dir", "tls-cert-file", "tls-private-key-file", "provider-config", "master", "dry-run"}


def scheduler() -> componentbase.Command:
    from componentbase_examples.scheduler.__main__ import new_command

    return new_command()


def virtual_kubelet() -> componentbase.Command:
    from componentbase_examples.virtual_kubelet.__main__ import new_command

    return new_command()


def greeter() -> componentbase.Command:
    from componentbase_examples.greeter.__main__ import HelloOptions, run

    return componentbase.Command("hello", HelloOptions(), run)


COMMANDS: dict[str, Callable[[], componentbase.Command]] = {
    "scheduler": scheduler, "virtual-kubelet": virtual_kubelet, "greeter": greeter,
}


# ------------------------------------------------------------------------------------------------------
# Running one input and judging its output

def run(make: Callable[[], componentbase.Command], args: list[str]) -> tuple[int, str]:
    cmd = make()
    cmd.configz_registry = configz.Registry()
    stop = threading.Event()
    stop.set()  # should anything get as far as running, it stops at once
    out, err = io.StringIO(), io.StringIO()
    started = time.thread_time()
    code = cmd.execute(args, stdout=out, stderr=err, stop=stop)
    elapsed = time.thread_time() - started
    assert elapsed < LIMIT_SECONDS, f"{args!r} took {elapsed:.2f}s of CPU"
    return code, err.getvalue()


def assert_clean(code: int, stderr: str, args: list[str]) -> None:
    """Exit 0, or a non-zero exit with each problem on one ``Error:`` line; no traceback either way."""
    assert "Traceback" not in stderr, f"{args!r}:\n{stderr}"
    assert code in (0, 1), (args, code, stderr)  # component-base's cli.Run: 1 for every error
    if code:
        errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
        assert errors, f"{args!r} exited {code} without an error line:\n{stderr}"
        for line in errors:
            assert len(line) > len("Error: ") + 2, (args, line)


# ------------------------------------------------------------------------------------------------------
# Flag lines

junk = st.text(max_size=24)
numbers = st.integers(min_value=-(2**70), max_value=2**70).map(str)
floats = st.floats(allow_nan=True, allow_infinity=True).map(repr) | st.sampled_from(["inf", "-inf", "nan", "1e400"])
durations = st.sampled_from(["0", "1s", "-1s", "1.5h", "99999999999999999999h", "9223372036854775807ns",
                             "2562048h", " 1s", "1s ", "1d", "1e3s", ".s", "+", "1\u0661s", "1µs"])
VALUES: dict[str, st.SearchStrategy[str]] = {
    "bool": st.sampled_from(["true", "false", "1", "0", "t", "F", "TRUE", "yes", ""]),
    "int": numbers | st.sampled_from(["0x10", "1_000", " 5", "\u0663", "99" * 2500]),
    "float": floats,
    "duration": durations,
    "version": st.sampled_from(["true", "raw", "v1.2.3", "false", "x"]),
    "mapStringBool": st.sampled_from(["A=true", "A=maybe", "=", ",", "AllAlpha=false,AllBeta=true", "x"]),
    "ip": st.sampled_from(["0.0.0.0", "::", "1.2.3.4.5", "256.0.0.1", "", "localhost"]),
}
SPECIAL = {"vmodule": st.sampled_from(["abc", "a=1", "a=x", "a=\u00b2", "=1", "a=1,b", "*=99999999999999999999"]),
           "os": st.sampled_from(["linux", "Linux", "windows", "Windows", "LINUX", "darwin", ""]),
           "provider": st.sampled_from(["mock", "process", "nope", ""]),
           "logging-format": st.sampled_from(["text", "json", "xml"])}


@st.composite
def flag_lines(draw: st.DrawFn, cmd: componentbase.Command) -> list[str]:
    flags = sorted((f for f in cmd.flags.flags() if f.name not in OWN_FLAGS), key=lambda f: f.name)
    args: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        flag = draw(st.sampled_from(flags))
        value = draw(SPECIAL[flag.name] if flag.name in SPECIAL else VALUES.get(flag.type.name, junk) | junk)
        form = draw(st.sampled_from(["eq", "sep", "bare", "single-dash"]))
        if form == "eq":
            args.append(f"--{flag.name}={value}")
        elif form == "sep":
            args += [f"--{flag.name}", value]
        elif form == "bare":
            args.append(f"--{flag.name}")
        else:
            args.append(f"-{flag.name}={value}")
    if draw(st.booleans()):
        args.insert(draw(st.integers(0, len(args))), draw(st.sampled_from(["-", "--", "---x", "pos", "-h=x", "--=x"])
                                                           | junk))
    return args


def finishing_args(name: str, tmp: Path) -> list[str]:
    """What stops a component before it runs: write the config, or fail to find the kubeconfig."""
    if name == "virtual-kubelet":
        return [f"--kubeconfig={tmp / 'no-such-kubeconfig'}"]
    return [f"--write-config-to={tmp / 'written.yaml'}"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_generated_flag_lines_exit_cleanly(name: str, tmp_path: Path) -> None:
    make = COMMANDS[name]

    @FUZZ
    @given(flag_lines(make()))
    def check(args: list[str]) -> None:
        full = [*args, *finishing_args(name, tmp_path)]
        code, stderr = run(make, full)
        assert_clean(code, stderr, full)
        if "--help' for usage." in stderr:  # a command line that does not parse: pflag's one line, then usage
            lines = [line for line in stderr.splitlines()  # less deprecation notes and log lines (-v)
                     if not line.startswith("Flag --") and not KLOG_LINE.match(line)]
            assert len(lines) == 2 and lines[0].startswith("Error: ") and lines[1].startswith("Run '"), (full, stderr)

    check()


# ------------------------------------------------------------------------------------------------------
# Config documents

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**66), 2**66) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
PLUGIN_NAMES = ["PodTopologySpread", "InterPodAffinity", "NodeAffinity", "NodeResourcesFit",
                "NodeResourcesBalancedAllocation", "TaintToleration", "Nope"]
constraint = st.fixed_dictionaries({}, optional={
    "maxSkew": json_values, "topologyKey": json_values | st.just("zone"),
    "whenUnsatisfiable": json_values | st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
    "labelSelector": json_values, "minDomains": json_values, "matchLabelKeys": json_values,
})
plugin_args = st.fixed_dictionaries({"name": st.sampled_from(PLUGIN_NAMES)}, optional={
    "args": json_values | st.fixed_dictionaries({}, optional={
        "defaultingType": st.sampled_from(["List", "System", "", "x"]) | json_values,
        "defaultConstraints": st.lists(constraint, max_size=3) | json_values,
        "hardPodAffinityWeight": json_values, "addedAffinity": json_values, "scoringStrategy": json_values,
    }),
})


def default_document(make: Callable[[], componentbase.Command]) -> dict[str, Any]:
    options: Any = make().options
    document: dict[str, Any] = options.SCHEME.to_dict(options.component_config)
    return document


@st.composite
def mutated(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    """The defaulted document with a few fields (top level or one below) replaced, removed or added."""
    doc = json.loads(json.dumps(document))
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from([*sorted(doc), "unknownField"]))
        action = draw(st.sampled_from(["replace", "delete", "nested"]))
        if action == "delete":
            doc.pop(key, None)
        elif action == "nested" and isinstance(doc.get(key), dict) and doc[key]:
            inner = draw(st.sampled_from(sorted(doc[key])))
            doc[key][inner] = draw(json_values)
        else:
            doc[key] = draw(json_values)
    if "profiles" in document and draw(st.booleans()):
        plugin_config = draw(st.lists(plugin_args, max_size=3))
        doc["profiles"] = [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config}]
    return doc


def yaml_tricks(header: str) -> st.SearchStrategy[str]:
    """Documents that attack the YAML layer itself: aliases, nesting, long lines, odd syntax."""
    def bomb(width: int, levels: int) -> str:
        lines = ["x0: &x0 [" + ", ".join(["v"] * width) + "]"]
        lines += [f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * width) + "]" for i in range(1, levels)]
        return header + "\n".join(lines) + "\n"

    return st.one_of(
        st.builds(bomb, st.integers(2, 12), st.integers(2, 12)),
        st.integers(1, 400).map(lambda n: header + "parallelism: " + "[" * n + "]" * n + "\n"),
        st.integers(1, 400).map(lambda n: header + "leaderElection: " + "{a: " * n + "1" + "}" * n + "\n"),
        st.integers(1, 300_000).map(lambda n: header + "# " + "x" * n + "\n"),
        st.integers(1, 100_000).map(lambda n: header + "name: " + "y" * n + "\n"),
        st.sampled_from(["", "---\n---\n", "[1, 2]\n", "just text\n", "\t- x\n", "a: b: c\n", "{\n", "&a *a\n",
                         "!!python/object:os.system {}\n", "\x00\x01\n", "key: \ud800\n", "%YAML 9.9\n---\n"])
        .map(lambda tail: header + tail),
        st.text(max_size=200).map(lambda tail: header + tail),
        st.binary(max_size=200).map(lambda raw: raw.decode("latin-1")),
    )


@pytest.mark.parametrize("name", ["greeter", "scheduler"])
def test_generated_config_files_exit_cleanly(name: str, tmp_path: Path) -> None:
    make = COMMANDS[name]
    document = default_document(make)
    header = f"apiVersion: {document['apiVersion']}\nkind: {document['kind']}\n"
    source = tmp_path / "config.yaml"

    @FUZZ
    @given(mutated(document).map(lambda d: json.dumps(d, ensure_ascii=False)) | yaml_tricks(header))
    @example(header + '"a\\nb": 1\n')  # found by this test: a key holding a newline split its error in two
    def check(text: str) -> None:
        source.write_bytes(text.encode("utf-8", "surrogatepass"))
        args = [f"--config={source}", *finishing_args(name, tmp_path)]
        code, stderr = run(make, args)
        assert_clean(code, stderr, args)
        for line in stderr.splitlines():  # each problem names the file (reading it) or the field (validating it)
            assert not line.startswith("Error: ") or str(source) in line or FIELD_ERROR.match(line), (text, line)

    check()


#: A log line in klog's text format, or one in JSON.
KLOG_LINE = re.compile(r'[IWEF]\d{4} |\{"ts":')

#: An error about a field: ``Error: profiles[0].pluginConfig[1].args: ...``.
FIELD_ERROR = re.compile(r"Error: [A-Za-z][\w-]*(\[\d+\]|\.[\w-]+)*: ")


# ------------------------------------------------------------------------------------------------------
# Files of the wrong kind, given where a config is read or written

def test_config_and_write_target_must_be_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    for bad, kind in ((fifo, "is a FIFO, not a regular file"), (folder, "is a directory")):
        code, stderr = run(scheduler, [f"--config={bad}", f"--write-config-to={tmp_path / 'out.yaml'}"])
        assert code == 1 and f"Error: open {bad}: {kind}" in stderr.splitlines()
        code, stderr = run(scheduler, [f"--write-config-to={bad}"])
        assert code == 1
        assert [line for line in stderr.splitlines() if line.startswith("Error:")] == [
            f"Error: unable to write config to {bad}: {'is a directory' if bad == folder else 'not a regular file'}"]
    assert fifo.is_fifo() and folder.is_dir()  # neither replaced


def test_write_config_to_writes_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real" / "config.yaml"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    code, stderr = run(greeter, [f"--write-config-to={link}"])
    assert code == 0, stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("apiVersion: hello.example.com/v1alpha1\n")
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.yaml"]  # no temporary file left behind
