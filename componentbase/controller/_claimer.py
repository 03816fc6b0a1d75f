"""A shard's claims: the objects of a gone shard that the ring of live shards gives this shard, relabelled by it.

When a shard's Lease expires, about 1/N of all objects need a new label at once, and none is reconciled until
it has one. The sharder alone would write them one after another from one process: on a 2-core machine about
a thousand a second, so 3,300 objects (10,000 over 3 shards) waited seconds past the Lease's end. Instead each
survivor lists the gone shard's objects (metadata only; the API server filters by the label) and labels the
ones the ring gives it, so the survivors write in parallel, each about 1/(N-1) of them. The sharder leaves a
gone shard's objects to the claimers for its ``claim_grace``, then relabels whatever is left: a claimer that
fails or is slow delays objects, never strands them. On the sharder's own replica the sharder writes that
replica's share at once, from its cache, and the claimer there lists nothing.

Safety is the sharder's own rule: a shard is gone only once its Lease expired (or was released) as judged
here (``_membership``), after its own fence stopped its writes. Every label write carries the resourceVersion
listed, so an object changed meanwhile (claimed by another, moved by the sharder) is a conflict and left
alone. A claimer whose view of the ring differs from the sharder's may claim an object the sharder's ring
gives another live shard; the sharder then drains it from here, as from any live shard.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any

from componentbase.client import NotLeader, ObjectClient, is_conflict, is_not_found
from componentbase.controller._membership import Membership
from componentbase.controller._ring import HashRing
from componentbase.controller._shardcache import compact_list_watch, metadata_client
from componentbase.controller._shardmetrics import ShardingMetrics
from componentbase.controller._shardnames import ShardingConfig, object_key, relabel, selectors

__all__ = ["Claimer"]

log = logging.getLogger("componentbase.controller.sharding")

#: Objects listed per page (0: one list). A continued page is read at the first page's resourceVersion, which
#: the API server serves by rewinding its history past every write since, and the writes of a rebalance are
#: many: one list of the gone shard's metadata (about 0.5 KB an object) costs the server less.
PAGE = 0


class Claimer:
    """Runs with the shard's controllers, while the shard holds its Lease."""

    def __init__(self, config: ShardingConfig, *, shard: str, api_client: Any, writes: ObjectClient,
                 lease_namespace: str, namespace: Any, mapper: Any, retry_period: float, workers: int,
                 metrics: ShardingMetrics, sharder_here: Callable[[], bool] = lambda: False) -> None:
        self.config = config
        self.shard = shard
        self.name = f"claimer-{shard}"
        self.api_client = api_client
        self.writes = writes
        self.lease_namespace = lease_namespace
        self.namespaces = list(namespace or ())
        self.mapper = mapper
        self.period = min(retry_period, 0.25)
        self.workers = workers
        self.metrics = metrics
        self.sharder_here = sharder_here

    def run(self, stop: threading.Event) -> None:
        members = Membership(self.config.orphan_after)
        leases = members.watch(self.api_client, self.lease_namespace, self.config.ring)
        lists = metadata_client(self.api_client, "claimer")
        try:
            leases.start(stop)
            if not leases.wait_for_cache_sync(120.0):
                return
            was = members.live()
            while not stop.wait(members.until_expiry(self.period)):
                live = members.live()
                for gone in sorted(was - live) if not self.sharder_here() else ():
                    try:
                        self._claim(gone, HashRing(live, self.config.virtual_nodes), lists, stop)
                    except Exception as err:  # the sharder relabels what is left: a claim never stops the shard
                        log.warning("shard %s of ring %s: claiming the objects of gone shard %s: %s", self.shard,
                                    self.config.ring, gone, err)
                was = live
        finally:
            leases.join(1.0)
            lists.close()

    def _claim(self, gone: str, ring: HashRing, lists: Any, stop: threading.Event) -> None:
        """List the gone shard's objects and label the ones the ring gives this shard, ``workers`` at a time."""
        selector = selectors(self.config.selector, f"{self.config.shard_label}={gone}")
        mine: collections.deque[tuple[str, str, Any]] = collections.deque()
        for api_version, kind in self.config.kinds:
            mapping = self.mapper.mapping(api_version, kind)
            for namespace in self.namespaces if mapping.namespaced and self.namespaces else [None]:
                list_watch = compact_list_watch(lists, mapping, namespace, selector)
                token = ""
                while not stop.is_set():
                    try:
                        page = list_watch.list_page(limit=PAGE, continue_token=token, timeout=60.0)
                    except Exception as err:  # the sharder relabels what is left after its grace
                        log.warning("shard %s of ring %s: listing %s of gone shard %s: %s", self.shard,
                                    self.config.ring, mapping.resource, gone, err)
                        break
                    mine.extend((api_version, kind, obj) for obj in page.items
                                if ring.shard_for(object_key(obj)) == self.shard)
                    token = page.continue_token
                    if not token:
                        break
        taken: list[int] = []

        def write() -> None:  # one of the writers: takes the next object until none is left
            count = 0
            while not stop.is_set():
                try:
                    item = mine.popleft()
                except IndexError:
                    break
                count += self._take(*item)
            taken.append(count)

        writers = [threading.Thread(target=write, name=f"{self.name}-{i}") for i in range(min(self.workers, len(mine)))]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        log.info("shard %s of ring %s: claimed %d objects of gone shard %s", self.shard, self.config.ring,
                 sum(taken), gone)

    def _take(self, api_version: str, kind: str, obj: Any) -> bool:
        try:
            relabel(self.writes, api_version, kind, obj,
                    {self.config.shard_label: self.shard, self.config.drain_label: None})
        except NotLeader:
            return False  # this shard's Lease is ending: it claims nothing more
        except Exception as err:  # changed meanwhile, gone, or unanswered: the sharder decides again
            if not (is_conflict(err) or is_not_found(err)):
                log.debug("shard %s of ring %s: claiming %s: %s", self.shard, self.config.ring, object_key(obj), err)
            return False
        self.metrics.claimed(kind)
        return True
