"""Logging as klog does it: header, -v levels, --vmodule, JSON lines."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest

from componentbase.logs import (
    LogsOptions,
    V,
    configure,
)

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_klog_text_header_and_verbosity() -> None:
    out = io.StringIO()
    configure(verbosity=2, stream=out)
    log = logging.getLogger("componentbase.test")
    log.log(V(2), "shown at v=2")
    log.log(V(3), "hidden at v=2")
    log.warning("careful")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ test_logs\.py:\d+\] shown at v=2", lines[0])
    assert lines[1].startswith("W") and lines[1].endswith("] careful")


def test_vmodule_raises_one_module_only() -> None:
    out = io.StringIO()
    configure(verbosity=0, vmodule="test_logs=4", stream=out)
    logging.getLogger("x").log(V(4), "from this module")
    assert "from this module" in out.getvalue()
    out2 = io.StringIO()
    configure(verbosity=0, vmodule="other*=4", stream=out2)
    logging.getLogger("x").log(V(4), "not this one")
    assert out2.getvalue() == ""


def test_json_lines() -> None:
    out = io.StringIO()
    configure(verbosity=1, fmt="json", stream=out)
    logging.getLogger("x").log(V(1), "hello %s", "json")
    logging.getLogger("x").error("broken")
    info, err = (json.loads(line) for line in out.getvalue().splitlines())
    assert info["msg"] == "hello json" and info["v"] == 1 and info["caller"].startswith("test_logs.py:")
    assert err["msg"] == "broken" and "err" in err


def test_options_validation() -> None:
    bad = LogsOptions(verbosity=-1, vmodule="nope", format="xml")
    assert [str(e) for e in bad.validate()] == [
        "v: Invalid value: -1: must be non-negative",
        'logging-format: Unsupported value: "xml": supported values: "text", "json"',
        "vmodule: Invalid value: \"nope\": expect comma-separated list of pattern=N, got 'nope'",
    ]
    assert [str(e) for e in LogsOptions(vmodule="a=1", format="json").validate()] == [
        "vmodule: Forbidden: only supported for text log format"]


@pytest.mark.parametrize("vmodule", ["abc", "a=x", "a=\u00b2", "=1"])
def test_a_bad_vmodule_is_a_validation_error_not_a_crash(vmodule: str) -> None:
    """Logging is configured before validation; a bad --vmodule must wait for validation to report it."""
    options = LogsOptions(vmodule=vmodule)
    stream = io.StringIO()
    options.apply(stream)  # does not raise
    logging.getLogger("x").info("still logging")
    assert "still logging" in stream.getvalue()
    assert [str(e).split(":")[0] for e in options.validate()] == ["vmodule"]
