"""The Dockerfile: multi-stage on a slim base, a non-root user, and entrypoints that are the wheel's console scripts.

No Docker daemon is needed: a small parser reads the instructions (continuation lines, comments, ``FROM ... AS``,
exec-form ``ENTRYPOINT``) and the checks below read them. tests/ship/test_wheel.py shows the wheel installs
exactly pyproject's ``[project.scripts]``, so checking against those is checking against the wheel.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import attrs
import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
                "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
#: What would put a compiler (or a package manager's build tools) into an image.
COMPILERS = re.compile(r"\b(apt-get|apt|apk|dnf|yum)\b.*\binstall\b|\b(gcc|g\+\+|clang|build-essential|cc)\b")


@attrs.define
class Stage:
    name: str
    base: str  # an image, or the name of an earlier stage
    instructions: list[tuple[str, str]] = attrs.field(factory=list)


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """(ARGs before the first FROM, the stages in order); ValueError names a line that is no instruction."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    logical = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#"):  # comments may sit between continuation lines too
            continue
        if stripped.endswith("\\"):
            logical += stripped.removesuffix("\\").rstrip() + " "
            continue
        logical, whole = "", (logical + stripped).strip()
        if not whole:
            continue
        keyword, _, rest = whole.partition(" ")
        keyword = keyword.upper()
        if keyword not in INSTRUCTIONS:
            raise ValueError(f"line {number}: unknown instruction {keyword}")
        if keyword == "FROM":
            words = rest.split()
            base = words[0]
            for name, value in args.items():
                base = base.replace("${" + name + "}", value).replace("$" + name, value)
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(name, base))
        elif not stages:
            if keyword != "ARG":
                raise ValueError(f"line {number}: {keyword} before the first FROM")
            name, _, value = rest.strip().partition("=")
            args[name] = value
        else:
            stages[-1].instructions.append((keyword, rest.strip()))
    return args, stages


def chain(stages: list[Stage], stage: Stage) -> list[Stage]:
    """``stage`` and the stages it is built on, base first."""
    by_name = {s.name: s for s in stages}
    found = [stage]
    while found[0].base in by_name:
        found.insert(0, by_name[found[0].base])
    return found


def problems(text: str, scripts: set[str]) -> list[str]:
    """What is wrong with the Dockerfile ``text`` for an image whose entrypoints must be ``scripts``."""
    try:
        _, stages = parse(text)
    except ValueError as err:
        return [str(err)]
    found = []
    if len(stages) < 2:
        found.append("not multi-stage")
    by_name = {s.name for s in stages}
    for stage in stages:
        if stage.base not in by_name and not stage.base.split(":")[-1].endswith("-slim"):
            found.append(f"stage {stage.name}: base image {stage.base} is not a slim image")
    named: list[str] = []
    for stage in stages:
        entrypoints = [rest for keyword, rest in stage.instructions if keyword == "ENTRYPOINT"]
        if not entrypoints:
            continue
        try:
            argv = json.loads(entrypoints[-1])
        except json.JSONDecodeError:
            found.append(f"stage {stage.name}: ENTRYPOINT is not in exec form")
            continue
        named.append(argv[0])
        if argv[0] not in scripts:
            found.append(f"stage {stage.name}: ENTRYPOINT {argv[0]} is not a script the wheel installs")
        image = [i for s in chain(stages, stage) for i in s.instructions]
        users = [rest for keyword, rest in image if keyword == "USER"]
        if not users or users[-1].split(":")[0] in ("0", "root"):
            found.append(f"stage {stage.name}: runs as root")
        for keyword, rest in image:
            if keyword == "RUN" and COMPILERS.search(rest):
                found.append(f"stage {stage.name}: RUN may install a compiler: {rest}")
    missing = scripts - set(named)
    if missing:
        found.append(f"no stage runs {', '.join(sorted(missing))}")
    return found


def scripts() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])


def test_the_dockerfile_is_multi_stage_slim_non_root_and_runs_only_the_wheels_scripts() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert problems(text, scripts()) == []
    _, stages = parse(text)
    assert [s.name for s in stages] == ["build", "runtime", "scheduler", "virtual-kubelet", "hello", "widgets",
                                        "apiserver", "demo"]
    entrypoints = {json.loads(rest)[0] for s in stages for keyword, rest in s.instructions if keyword == "ENTRYPOINT"}
    assert entrypoints == scripts()
    runtime = next(s for s in stages if s.name == "runtime")
    # The final images get the built venv and nothing else from the build stage.
    assert [rest for keyword, rest in runtime.instructions if keyword == "COPY"] == [
        "--from=build /opt/componentbase /opt/componentbase"]

