"""``deepcopy_json``: a deep copy of decoded JSON, as ``copy.deepcopy`` makes it, without its cost."""

from __future__ import annotations

import datetime
import json

import pytest

from componentbase.util import deepcopy_json

pytestmark = pytest.mark.unit

POD = json.loads('{"metadata": {"name": "p", "labels": {"a": "b"}, "managedFields": [{"fieldsV1": {"f:spec": {}}}]},'
                 ' "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}], "priority": 0,'
                 ' "enableServiceLinks": true, "overhead": null, "weight": 1.5}}')


def test_the_copy_is_equal_and_shares_no_dict_or_list_with_the_original() -> None:
    copied = deepcopy_json(POD)
    assert copied == POD
    copied["metadata"]["labels"]["a"] = "changed"
    copied["spec"]["containers"][0]["ports"].append({"containerPort": 81})
    copied["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:x"] = {}
    assert POD["metadata"]["labels"] == {"a": "b"}
    assert POD["spec"]["containers"][0]["ports"] == [{"containerPort": 80}]
    assert POD["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"] == {}


def test_scalars_and_lists_at_the_top_are_copied_too() -> None:
    assert deepcopy_json("s") == "s" and deepcopy_json(None) is None and deepcopy_json(True) is True
    top = [{"a": [1]}, 2]
    copied = deepcopy_json(top)
    copied[0]["a"].append(3)
    assert top == [{"a": [1]}, 2]


def test_what_json_does_not_make_is_deep_copied_as_copy_deepcopy_would() -> None:
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    nested = {"t": ([1], when), "s": {1, 2}}
    copied = deepcopy_json(nested)
    assert copied == nested
    copied["t"][0].append(2)
    copied["s"].add(3)
    assert nested == {"t": ([1], when), "s": {1, 2}}
