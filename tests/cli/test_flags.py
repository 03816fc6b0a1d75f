"""The flag parser and help layout, as a user of a pflag-based component would see them."""

from __future__ import annotations

import io

import attrs
import pytest

from componentbase import (
    Duration,
    FlagError,
)
from componentbase.cli import (
    DURATION,
    NamedFlagSets,
)

pytestmark = pytest.mark.unit


@attrs.define
class Target:
    elect: bool = True
    lease: Duration = Duration(15)
    config: str = ""
    names: list[str] = attrs.field(factory=list)
    level: int = 0
    qps: float = 50.0


def make() -> tuple[Target, NamedFlagSets]:
    t = Target()
    fss = NamedFlagSets()
    fs = fss.flag_set("Misc flags")
    fs.bool("leader-elect", t, "elect", "Start a leader election client.")
    fs.var("lease-duration", t, "lease", DURATION, "The lease duration.")
    fs.string("config", t, "config", "The path to the configuration file.")
    fs.strings("names", t, "names", "Some names.")
    fs.float("kube-api-qps", t, "qps", "QPS.")
    fss.flag_set("Logs flags").int("v", t, "level", "number for the log level verbosity",
                                   shorthand="v", type_label="Level")
    return t, fss


def test_values_in_both_forms_and_go_durations() -> None:
    t, fss = make()
    rest = fss.parse(["--leader-elect=false", "--lease-duration", "1m30s", "--config=/etc/x.yaml",
                      "--names=a,b", "--kube-api-qps", "2.5"])
    assert rest == []
    assert t == Target(elect=False, lease=Duration(90), config="/etc/x.yaml", names=["a", "b"], qps=2.5)
    assert str(t.lease) == "1m30s"


def test_bare_bool_does_not_eat_the_next_word() -> None:
    t, fss = make()
    assert fss.parse(["--leader-elect", "false"]) == ["false"]
    assert t.elect is True


@pytest.mark.parametrize("args", [["-v=3"], ["-v", "3"], ["-v3"], ["--v=3"], ["--v", "3"]])
def test_verbosity_spellings(args: list[str]) -> None:
    t, fss = make()
    fss.parse(args)
    assert t.level == 3


def test_underscores_are_dashes_and_double_dash_ends_flags() -> None:
    t, fss = make()
    assert fss.parse(["--lease_duration=500ms", "--", "--config=x"]) == ["--config=x"]
    assert t.lease == 0.5 and t.config == ""


def test_changed_is_tracked() -> None:
    _, fss = make()
    fss.parse(["--config=x"])
    assert fss.changed("config") and not fss.changed("leader-elect")


@pytest.mark.parametrize(("args", "message"), [
    (["--nope"], "unknown flag: --nope"),
    (["-x"], "unknown shorthand flag: 'x' in -x"),
    (["--config"], "flag needs an argument: --config"),
    (["--lease-duration=abc"], 'invalid argument "abc" for "--lease-duration" flag: time: invalid duration "abc"'),
    (["--lease-duration=10"], 'invalid argument "10" for "--lease-duration" flag: time: missing unit in duration "10"'),
    (["--leader-elect=maybe"], 'invalid argument "maybe" for "--leader-elect" flag: strconv.ParseBool: '
                               'parsing "maybe": invalid syntax'),
    (["-v=high"], 'invalid argument "high" for "-v, --v" flag: strconv.ParseInt: parsing "high": invalid syntax'),
    # values are quoted as pflag's %q does: a newline or a control character cannot break the line
    (["-v=1\n2"], 'invalid argument "1\\n2" for "-v, --v" flag: strconv.ParseInt: parsing "1\\n2": invalid syntax'),
    (["--lease-duration=\x1b[2J"],
     'invalid argument "\\x1b[2J" for "--lease-duration" flag: time: invalid duration "\\x1b[2J"'),
])
def test_bad_flags_name_flag_and_value(args: list[str], message: str) -> None:
    _, fss = make()
    with pytest.raises(FlagError) as err:
        fss.parse(args)
    assert str(err.value) == message


def test_help_sections_types_defaults_sorted() -> None:
    _, fss = make()
    text = fss.help_sections()
    assert text.splitlines() == [
        "Misc flags:",
        "",
        "      --config string             The path to the configuration file.",
        "      --kube-api-qps float        QPS. (default 50)",
        "      --leader-elect              Start a leader election client. (default true)",
        "      --lease-duration duration   The lease duration. (default 15s)",
        "      --names strings             Some names.",
        "",
        "Logs flags:",
        "",
        "  -v, --v Level   number for the log level verbosity",
    ]


def test_deprecated_hidden_and_both() -> None:
    t, fss = make()
    fs = fss.flag_set("Misc flags")
    fs.mark_deprecated("names", "use --config instead.", hidden=False)   # kube-scheduler's section style
    fs.mark_deprecated("kube-api-qps", "no longer used.")                 # pflag's MarkDeprecated: hidden
    fs.mark_hidden("config")                                              # hidden only
    help_text = fss.help_sections()
    assert "--names strings             DEPRECATED: Some names." in help_text
    assert "kube-api-qps" not in help_text and "--config" not in help_text
    warnings = io.StringIO()
    fss.parse(["--names=a", "--kube-api-qps=1", "--config=c"], warn=warnings)
    assert warnings.getvalue().splitlines() == [
        "Flag --names has been deprecated, use --config instead.",
        "Flag --kube-api-qps has been deprecated, no longer used.",
    ]
    assert (t.names, t.qps, t.config) == (["a"], 1.0, "c")


def test_redefining_a_flag_is_an_error() -> None:
    t, fss = make()
    with pytest.raises(ValueError, match="flag redefined: config"):
        fss.flag_set("Other").string("config", t, "config", "again")
