"""Kubernetes timestamps: written exactly as apimachinery writes them, read as it reads them."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from kubernetes import client

from componentbase.client import format_micro_time, format_time, parse_micro_time, parse_time

UTC = dt.UTC
NOON = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.unit
def test_time_has_whole_seconds_and_micro_time_six_digits() -> None:
    assert format_time(NOON) == "2026-05-01T12:00:00Z"
    assert format_time(NOON.replace(microsecond=999_999)) == "2026-05-01T12:00:00Z"  # cut, as Go does
    assert format_micro_time(NOON) == "2026-05-01T12:00:00.000000Z"
    assert format_micro_time(NOON.replace(microsecond=1200)) == "2026-05-01T12:00:00.001200Z"
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert format_micro_time(dt.datetime(2026, 5, 1, 14, 0, 0, tzinfo=plus2)) == "2026-05-01T12:00:00.000000Z"
    assert format_time(dt.datetime(2026, 5, 1, 12)) == "2026-05-01T12:00:00Z"  # naive means UTC
    assert format_time(NOON.timestamp() + 0.5, digits=9) == "2026-05-01T12:00:00.500000000Z"  # CRI logs


@pytest.mark.unit
def test_now_is_the_default() -> None:
    before = dt.datetime.now(UTC).replace(microsecond=0)
    stamp = parse_time(format_time())
    assert before <= stamp <= dt.datetime.now(UTC)


@pytest.mark.unit
@pytest.mark.parametrize("text", ["2026-05-01T12:00:00.000000Z", "2026-05-01T12:00:00Z",
                                  "2026-05-01T14:00:00+02:00", "2026-05-01T12:00:00.000000+00:00",
                                  "2026-05-01T07:30:00.000000000-04:30"])
def test_any_rfc3339_time_is_read(text: str) -> None:
    assert parse_time(text) == NOON
    assert parse_micro_time(text) == NOON


@pytest.mark.unit
def test_fractions_of_any_length_keep_microseconds() -> None:
    assert parse_time("2026-05-01T12:00:00.123456789Z") == NOON.replace(microsecond=123456)
    assert parse_time("2026-05-01T12:00:00.5Z") == NOON.replace(microsecond=500000)


@pytest.mark.unit
@pytest.mark.parametrize("text", ["", "2026-05-01", "2026-05-01T12:00:00", "2026-05-01 12:00:00Z",
                                  "2026-13-01T12:00:00Z", "yesterday"])
def test_what_is_not_rfc3339_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=f'parsing time "{text}"'):
        parse_time(text)


@pytest.mark.unit
@pytest.mark.parametrize("t", [NOON, NOON.replace(microsecond=7), dt.datetime(1999, 12, 31, 23, 59, 59, 999999,
                                                                              tzinfo=UTC)])
def test_round_trips(t: dt.datetime) -> None:
    assert parse_micro_time(format_micro_time(t)) == t
    assert parse_time(format_time(t)) == t.replace(microsecond=0)
    assert format_micro_time(parse_micro_time(format_micro_time(t))) == format_micro_time(t)


@pytest.mark.integration
def test_we_write_times_as_the_api_server_does(kube_client: client.ApiClient) -> None:
    v1 = client.CoreV1Api(kube_client)
    v1.create_namespaced_config_map("default", {"metadata": {"name": "stamp"}})
    raw = json.loads(v1.read_namespaced_config_map("stamp", "default", _preload_content=False).data)
    written = raw["metadata"]["creationTimestamp"]
    assert format_time(parse_time(written)) == written
