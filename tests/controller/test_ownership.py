"""Owner references and finalizers on plain dicts, as controller-runtime's controllerutil sets them."""

from __future__ import annotations

from typing import Any

import pytest

from componentbase.controller import (
    AlreadyOwnedError,
    OwnerReferenceError,
    add_finalizer,
    get_controller_of,
    has_controller_reference,
    has_finalizer,
    has_owner_reference,
    is_being_deleted,
    is_controlled_by,
    remove_controller_reference,
    remove_finalizer,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)

pytestmark = pytest.mark.unit


def _obj(kind: str, name: str, namespace: str = "default", api_version: str = "v1",
         uid: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if uid:
        meta["uid"] = uid
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def _website(name: str = "site", uid: str = "uid-1", namespace: str = "default") -> dict[str, Any]:
    return _obj("Website", name, namespace, "demo.example.com/v1", uid)


def test_the_controller_reference_is_controllerutils() -> None:
    child = _obj("ConfigMap", "site-html")
    set_controller_reference(_website(), child)
    assert child["metadata"]["ownerReferences"] == [
        {"apiVersion": "demo.example.com/v1", "kind": "Website", "name": "site", "uid": "uid-1",
         "controller": True, "blockOwnerDeletion": True}]
    assert has_controller_reference(child) and has_owner_reference(child, _website())
    assert is_controlled_by(child, _website()) and not is_controlled_by(child, _website(uid="uid-2"))
    # Setting it again, even from another version of the owner's API, replaces the reference.
    set_controller_reference(_obj("Website", "site", "default", "demo.example.com/v2", "uid-1"), child)
    assert [r["apiVersion"] for r in child["metadata"]["ownerReferences"]] == ["demo.example.com/v2"]


def test_a_second_controller_is_refused_with_controller_runtimes_error() -> None:
    child = _obj("ConfigMap", "site-html")
    set_controller_reference(_website(), child)
    with pytest.raises(AlreadyOwnedError) as err:
        set_controller_reference(_website("other", "uid-9"), child)
    assert str(err.value) == "Object default/site-html is already owned by another Website controller site"
    assert err.value.owner == get_controller_of(child)
    assert len(child["metadata"]["ownerReferences"]) == 1, "nothing changed"
    set_owner_reference(_website("other", "uid-9"), child)  # another owner that does not control it is fine
    assert [r.get("controller", False) for r in child["metadata"]["ownerReferences"]] == [True, False]


def test_namespaces_are_checked_as_controller_runtime_checks_them() -> None:
    with pytest.raises(OwnerReferenceError) as err:
        set_controller_reference(_website(), _obj("ConfigMap", "x", namespace="prod"))
    assert str(err.value) == ("cross-namespace owner references are disallowed, owner's namespace default, "
                              "obj's namespace prod")
    with pytest.raises(OwnerReferenceError) as err:
        set_owner_reference(_website(), _obj("ClusterRole", "x", namespace=""))
    assert str(err.value) == ("cluster-scoped resource must not have a namespace-scoped owner, "
                              "owner's namespace default")
    # A cluster-scoped owner may own objects anywhere.
    child = _obj("ConfigMap", "x", namespace="prod")
    set_controller_reference(_obj("Namespace", "prod", namespace="", uid="ns-uid"), child)
    assert get_controller_of(child) == {"apiVersion": "v1", "kind": "Namespace", "name": "prod",
                                        "uid": "ns-uid", "controller": True, "blockOwnerDeletion": True}


def test_an_owner_never_created_is_refused_naming_the_field() -> None:
    with pytest.raises(OwnerReferenceError, match=r"^the owner has no metadata\.uid: "):
        set_controller_reference(_website(uid=""), _obj("ConfigMap", "x"))


def test_owner_references_are_removed_by_group_kind_and_name() -> None:
    child = _obj("ConfigMap", "x")
    set_owner_reference(_website("a", "u-a"), child, block_owner_deletion=True)
    set_controller_reference(_website("b", "u-b"), child)
    remove_owner_reference(_website("a", "whatever-uid"), child)
    assert [r["name"] for r in child["metadata"]["ownerReferences"]] == ["b"]
    assert not has_owner_reference(child, _website("a"))
    with pytest.raises(OwnerReferenceError, match=r"^ConfigMap default/x has no owner reference to Website default/a$"):
        remove_owner_reference(_website("a"), child)
    remove_controller_reference(_website("b"), child)
    assert child["metadata"]["ownerReferences"] == [] and not has_controller_reference(child)
    with pytest.raises(OwnerReferenceError, match=r"^ConfigMap default/x has no controller reference$"):
        remove_controller_reference(_website("b"), child)


def test_finalizers_are_added_once_and_removed_reporting_a_change() -> None:
    obj = _obj("ConfigMap", "x")
    assert add_finalizer(obj, "demo.example.com/cleanup") is True
    assert add_finalizer(obj, "demo.example.com/cleanup") is False
    assert add_finalizer(obj, "other/f") is True
    assert obj["metadata"]["finalizers"] == ["demo.example.com/cleanup", "other/f"]
    assert has_finalizer(obj, "other/f") and not has_finalizer(obj, "other")
    assert remove_finalizer(obj, "demo.example.com/cleanup") is True
    assert remove_finalizer(obj, "demo.example.com/cleanup") is False
    assert remove_finalizer(obj, "other/f") is True
    assert obj["metadata"]["finalizers"] == [], "an empty list, so a merge patch of it clears the server's"
    assert not is_being_deleted(obj)
    obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert is_being_deleted(obj)
