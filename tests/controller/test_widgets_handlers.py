"""componentbase_examples/widgets' webhook handlers on their own: what each does to a request, in kube's
AdmissionRequest terms (the loopback server calls them in tests/controller/test_widgets.py)."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase.webhook import AdmissionRequest, Denied
from componentbase_examples.widgets.__main__ import check_owner, default_owner, v1_to_v2, v2_to_v1

pytestmark = pytest.mark.unit


def _request(operation: str, spec: dict[str, Any], old: dict[str, Any] | None, user: str) -> AdmissionRequest:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}
    return AdmissionRequest(uid="u", operation=operation, kind={"group": "example.com", "version": "v1",
                                                                "kind": "Widget"},
                            resource={}, name="w", namespace="default", object=obj,
                            old_object=None if old is None else dict(obj, spec=old), user_info={"username": user},
                            dry_run=False)


def test_the_owner_defaults_to_the_creator_and_an_update_without_it_keeps_the_old_one() -> None:
    created = _request("CREATE", {"replicas": 1}, None, "alice")
    default_owner(created)
    assert created.object is not None and created.object["spec"]["owner"] == "alice"
    replaced = _request("UPDATE", {"replicas": 2}, {"replicas": 1, "owner": "alice"}, "bob")
    default_owner(replaced)
    check_owner(replaced)  # bob's replace leaves the owner alone: allowed
    assert replaced.object is not None and replaced.object["spec"]["owner"] == "alice"


def test_a_changed_or_empty_owner_is_denied() -> None:
    with pytest.raises(Denied, match=r"spec\.owner cannot change \(it is 'alice'\)"):
        check_owner(_request("UPDATE", {"owner": "bob"}, {"owner": "alice"}, "bob"))
    with pytest.raises(Denied, match=r"spec\.owner must name someone"):
        check_owner(_request("CREATE", {"owner": ""}, None, ""))


def test_v2_calls_replicas_size_each_way() -> None:
    widget = {"apiVersion": "example.com/v1", "spec": {"replicas": 3, "color": "red"}}
    v1_to_v2(widget)
    assert widget["spec"] == {"size": 3, "color": "red"}
    v2_to_v1(widget)
    assert widget["spec"] == {"replicas": 3, "color": "red"}
    empty: dict[str, Any] = {"apiVersion": "example.com/v2"}
    v2_to_v1(empty)  # no spec: nothing to rename, the schema refuses it afterwards
    assert empty == {"apiVersion": "example.com/v2"}
