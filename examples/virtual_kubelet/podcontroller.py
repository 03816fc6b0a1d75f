"""``PodController``: the pods bound to this node, kept in step with the provider (upstream ``node.PodController``).

Three rate-limited work queues, each drained by ``--pod-sync-workers`` workers, carry ``namespace/name``
keys (never objects: a worker reads the latest pod from the informer's cache):

- *sync*: the pod changed in the API; create, update or delete it in the provider;
- *status*: the provider reported a status; write it to the pod's ``/status`` if it differs;
- *delete*: the provider let the pod go; delete it from the API with grace 0 (UID precondition).

A failing provider call is retried with per-pod exponential backoff, recorded as an Event
(``ProviderCreateFailed``...) and shown on the pod (reason ``ProviderFailed``). At start, pods the
provider runs but the API no longer has are deleted from the provider, and pods it runs that the API
still has are adopted as they are: a restarted virtual kubelet runs nothing twice.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from typing import Any

import componentbase
from componentbase.client import format_time, parse_time
from examples.virtual_kubelet import kubeapi, podcompare
from examples.virtual_kubelet.provider import Provider
from examples.virtual_kubelet.provider_types import PodNotFound
from examples.virtual_kubelet.resources import LookupFailed
from examples.virtual_kubelet.timings import Timings

__all__ = ["PodController"]

log = logging.getLogger("examples.virtual_kubelet.pods")

Pod = dict[str, Any]

REASON_PROVIDER_FAILED = "ProviderFailed"
REASON_NOT_FOUND = "NotFound"
MESSAGE_NOT_FOUND = "The pod status was not found and may have been deleted from the provider"


def _key(pod: Pod) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _split(key: str) -> tuple[str, str]:
    namespace, _, name = key.partition("/")
    return namespace, name


class _Known:
    """What the controller remembers of one pod (upstream's ``knownPod``)."""

    __slots__ = ("last_status", "last_used", "lock", "skipped")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_used: Pod | None = None  # the pod last handed to the provider successfully
        self.last_status: Pod | None = None  # the pod (with status) the provider reported last
        self.skipped = False


class PodController:
    """Runs until ``stop``; ``ready`` once its workers take work."""

    def __init__(self, api_client: Any, provider: Provider, pods: Any, recorder: Any, *, workers: int,
                 timings: Timings, resync_period: float) -> None:
        from kubernetes.client import CoreV1Api

        from componentbase import workqueue

        self.api: Any = CoreV1Api(api_client)
        self.provider = provider
        self.pods = pods  # the SharedInformer of pods bound to this node
        self.recorder = recorder
        self.workers = workers
        self.timings = timings
        self.resync_period = resync_period
        self.ready = threading.Event()
        self._known: dict[str, _Known] = {}
        self._known_lock = threading.Lock()
        self.sync_queue: Any = workqueue.RateLimitingQueue(name="syncPodsFromKubernetes")
        self.status_queue: Any = workqueue.RateLimitingQueue(name="syncPodStatusFromProvider")
        self.delete_queue: Any = workqueue.RateLimitingQueue(name="deletePodsFromKubernetes")

    # --- running --------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        from componentbase import workqueue

        notifies = self.provider.implements("notify_pods")
        if notifies:
            self.provider.notify_pods(self._provider_status)
        self._delete_dangling()
        self.pods.add_event_handler(self._on_add, self._on_update, self._on_delete)
        n = self.workers
        pools = [workqueue.run_workers(self.sync_queue, n, self._sync, name="syncPodsFromKubernetes"),
                 workqueue.run_workers(self.status_queue, n, self._sync_status, name="syncPodStatusFromProvider"),
                 workqueue.run_workers(self.delete_queue, n, self._delete_from_api, name="deletePodsFromKubernetes")]
        poll = self.timings.status_poll_interval if not notifies else self.resync_period
        poller = threading.Thread(target=self._poll, args=(stop, poll, not notifies), name="pod-status-poll",
                                  daemon=True)
        if poll > 0:
            poller.start()
        self.ready.set()
        log.info("Pod controller started with %d workers", n)
        stop.wait()
        for pool in pools:
            pool.stop()  # each worker finishes the pod in hand
        for pool in pools:
            pool.join(self.timings.request_timeout)
        if poller.ident is not None:
            poller.join(self.timings.request_timeout)

    # --- informer handlers ----------------------------------------------------------------------

    def _on_add(self, pod: Pod) -> None:
        key = _key(pod)
        with self._known_lock:
            self._known.setdefault(key, _Known())
        self.sync_queue.add(key)

    def _on_update(self, old: Pod, new: Pod) -> None:
        key = _key(new)
        with self._known_lock:
            known = self._known.setdefault(key, _Known())
        with known.lock:
            reported = known.last_status
            if known.skipped and reported is not None and (new.get("status") != reported.get("status")):
                # Someone else changed the status we chose not to rewrite: write ours again.
                known.skipped = False
                self.status_queue.add(key)
        if podcompare.should_enqueue(old, new):
            self.sync_queue.add(key)

    def _on_delete(self, obj: Any) -> None:
        from componentbase import informers

        key = informers.meta_namespace_key(obj)
        with self._known_lock:
            self._known.pop(key, None)
        self.sync_queue.add(key)

    def _known_pod(self, key: str) -> _Known | None:
        with self._known_lock:
            return self._known.get(key)

    # --- provider -> controller -----------------------------------------------------------------

    def _provider_status(self, pod: Pod) -> None:
        """The provider's notify callback: remember the pod it reported and queue a status write."""
        key = _key(pod)
        known = self._known_pod(key)
        if known is None:
            return  # not (or no longer) in the API: nothing to write to
        with known.lock:
            if known.last_status == pod:
                known.skipped = True
                return
            known.skipped = False
            known.last_status = pod
        self.status_queue.add(key)

    # --- sync: API -> provider ------------------------------------------------------------------

    def _sync(self, key: str) -> None:
        pod = self.pods.get(key)
        namespace, name = _split(key)
        if pod is None:
            self._forget_in_provider(namespace, name)
            return
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") and not podcompare.is_running(pod):
            self.delete_queue.add(f"{key}/{meta.get('uid', '')}")
            return
        known = self._known_pod(key)
        if known is None:
            return
        with known.lock:
            if known.last_used is not None and podcompare.effectively_equal(known.last_used, pod):
                return
        if meta.get("deletionTimestamp"):
            self._delete_in_provider(pod)
            self.delete_queue.add(f"{key}/{meta.get('uid', '')}")
        elif podcompare.is_terminal(pod):
            log.debug("Skipping sync of pod %s in phase %s", key, pod["status"].get("phase"))
            return
        else:
            self._create_or_update(pod)
        with known.lock:
            known.last_used = pod

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
        key = _key(pod)
        try:
            current = self.provider.get_pod(*_split(key))
        except PodNotFound:
            current = None
        if current is None:
            try:
                self.provider.create_pod(copy.deepcopy(pod))
            except Exception as err:
                self._provider_failed(pod, err, "ProviderCreateFailed")
                raise
            log.info("Created pod %s in provider", key)
            self._event(pod, "Normal", "ProviderCreateSuccess", "Create pod in provider successfully")
        elif not podcompare.pods_equal(current, pod):
            try:
                self.provider.update_pod(copy.deepcopy(pod))
            except Exception as err:
                self._provider_failed(pod, err, "ProviderUpdateFailed")
                raise
            log.info("Updated pod %s in provider", key)
            self._event(pod, "Normal", "ProviderUpdateSuccess", "Update pod in provider successfully")

    def _delete_in_provider(self, pod: Pod) -> None:
        try:
            self.provider.delete_pod(copy.deepcopy(pod))
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

    def _delete_dangling(self) -> None:
        """Pods the provider runs that the API no longer has (deleted while we were away)."""
        try:
            running = self.provider.get_pods()
        except Exception as err:
            log.error("Failed to fetch the list of pods from the provider: %s", err)
            return
        for pod in running:
            if self.pods.get(_key(pod)) is None:
                try:
                    self.provider.delete_pod(copy.deepcopy(pod))
                    log.info("Deleted leaked pod %s in provider", _key(pod))
                except PodNotFound:
                    pass
                except Exception as err:
                    log.error("Failed to delete leaked pod %s in provider: %s", _key(pod), err)

    # --- delete: provider is done -> API --------------------------------------------------------

    def _delete_from_api(self, item: str) -> None:
        key, _, uid = item.rpartition("/")
        pod = self.pods.get(key)
        if pod is None or (pod.get("metadata") or {}).get("uid") != uid:
            return
        if podcompare.is_running(pod):
            log.debug("Force deleting pod %s in running state", key)
        namespace, name = _split(key)
        try:
            self.api.delete_namespaced_pod(name, namespace, body={"gracePeriodSeconds": 0,
                                                                  "preconditions": {"uid": uid}},
                                           _preload_content=False, _request_timeout=self.timings.request_timeout).read()
        except Exception as err:
            if kubeapi.is_not_found(err) or kubeapi.is_conflict(err):
                return
            raise

    # --- status: provider -> API ----------------------------------------------------------------

    def _sync_status(self, key: str) -> None:
        pod = self.pods.get(key)
        known = self._known_pod(key)
        if pod is None or known is None or podcompare.is_terminal(pod):
            return
        with known.lock:
            reported = known.last_status
        if reported is None:
            return
        status = podcompare.merged_status(reported.get("status") or {}, pod.get("status") or {})
        if status == (pod.get("status") or {}):
            return
        self._write_status(pod, status)

    def _write_status(self, pod: Pod, status: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        try:
            # read(): a response left unread keeps its connection, so every write would open a new one.
            # Status patches are dicts we build: no pydantic validation of them per pod.
            componentbase.client.request(
                self.api.api_client, "PATCH", "/api/v1/namespaces/{namespace}/pods/{name}/status",
                path_params={"namespace": meta.get("namespace", ""), "name": meta.get("name", "")},
                body=podcompare.status_patch(pod, status), content_type="application/merge-patch+json",
                timeout=self.timings.request_timeout).read()
        except Exception as err:
            if kubeapi.is_not_found(err):
                return
            raise

    # --- polling: providers without notify, and pods the provider lost -------------------------

    def _poll(self, stop: threading.Event, interval: float, report: bool) -> None:
        while not stop.wait(interval):
            for pod in self.pods.list():
                if stop.is_set():
                    return
                if podcompare.is_terminal(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
                    continue
                try:
                    self._check_status(pod, report)
                except Exception as err:
                    log.error("Could not fetch pod status of %s: %s", _key(pod), err)

    def _check_status(self, pod: Pod, report: bool) -> None:
        namespace, name = _split(_key(pod))
        try:
            status = self.provider.get_pod_status(namespace, name)
        except PodNotFound:
            status = None
        if status is not None:
            if report:
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
    lost = copy.deepcopy(status)
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
