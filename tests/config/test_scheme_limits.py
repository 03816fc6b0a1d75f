"""A config file is untrusted input: its size, shape and kind are bounded, and every refusal names the file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from componentbase.componentconfig import DecodeError
from componentbase.componentconfig._load import MAX_ALIASES, MAX_DEPTH, MAX_VALUES
from tests.config.schemetypes import SCHEME, SchedulerConfig, doc, errors_of

pytestmark = pytest.mark.unit


def bomb(width: int, levels: int) -> str:
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return doc("\n".join(lines) + "\n")


def test_an_alias_bomb_is_refused_at_once_naming_the_file_and_line() -> None:
    started = time.monotonic()
    errors = errors_of(bomb(9, 9))
    assert time.monotonic() - started < 5  # expanded, its 9**9 values would take minutes
    assert len(errors) == 1
    assert errors[0].startswith("sched.yaml:") and errors[0].endswith(
        f": document contains excessive aliasing: more than {MAX_VALUES} values once aliases are expanded")


def test_too_many_aliases_are_refused() -> None:
    text = doc("a: &a x\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n")
    assert errors_of(text) == [f"sched.yaml:4: document contains excessive aliasing: more than {MAX_ALIASES} aliases"]


def test_a_few_aliases_are_fine() -> None:
    # a small expansion is an ordinary YAML feature; the strict decoder then judges the fields as usual
    errors = errors_of(doc("base: &b {x: 1}\nother: *b\n"))
    assert all(line.startswith("sched.yaml:") for line in errors) and "more than" not in "".join(errors)


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_deep_nesting_is_refused_before_anything_recurses(opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    n = 5000
    errors = errors_of(doc("parallelism: " + opening * n + "1" * (opening != "[") + closing * n + "\n"))
    assert errors == [f"sched.yaml:3: exceeded max depth of {MAX_DEPTH}"]


def test_nesting_at_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 1  # the document's own map is one level
    errors = errors_of(doc("parallelism: " + "[" * depth + "]" * depth + "\n"))
    assert errors == ["sched.yaml:3: parallelism: Invalid value: must be an integer, not a list"]


def chain(links: int, levels: int = 90) -> str:
    """Each anchor nests the one before ``levels`` deeper: shallow as written, deep once aliases are expanded."""
    lines = ["x0: &a0 " + "[" * levels + "1" + "]" * levels]
    lines += [f"x{i}: &a{i} " + "[" * levels + f"*a{i - 1}" + "]" * levels for i in range(1, links)]
    return doc("\n".join(lines) + "\n")


def test_depth_counts_what_aliases_expand_to() -> None:
    """Forty anchors each nesting the last 90 levels deeper is 3600 levels to convert: Python's recursion limit
    was the error ('maximum recursion depth exceeded'), naming no file."""
    assert errors_of(chain(40)) == [f"sched.yaml:4: exceeded max depth of {MAX_DEPTH} once aliases are expanded"]
    # the document's map, then `outer` levels, then x0's `half`: exactly the limit, read; one level more is not
    half = MAX_DEPTH // 2
    outer = MAX_DEPTH - 1 - half
    inner = "x0: &a0 " + "[" * half + "1" + "]" * half + "\n"
    errors = errors_of(doc(inner + "parallelism: " + "[" * outer + "*a0" + "]" * outer + "\n"))
    assert errors == ['sched.yaml:3: unknown field "x0"',
                      "sched.yaml:4: parallelism: Invalid value: must be an integer, not a list"]
    assert errors_of(doc(inner + "parallelism: " + "[" * (outer + 1) + "*a0" + "]" * (outer + 1) + "\n")) == [
        f"sched.yaml:4: exceeded max depth of {MAX_DEPTH} once aliases are expanded"]


@pytest.mark.parametrize(("body", "line"), [
    ("labels: &a {b: *a}\n", 3),
    ("profiles: &a [*a]\n", 3),
    ("leaderElection: &a\n  <<: *a\n", 4),
    ("profiles:\n- &p\n  args: [1, {x: [*p]}]\n", 5),
])
def test_an_anchor_holding_itself_is_refused_as_go_yaml_refuses_it(body: str, line: int) -> None:
    """ruamel reads such an alias as null (a merge of one failed inside ruamel); go-yaml, kube's reader, refuses."""
    assert errors_of(doc(body)) == [f"sched.yaml:{line}: anchor '{'p' if '&p' in body else 'a'}' value contains itself"]


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_a_long_comment_is_read_in_linear_time(size: int) -> None:
    text = doc("# " + "x" * size + "\nparallelism: 4  # " + "y" * size + "\n")
    started = time.monotonic()
    cfg = SCHEME.decode(text)
    assert isinstance(cfg, SchedulerConfig) and cfg.parallelism == 4
    assert time.monotonic() - started < 5  # quadratic in a 10**6-character line would take hours
    # the lines after a long comment are still right
    assert errors_of(doc("# " + "x" * size + "\nparallelism: x\n")) == [
        'sched.yaml:4: parallelism: Invalid value: "x": must be an integer']


def test_comments_everywhere_change_nothing() -> None:
    text = doc("""\
        # head
        parallelism: 4 # after a value
        profiles: # after a key
        - schedulerName: a  # in a list
          # between
          mode: fast
        #tail""")
    assert SCHEME.decode(text) == SCHEME.decode(doc("parallelism: 4\nprofiles:\n- schedulerName: a\n  mode: fast\n"))


def test_only_a_regular_file_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: opening it for reading would block forever
    started = time.monotonic()
    with pytest.raises(DecodeError) as info:
        SCHEME.decode_file(fifo)
    assert time.monotonic() - started < 5  # opened, it would block forever
    assert str(info.value) == f"open {fifo}: is a FIFO, not a regular file"
    with pytest.raises(DecodeError) as info:
        SCHEME.decode_file("/dev/zero")  # endless: never read
    assert str(info.value) == "open /dev/zero: is a character device, not a regular file"


def test_an_input_ruamel_itself_fails_on_names_the_file() -> None:
    errors = errors_of(doc("parallelism: !!float x\n"))  # ruamel's float constructor raises a ValueError
    assert errors == ["sched.yaml: not valid YAML (ValueError: could not convert string to float: 'x')"]


def test_a_directive_after_content_names_its_line() -> None:
    # ruamel's round-trip scanner, looking a token further ahead, failed here with a KeyError of its own
    assert errors_of(doc("%YAML 9.9\n---\n")) == [
        "sched.yaml:3: found incompatible YAML document (version 1.* is required)"]
