"""The pieces of kube's printers that tables are made of: ages, selectors, CRD column JSONPaths."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase.testing.apiserver.kinds._cells import human_duration, label_selector, since
from componentbase.testing.apiserver.kinds._tables import json_path, negotiate

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("seconds", "shown"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (125, "2m5s"), (600, "10m"),
    (179 * 60, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (8 * 3600, "8h"), (47 * 3600, "47h"),
    (49 * 3600, "2d1h"), (48 * 3600, "2d"), (8 * 86400, "8d"), (2 * 365 * 86400, "2y"),
    (2 * 365 * 86400 + 86400, "2y1d"), (9 * 365 * 86400, "9y"),
])
def test_human_duration_as_apimachinery(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown


def test_since_reads_rfc3339() -> None:
    assert since("2024-01-01T00:00:00Z", 1704067200 + 42) == "42s"
    assert since(None, 0) == "<unknown>" and since("junk", 0, "<none>") == "<none>"


def test_label_selector_string() -> None:
    selector = {"matchLabels": {"b": "2", "a": "1"},
                "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                     {"key": "d", "operator": "DoesNotExist"}, {"key": "ab", "operator": "Exists"}]}
    assert label_selector(selector) == "a=1,ab,b=2,c in (x,y),!d"
    assert label_selector(None) == "<none>" and label_selector({}) == "<none>"


_OBJ: dict[str, Any] = {"spec": {"n": 3, "list": [1, 2]},
                        "status": {"conditions": [{"type": "A", "status": "False"},
                                                  {"type": "Ready", "status": "True"}]}}


@pytest.mark.parametrize(("path", "found"), [
    (".spec.n", [3]), ("{.spec.n}", [3]), (".spec.list[1]", [2]), (".spec.list[-1]", [2]), (".spec.list[*]", [1, 2]),
    ('.status.conditions[?(@.type=="Ready")].status', ["True"]), (".spec.missing", []), (".spec.list[5]", []),
    ("spec", []),
])
def test_json_path(path: str, found: list[Any]) -> None:
    assert json_path(_OBJ, path) == found


def test_negotiate_takes_the_first_acceptable() -> None:
    kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io"
    assert (negotiate(kubectl).as_, negotiate(kubectl).version) == ("Table", "v1")
    assert negotiate("application/vnd.kubernetes.protobuf,application/json").as_ == ""
    partial = negotiate("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1")
    assert (partial.as_, partial.version) == ("PartialObjectMetadata", "v1beta1")
    assert negotiate("application/json;as=Nope,application/json").as_ == ""
