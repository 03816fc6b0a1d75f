"""``PodController``: the pods bound to this node, kept in step with the provider (upstream ``node.PodController``).

A ``componentbase.controller.Controller`` reconciling pods by ``namespace/name`` with ``--pod-sync-workers``
workers; each reconcile reads the latest pod from the pod informer's cache and makes both sides agree:

- the API to the provider: create, update or delete the pod in the provider; a pod being deleted that no
  longer runs is deleted from the API with grace 0 (UID precondition);
- the provider to the API: the status the provider reported last is written to the pod's ``/status`` if
  it differs.

Keys come from the pod informer (changes the provider must hear about), from the provider's
``notify_pods`` callback, and, at each start, from the provider's own pods (those the API no longer has
are deleted from the provider; those it still has are adopted as they are: a restarted virtual kubelet
runs nothing twice). A failing provider call is retried with the key's exponential backoff, recorded as an
Event (``ProviderCreateFailed``...) and shown on the pod (reason ``ProviderFailed``). ``poll`` is the
runnable that asks providers without ``notify_pods`` for statuses, and finds pods such a provider lost;
a provider with ``notify_pods`` is never polled.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import componentbase
from componentbase.client import format_time, parse_time
from componentbase.controller import Controller, Event, Request
from componentbase.tracing import span
from componentbase.util import deepcopy_json
from componentbase_examples.virtual_kubelet import kubeapi, podcompare
from componentbase_examples.virtual_kubelet.provider import Provider
from componentbase_examples.virtual_kubelet.provider_types import PodNotFound
from componentbase_examples.virtual_kubelet.resources import LookupFailed
from componentbase_examples.virtual_kubelet.timings import Timings

__all__ = ["PodController"]

log = logging.getLogger("componentbase_examples.virtual_kubelet.pods")

Pod = dict[str, Any]

REASON_PROVIDER_FAILED = "ProviderFailed"
REASON_NOT_FOUND = "NotFound"
MESSAGE_NOT_FOUND = "The pod status was not found and may have been deleted from the provider"
_GONE: Pod = {}  # what a reconcile handled when it deleted the pod from the API


def _key(pod: Pod) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _uid(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


def _split(key: str) -> tuple[str, str]:
    namespace, _, name = key.partition("/")
    return namespace, name


def _attributes(pod: Pod) -> dict[str, str | None]:
    """Upstream's ``addPodAttributes``: what a pod's span says of it."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    return {"uid": meta.get("uid"), "namespace": meta.get("namespace"), "name": meta.get("name"),
            "phase": status.get("phase"), "reason": status.get("reason")}


class _Known:
    """What the controller remembers of one pod (upstream's ``knownPod``)."""

    __slots__ = ("last_status", "last_used", "lock", "skipped", "syncing")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_used: Pod | None = None  # the pod last handed to the provider successfully
        self.last_status: Pod | None = None  # the pod (with status) the provider reported last
        self.skipped = False
        self.syncing = False  # a reconcile of it is running: it writes what the provider reports meanwhile


class PodController:
    """``controller`` reconciles the pods; ``poll`` is its status poll; ``ready`` once its workers take work."""

    def __init__(self, api_client: Any, provider: Provider, pods: Any, recorder: Any, *, workers: int,
                 timings: Timings, metrics: Any = None) -> None:
        self.api_client = api_client
        self.provider = provider
        self.pods = pods  # the SharedInformer of pods bound to this node
        self.recorder = recorder
        self.workers = workers
        self.timings = timings
        self.ready = threading.Event()
        self._known: dict[str, _Known] = {}
        self._known_lock = threading.Lock()
        self.controller = Controller("pod", self._reconcile, max_concurrent_reconciles=workers, metrics=metrics)
        self.controller.watch(pods, self._worth_a_reconcile)
        self.controller.watch_source(self._start)

    # --- keys -----------------------------------------------------------------------------------

    def _start(self, enqueue: Callable[[Request], bool]) -> None:
        """At each start: the provider's callback, and its pods the API no longer has (to delete them)."""
        if self.provider.implements("notify_pods"):
            self.provider.notify_pods(self._provider_status)
        try:
            running = self.provider.get_pods()
        except Exception as err:
            log.error("Failed to fetch the list of pods from the provider: %s", err)
            running = []
        for pod in running:
            if self.pods.get(_key(pod)) is None:
                enqueue(Request(*_split(_key(pod))))
        self.ready.set()
        log.info("Pod controller started with %d workers", self.workers)

    def _worth_a_reconcile(self, event: Event) -> bool:
        """Adds and deletes; updates the provider must hear about, or a status someone else changed after
        the provider reported the same one again (which was not written twice)."""
        if event.type != "MODIFIED" or event.old is None:
            return True
        new = event.object
        known = self._known_pod(_key(new))
        if known is not None:
            with known.lock:
                reported = known.last_status
                if known.skipped and reported is not None and new.get("status") != reported.get("status"):
                    known.skipped = False
                    return True
        return podcompare.should_enqueue(event.old, new)

    def _known_pod(self, key: str, create: bool = False) -> _Known | None:
        with self._known_lock:
            known = self._known.get(key)
            if known is None and create:
                known = self._known[key] = _Known()
            return known

    def _provider_status(self, pod: Pod) -> None:
        """The provider's notify callback: remember the pod it reported and reconcile it."""
        key = _key(pod)
        known = self._known_pod(key, create=self.pods.get(key) is not None)
        if known is None:
            return  # not (or no longer) in the API: nothing to write to
        with known.lock:
            if known.last_status == pod:
                known.skipped = True
                return
            known.skipped = False
            known.last_status = pod
            if known.syncing:
                return  # the reconcile in hand writes it before it ends
        self.controller.enqueue(Request(*_split(key)))

    # --- the reconcile --------------------------------------------------------------------------

    def _reconcile(self, req: Request) -> None:
        with span("syncPodFromKubernetesHandler", {"key": req.key}):
            self._reconcile_key(req)

    def _reconcile_key(self, req: Request) -> None:
        key = req.key
        pod = self.pods.get(key)
        if pod is None:
            with self._known_lock:
                self._known.pop(key, None)
            self._forget_in_provider(req.namespace, req.name)
            return
        known = self._known_pod(key, create=True)
        assert known is not None
        with known.lock:
            known.syncing = True
        try:
            handled = self._sync_status(pod, known) if self._sync(pod, known) else _GONE
        finally:
            with known.lock:
                known.syncing = False
                reported = known.last_status
        if handled is not _GONE and reported is not None and reported is not handled:
            self.controller.enqueue(req)  # the provider reported more while this reconcile ran

    def _sync(self, pod: Pod, known: _Known) -> bool:
        """The API's pod into the provider; False once the pod is deleted from the API."""
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") and not podcompare.is_running(pod):
            self._delete_from_api(pod)
            return False
        with known.lock:
            if known.last_used is not None and podcompare.effectively_equal(known.last_used, pod):
                return True
        if meta.get("deletionTimestamp"):
            self._delete_in_provider(pod)
            self._delete_from_api(pod)
            with known.lock:
                known.last_used = pod
            return False
        if podcompare.is_terminal(pod):
            log.debug("Skipping sync of pod %s in phase %s", _key(pod), pod["status"].get("phase"))
            return True
        self._create_or_update(pod)
        with known.lock:
            known.last_used = pod
        return True

    def _forget_in_provider(self, namespace: str, name: str) -> None:
        """The pod is gone from the API: the provider lets it go too, if it still has it."""
        try:
            running = self.provider.get_pod(namespace, name)
            if running is not None:
                self.provider.delete_pod(running)
                log.info("Deleted pod %s/%s from the provider: it is gone from the API", namespace, name)
        except PodNotFound:
            pass

    def _create_or_update(self, pod: Pod) -> None:
        with span("createOrUpdatePod", _attributes(pod)):
            self._create_or_update_in_provider(pod)

    def _create_or_update_in_provider(self, pod: Pod) -> None:
        key = _key(pod)
        try:
            current = self.provider.get_pod(*_split(key))
        except PodNotFound:
            current = None
        if current is not None and _uid(current) and _uid(current) != _uid(pod):
            # The provider's pod is an earlier one of the same name (deleted and made again while this node
            # was down): it goes, and the new one is created.
            self._delete_in_provider(current)
            current = None
        if current is None:
            try:
                self.provider.create_pod(deepcopy_json(pod))
            except Exception as err:
                self._provider_failed(pod, err, "ProviderCreateFailed")
                raise
            log.info("Created pod %s in provider", key)
            self._event(pod, "Normal", "ProviderCreateSuccess", "Create pod in provider successfully")
        elif not podcompare.pods_equal(current, pod):
            try:
                self.provider.update_pod(deepcopy_json(pod))
            except Exception as err:
                self._provider_failed(pod, err, "ProviderUpdateFailed")
                raise
            log.info("Updated pod %s in provider", key)
            self._event(pod, "Normal", "ProviderUpdateSuccess", "Update pod in provider successfully")

    def _delete_in_provider(self, pod: Pod) -> None:
        try:
            with span("deletePod", _attributes(pod)):
                self.provider.delete_pod(deepcopy_json(pod))
        except PodNotFound:
            log.debug("Pod %s not found in provider", _key(pod))
            return
        except Exception as err:
            self._event(pod, "Warning", "ProviderDeleteFailed", str(err))
            raise
        self._event(pod, "Normal", "ProviderDeleteSuccess", "Delete pod in provider successfully")

    def _provider_failed(self, pod: Pod, err: Exception, event_reason: str) -> None:
        """Upstream's ``handleProviderError``: say it on the pod (Pending, or Failed under Never) and in an Event.

        A ConfigMap or Secret the API server could not be asked about is only an Event: the retry may
        well succeed, and the kubelet keeps such a pod waiting too (CreateContainerConfigError).
        """
        message = f"{type(err).__name__}: {err}" if not str(err) else str(err)
        self._event(pod, "Warning", event_reason, message)
        if isinstance(err, LookupFailed):
            log.error("Provider failed on pod %s, will retry: %s", _key(pod), message)
            return
        phase = "Failed" if (pod.get("spec") or {}).get("restartPolicy") == "Never" else "Pending"
        status = dict(pod.get("status") or {})
        status.update(phase=phase, reason=REASON_PROVIDER_FAILED, message=message)
        log.error("Provider failed on pod %s: %s", _key(pod), message)
        self._write_status(pod, status)

    def _event(self, pod: Pod, type_: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.event(pod, type_, reason, message)

    # --- provider is done -> API; provider's status -> API ---------------------------------------

    def _delete_from_api(self, pod: Pod) -> None:
        meta = pod.get("metadata") or {}
        if podcompare.is_running(pod):
            log.debug("Force deleting pod %s in running state", _key(pod))
        try:
            kubeapi.call(self.api_client, "DELETE", "/api/v1/namespaces/{namespace}/pods/{name}",
                         namespace=meta.get("namespace", ""), name=meta.get("name", ""),
                         body={"gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid")}},
                         timeout=self.timings.request_timeout)
        except Exception as err:
            if kubeapi.is_not_found(err) or kubeapi.is_conflict(err):
                return
            raise

    def _sync_status(self, pod: Pod, known: _Known) -> Pod | None:
        """Write the status the provider reported last, if the pod's differs; that report (None: none yet)."""
        with known.lock:
            reported = known.last_status
        if reported is None or podcompare.is_terminal(pod):
            return reported
        status = podcompare.merged_status(reported.get("status") or {}, pod.get("status") or {})
        if status != (pod.get("status") or {}):
            self._write_status(pod, status)
        return reported

    def _write_status(self, pod: Pod, status: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        try:
            # read(): a response left unread keeps its connection, so every write would open a new one.
            # Status patches are dicts we build: no pydantic validation of them per pod.
            with span("updatePodStatus", {**_attributes(pod), "phase": status.get("phase")}):
                componentbase.client.request(
                    self.api_client, "PATCH", "/api/v1/namespaces/{namespace}/pods/{name}/status",
                    path_params={"namespace": meta.get("namespace", ""), "name": meta.get("name", "")},
                    body=podcompare.status_patch(pod, status), content_type="application/merge-patch+json",
                    timeout=self.timings.request_timeout).read()
        except Exception as err:
            if kubeapi.is_not_found(err):
                return
            raise

    # --- polling: providers without notify, and pods the provider lost -------------------------

    def poll(self, stop: threading.Event) -> None:
        """Until ``stop``, for a provider without ``notify_pods`` (upstream's ``syncProviderWrapper``): every
        pod's status every ``status_poll_interval``, reported as if the provider had, and pods it lost failed.

        A provider that notifies is never polled, as upstream: it reports every change, lost pods included.
        """
        if self.provider.implements("notify_pods") or self.timings.status_poll_interval <= 0:
            return
        while not stop.wait(self.timings.status_poll_interval):
            with span("syncProviderWrapper.syncPodStatuses"):
                self._poll_once(stop)

    def _poll_once(self, stop: threading.Event) -> None:
        for pod in self.pods.list():
            if stop.is_set():
                return
            if podcompare.is_terminal(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            try:
                self._check_status(pod)
            except Exception as err:
                log.error("Could not fetch pod status of %s: %s", _key(pod), err)

    def _check_status(self, pod: Pod) -> None:
        namespace, name = _split(_key(pod))
        try:
            status = self.provider.get_pod_status(namespace, name)
        except PodNotFound:
            status = None
        if status is not None:
            self._provider_status({**pod, "status": status})
            return
        known = self._known_pod(_key(pod))
        if known is None or known.last_used is None:
            return  # not handed to the provider yet: nothing is lost
        try:
            created: float | None = parse_time(str((pod.get("metadata") or {}).get("creationTimestamp"))).timestamp()
        except ValueError:
            created = None
        young = created is not None and time.time() - created <= self.timings.lost_pod_grace
        if (pod.get("status") or {}).get("phase") != "Running" and young:
            return
        self._provider_status({**pod, "status": _lost_status(pod.get("status") or {})})


def _lost_status(status: dict[str, Any]) -> dict[str, Any]:
    """Failed, with each running container terminated as not found (upstream's wording and exit code)."""
    lost = deepcopy_json(status)
    lost.update(phase="Failed", reason=REASON_NOT_FOUND, message=MESSAGE_NOT_FOUND)
    stamp = format_time()
    for cs in lost.get("containerStatuses") or ():
        running = (cs.get("state") or {}).get("running")
        if running is None:
            continue
        cs["ready"] = False
        cs["state"] = {"terminated": {"exitCode": -137, "reason": REASON_NOT_FOUND,
                                      "message": "Container was not found and was likely deleted",
                                      "startedAt": running.get("startedAt"), "finishedAt": stamp,
                                      **({"containerID": cs["containerID"]} if cs.get("containerID") else {})}}
    return lost
