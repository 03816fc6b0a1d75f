"""The command line's switch for garbage collection, read as kube-apiserver's boolean flags are."""

from __future__ import annotations

import pytest

from componentbase.testing.apiserver.__main__ import _parser, main

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("argv", "expected"), [
    ([], True), (["--enable-garbage-collector"], True), (["--enable-garbage-collector=false"], False),
    (["--enable-garbage-collector=0"], False), (["--enable-garbage-collector=TRUE"], True),
])
def test_enable_garbage_collector(argv: list[str], expected: bool) -> None:
    assert _parser().parse_args(argv).enable_garbage_collector is expected


def test_a_bad_boolean_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--enable-garbage-collector=maybe"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "python -m componentbase.testing.apiserver: error: argument --enable-garbage-collector: "
        "invalid boolean 'maybe'"]
