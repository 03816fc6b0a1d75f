"""componentbase.tracing: flags checked without importing OpenTelemetry, spans a no-op until tracing starts."""

from __future__ import annotations

import json
import sys

import pytest

from componentbase import tracing
from componentbase.cli import NamedFlagSets

pytestmark = pytest.mark.unit


def test_span_is_a_no_op_without_tracing() -> None:
    assert not tracing.enabled()
    with tracing.span("work", {"key": "a", "absent": None}) as s:
        s.set_attribute("more", 1)
        assert not s.is_recording()
    with pytest.raises(KeyError), tracing.span("failing"):
        raise KeyError("the block's exception goes through")


@pytest.mark.parametrize(("text", "rate"), [("", None), ("always", None), ("Never", 0.0), ("0", 0.0),
                                            ("25", 0.25), ("100", 1.0)])
def test_sample_rate_is_virtual_kubelets_percentage(text: str, rate: float | None) -> None:
    assert tracing.parse_sample_rate(text) == rate


def test_bad_settings_are_one_line_each_naming_the_flag() -> None:
    errs = [str(e) for e in tracing.validate_tracing(["jaeger"], "half")]
    assert errs == ['trace-exporter: Unsupported value: "jaeger": supported values: "console", "otlp"',
                    'trace-sample-rate: Invalid value: "half": unsupported trace sample rate: use a percentage from '
                    "0 to 100, always or never"]
    assert [str(e) for e in tracing.validate_tracing([], "101")] == [
        'trace-sample-rate: Invalid value: "101": trace sample rate must be between 0 and 100']


def test_a_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    assert [str(e) for e in tracing.validate_tracing(["otlp"], "")] == [
        'trace-exporter: Invalid value: "otlp": needs the OpenTelemetry packages: pip install '
        "'componentbase[tracing]'"]


def test_options_declare_the_flags_and_validate_them() -> None:
    opts = tracing.TracingOptions()
    fss = NamedFlagSets()
    opts.add_flags(fss)
    fss.parse(["--trace-exporter=console,otlp", "--trace-sample-rate=50"])
    assert opts.trace_exporters == ["console", "otlp"] and opts.validate() == []
    assert "available exporters: [console otlp]" in fss.lookup("trace-exporter").usage  # type: ignore[union-attr]


def test_console_exporter_prints_spans_with_parent_and_attributes(capsys: pytest.CaptureFixture[str]) -> None:
    started = tracing.start_tracing(["console"], "", service_name="test-component", attributes={"nodeName": "n"})
    assert started is not None
    try:
        assert tracing.enabled()
        with tracing.span("outer", {"key": "a"}), tracing.span("inner") as inner:
            assert inner.is_recording()
    finally:
        started.shutdown()  # flushes the batch
    assert not tracing.enabled()
    out = capsys.readouterr().out
    spans = {s["name"]: s for s in json.loads("[" + out.replace("}\n{", "},{") + "]")}
    assert spans["inner"]["parent_id"] == spans["outer"]["context"]["span_id"]
    assert spans["outer"]["attributes"] == {"key": "a"}
    assert spans["outer"]["resource"]["attributes"]["service.name"] == "test-component"
    assert spans["outer"]["resource"]["attributes"]["nodeName"] == "n"


def test_a_sampled_caller_is_followed_at_rate_zero(capsys: pytest.CaptureFixture[str]) -> None:
    started = tracing.start_tracing(["console"], "0", service_name="c")
    assert started is not None
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    try:
        with tracing.span("new trace") as alone:
            assert not alone.is_recording()
        with tracing.span("GET /pods", headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}) as joined:
            assert joined.is_recording()
    finally:
        started.shutdown()
    out = capsys.readouterr().out
    assert "new trace" not in out
    assert json.loads(out)["context"]["trace_id"] == "0x" + trace_id
