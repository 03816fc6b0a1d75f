"""CRD conversion webhooks: ``spec.conversion.strategy: Webhook``, as apiextensions-apiserver's
webhook_converter.go calls and checks them.

A CRD's objects are stored in its storage version; a request in another version is converted through
a ConversionReview (v1, or v1beta1 when that is all ``conversionReviewVersions`` names) on the way in
(create, update, patch) and out (get, list, watch: each stored object version is converted once per
served version and the result kept with it, ``_convert.view``). The answer is checked as kube checks it
(uid, kind, count, apiVersion, kind, name, namespace and uid unchanged) and the metadata restored from
the original but for labels and annotations; a failure is kube's 500 ``conversion webhook for
GROUP/VERSION, Kind=KIND failed: ...``. A conversion webhook is called with the store's lock held, so it
should not call this server back (conversion webhooks are pure functions; controller-runtime's are).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..apimachinery.errors import ApiError
from ..apimachinery.resources import Converter
from ..storage._convert import ApiVersionConverter
from ._webhookclient import CallError, WebhookClient

__all__ = ["WebhookConverter", "converter_for"]

_V1 = "apiextensions.k8s.io/v1"
_TIMEOUT = 30.0  # kube gives a conversion no timeout of its own; a hung webhook must not hang the server
Obj = dict[str, Any]


def converter_for(crd: Obj, version: str, client: WebhookClient) -> Converter:
    """The converter of one served version of ``crd``: its webhook, or apiVersion-only (``None``)."""
    spec = crd.get("spec") or {}
    group = spec["group"]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return ApiVersionConverter(f"{group}/{version}", f"{group}/{storage}")
    return WebhookConverter(client, conversion.get("webhook") or {}, f"{group}/{version}", f"{group}/{storage}")


def _failed(message: str) -> ApiError:
    """A plain error as kube-apiserver answers it: 500, no reason."""
    return ApiError(500, "", message)


class WebhookConverter:
    """Converts between one served version and the storage version through the CRD's webhook."""

    def __init__(self, client: WebhookClient, webhook: Obj, api_version: str, storage_version: str) -> None:
        self.client = client
        self.webhook = webhook
        self.api_version = api_version
        self.storage_version = storage_version

    def to_storage(self, obj: Obj) -> Obj:
        return obj if obj.get("apiVersion") == self.storage_version else self.convert(obj, self.storage_version)

    def from_storage(self, obj: Obj) -> Obj | None:
        return None if obj.get("apiVersion") == self.api_version else self.convert(obj, self.api_version)

    def convert(self, obj: Obj, desired: str) -> Obj:
        """``obj`` in ``desired`` (group/version), or ApiError worded as webhook_converter.go's errors."""
        gvk = f"{obj.get('apiVersion')}, Kind={obj.get('kind')}"
        versions = [v for v in self.webhook.get("conversionReviewVersions") or () if v in ("v1", "v1beta1")]
        if not versions:
            raise _failed("no supported conversion review versions")
        uid = str(uuid.uuid4())
        api_version = _V1 if versions[0] == "v1" else "apiextensions.k8s.io/v1beta1"
        review = {"kind": "ConversionReview", "apiVersion": api_version,
                  "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [obj]}}
        try:
            answer = self.client.post(self.webhook.get("clientConfig"), review, None)
            objects = _converted(uid, answer, api_version == _V1)
        except CallError as err:
            raise _failed(f"conversion webhook for {gvk} failed: {err}") from None
        if len(objects) != 1:
            raise _failed(f"conversion webhook for {gvk} returned {len(objects)} objects, expected 1")
        out = objects[0]
        if not isinstance(out, dict):
            raise _failed(f"conversion webhook for {gvk} failed: json: cannot unmarshal into Go value of type "
                          "map[string]interface {}")
        prefix = f"conversion webhook for {gvk} returned invalid object"
        if out.get("apiVersion") != desired:
            raise _failed(f"{prefix} at index 0: invalid groupVersion (expected {desired}, received "
                          f"{out.get('apiVersion') or ''})")
        if out.get("kind") != obj.get("kind"):
            raise _failed(f"{prefix} at index 0: invalid kind (expected {obj.get('kind')}, received "
                          f"{out.get('kind') or ''})")
        meta: Obj = obj.get("metadata") or {}
        new_meta = out.get("metadata")
        got: Obj = new_meta if isinstance(new_meta, dict) else {}
        for key, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
            if (meta.get(key) or "") != (got.get(key) or ""):
                raise _failed(f"{prefix}: must have the same {label}: {meta.get(key) or ''} != {got.get(key) or ''}")
        return dict(out, metadata=_restore(gvk, meta, new_meta))


def _converted(uid: str, answer: Obj, v1: bool) -> list[Any]:
    """getConvertedObjectsFromResponse: the converted objects, or CallError with kube's reason."""
    if v1 and (answer.get("apiVersion"), answer.get("kind")) != (_V1, "ConversionReview"):
        got = f"{answer.get('apiVersion') or '/'}, Kind={answer.get('kind') or ''}"
        raise CallError(f"expected webhook response of {_V1}, Kind=ConversionReview, got "
                        f"{got if '/' in got.split(',')[0] else '/' + got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise CallError("no response provided")
    if v1 and response.get("uid") != uid:
        raise CallError(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    result: Obj = response["result"] if isinstance(response.get("result"), dict) else {}
    if result.get("status") != "Success":
        raise CallError(str(result.get("message") or
                            f"response.result.status was '{result.get('status') or ''}', not 'Success'"))
    objects = response.get("convertedObjects")
    return objects if isinstance(objects, list) else []


def _restore(gvk: str, original: Obj, converted: Any) -> Obj:
    """restoreObjectMeta: the original metadata, with the converted object's labels and annotations."""
    where = f"conversion webhook for {gvk} returned invalid metadata"
    if not isinstance(converted, dict):
        raise _failed(f"{where}: missing metadata in converted object" if converted is None else
                      f"{where}: invalid metadata of type {type(converted).__name__} in converted object")
    meta = dict(original)
    for key in ("labels", "annotations"):
        value = converted.get(key)
        if value is None:
            meta.pop(key, None)
            continue
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _failed(f"{where}: metadata.{key} must be a map of strings in converted object")
        meta[key] = value
    return meta
