"""Which ApiCluster (watch cache) serves which simulated cluster, and the clusters' API tokens.

A cluster's cache is listed from its store (``services.objectstore``) the first time the API is asked for it and
then follows the store's change log: before each request (``catch_up``), and every FOLLOW_SECONDS while a watch is
open (``_follow``), so that what any writer stores, in any process, reaches every API process. Writes go through
``persisting``. Loading a new scenario into the cluster (ClusterState.loaded changes) replaces the cache; open
watches end and their clients re-list; so does a change log pruned past the cache.

Requests carry one of the cluster's API tokens (``dashboard.services.credentials``: made on the Connect page, the
REST API or ``manage.py clustertoken``, stored as digests, revocable).
"""
from __future__ import annotations

import datetime
import functools
import logging
import os
import threading
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from scheduler_core.objects import Node, ParseError, Pod

from ..models import Cluster, SchedulingEvent
from ..models import Node as NodeRow
from ..models import Pod as PodRow
from ..services import credentials, kubeversions, objectstore
from ..services.admitted import node_defaults
from ..services.groupcommit import GroupCommit
from .errors import ApiError
from .store import EVENT_TTL_SECONDS, EXTRA_KINDS, ApiCluster

WATCH_WINDOW = int(os.environ.get("SCHEDSCOPE_K8S_WATCH_WINDOW", "10000"))
LOOKUP_TTL_SECONDS = 1.0
FOLLOW_SECONDS = 0.1
log = logging.getLogger("dashboard.k8sapi")

_guard = threading.Lock()
_stores = {}    # cluster name -> (signature, ApiCluster)
_followers = []  # the threads that follow the store for the caches (``_follow``)
_lookups = {}   # cluster name -> (monotonic expiry, (pk, signature) or None)


NO_CLUSTER = 0   # no cluster's id: the tokens of a cluster that is not there


async def check_token(header: str, pk: int) -> None:
    """401 unless ``header`` is ``Bearer <a live token of the cluster>`` (NO_CLUSTER: always, after the same
    lookup)."""
    scheme, _, token = (header or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError.unauthorized()
    if not (credentials.token_recently_valid(pk, token)
            or await sync_to_async(credentials.authenticate_token)(pk, token)):
        raise ApiError.unauthorized()


def _signature(name: str):
    row = (Cluster.objects.filter(name=name, kind=Cluster.SIMULATED)
           .values_list("pk", "created", "state__loaded", "kubelet").first())
    return None if row is None else tuple(row)


def _event_raw(row) -> dict:
    """A SchedulingEvent as the API serves it: its stored v1 Event, or one made from the columns of a row
    recorded before the store."""
    if row.raw:
        return row.raw
    regarding = ({"kind": "Pod", "apiVersion": "v1", "namespace": row.pod_namespace, "name": row.pod_name,
                  "uid": row.pod_uid} if row.pod_uid else {"kind": "Node", "apiVersion": "v1", "name": row.node})
    ev = objectstore.event_object(regarding["name"] or "cluster", regarding, row.type, row.reason, row.reason,
                                  row.message, "default-scheduler", row.time.timestamp())
    ev["metadata"]["uid"] = f"schedscope-event-{row.pk}"
    return objectstore.with_rv(ev, row.rv)


def _load(name: str, pk: int, kubelet: bool) -> ApiCluster:
    """The cache listed from the store, with the initial namespaces and system PriorityClasses it lacks stored
    (under the cluster's row lock: nothing is written meanwhile)."""
    cluster = Cluster.objects.get(pk=pk)
    release = kubeversions.release(cluster) if kubelet else ""
    with objectstore.writing(pk) as w:
        nodes = []
        for row in NodeRow.objects.filter(cluster_id=pk).order_by("id"):
            raw = node_defaults(objectstore.stored_node(name, row.raw, row.created.timestamp()))
            raw = objectstore.with_rv(objectstore.kubelet_node(raw, release) if kubelet else raw, row.rv)
            try:
                nodes.append(Node(raw))
            except ParseError:
                continue   # as for pods below
        pods = []
        for row in PodRow.objects.filter(cluster_id=pk).order_by("id"):
            raw = objectstore.stored_pod(name, row.raw, row.created.timestamp())
            if row.node_name and not raw["spec"].get("nodeName"):
                raw["spec"]["nodeName"] = row.node_name
            try:
                pods.append(Pod(objectstore.with_rv(raw, row.rv)))
            except ParseError:
                continue   # rows are validated when written; a row that no longer parses is not served
        extra = objectstore.other_objects(pk, [k for k in EXTRA_KINDS if k != "Event"])
        since = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=EVENT_TTL_SECONDS)
        extra += [("Event", _event_raw(row)) for row in SchedulingEvent.objects.filter(cluster_id=pk, time__gte=since)
                  .order_by("time", "id")]
        api = ApiCluster(name, nodes, pods, objectstore.scenario_objects(pk), window=WATCH_WINDOW,
                         start_rv=w.start_rv + 1, extra=extra, quota=quota(), kubelet=kubelet,
                         kubelet_version=release, features=kubeversions.cluster_features(cluster))
        objectstore.store_changes(w, [(kind, objectstore.ADDED, raw, int(raw["metadata"]["resourceVersion"]))
                                      for kind, raw in api.created]
                                  + [("nodes", objectstore.MODIFIED, raw, int(raw["metadata"]["resourceVersion"]))
                                     for raw in api.allocated])
        w.rv = api.rv
    api.group_commit = GroupCommit(functools.partial(_commit_group, api, pk))
    return api


def quota() -> dict:
    """What one simulated cluster may hold (the same limits as the REST API's, ``clusters.check_size``)."""
    conf = settings.SCHEDSCOPE
    return {"pods": conf["MAX_PODS"], "nodes": conf["MAX_NODES"], "Event": conf["MAX_EVENTS"],
            "bytes": conf["MAX_STORE_BYTES"]}


def catch_up(api: ApiCluster, pk: int) -> None:
    """Apply what the store's other writers changed since the cache's resourceVersion; a log pruned past it
    leaves the cache stale (rebuilt by the next lookup)."""
    while True:
        try:
            changes = objectstore.changes_since(pk, api.rv)
        except objectstore.Compacted:
            api.stale = True
            api.close()
            return
        for rv, kind, type_, key, raw in changes:
            api.apply_logged(rv, kind, type_, key, raw)
        if len(changes) < objectstore.CHANGES_PER_READ:
            return


def write(api: ApiCluster, pk: int, fn):
    """Apply an API write (``fn``: the verb, on the cache) and store its changes, in the cache's group commit
    (``services.groupcommit``: concurrent clients share a transaction); returns ``fn``'s result or raises its
    error. A failure of the store fails every write of the group and leaves the cache stale (the next lookup
    rebuilds it from the store)."""
    return api.group_commit.submit(fn)


def _commit_group(api: ApiCluster, pk: int, batch: list) -> None:
    try:
        with api.lock, objectstore.writing(pk) as w:
            if w.start_rv != api.rv:
                catch_up(api, pk)
                api.rv = max(api.rv, w.start_rv)
            with api.collecting() as changes:
                for item in batch:
                    try:
                        item.result = item.payload()
                    except Exception as err:   # the verb's answer (an ApiError): what it changed is stored
                        item.error = err
                objectstore.store_changes(w, [(c.store, c.type, c.obj, c.rv) for c in changes])
            w.rv = max(w.rv, api.rv)
    except Exception as err:
        api.stale = True
        log.exception("k8s API of %s: storing %d writes failed; the cache is rebuilt", api.name, len(batch))
        for item in batch:
            item.error = ApiError(500, "InternalError", f"Internal error occurred: the write was not stored "
                                                        f"({type(err).__name__})")


def _follow(name: str, api: ApiCluster, pk: int) -> None:
    """While the cache serves: follow the store every FOLLOW_SECONDS when a watch is open (other processes'
    writes reach this process's watches)."""
    try:
        while not api.closed:
            time.sleep(FOLLOW_SECONDS)
            if not api.watchers:
                continue
            try:
                catch_up(api, pk)
            except Exception:   # the database away: the next turn tries again
                log.warning("k8s API cache of %s: following the store failed", name, exc_info=True)
                connection.close()
                time.sleep(1.0)
    finally:
        connection.close()


_NOT_CACHED = object()


def _recent_signature(name: str):
    """The signature a lookup less than LOOKUP_TTL_SECONDS old found (None too), else _NOT_CACHED."""
    with _guard:
        cached = _lookups.get(name)
    return cached[1] if cached is not None and cached[0] > time.monotonic() else _NOT_CACHED


def _fresh_signature(name: str):
    """The cluster's signature (None: no simulated cluster of that name), read at most once per LOOKUP_TTL_SECONDS."""
    sig = _recent_signature(name)
    if sig is _NOT_CACHED:
        sig = _signature(name)
        with _guard:
            _lookups[name] = (time.monotonic() + LOOKUP_TTL_SECONDS, sig)
    return sig


async def cluster_id(name: str) -> int | None:
    """The id of the simulated cluster called ``name``, or None; nothing is loaded (the token is checked first).
    A recent lookup answers without leaving the event loop."""
    sig = _recent_signature(name)
    if sig is _NOT_CACHED:
        sig = await sync_to_async(_fresh_signature)(name)
    return None if sig is None else sig[0]


def _lookup_sync(name: str):
    sig = _fresh_signature(name)
    if sig is None:
        with _guard:
            gone = _stores.pop(name, None)
        if gone is not None:
            gone[1].close()
        raise ApiError.page_not_found()
    with _guard:
        held = _stores.get(name)
    if held is not None and held[0] == sig and not held[1].stale:
        return held[1], sig[0]
    api = _load(name, sig[0], sig[3])
    with _guard:
        current = _stores.get(name)
        if current is not None and current[0] == sig:
            return current[1], sig[0]
        _stores[name] = (sig, api)
    follower = threading.Thread(target=_follow, args=(name, api, sig[0]), name=f"k8s-follow-{name}", daemon=True)
    follower.start()
    with _guard:
        _followers[:] = [t for t in _followers if t.is_alive()] + [follower]
    if held is not None:
        held[1].close()
    return api, sig[0]


def _cached(name: str):
    """The answer of a lookup made less than LOOKUP_TTL_SECONDS ago, without the database."""
    with _guard:
        cached, held = _lookups.get(name), _stores.get(name)
    if (cached is not None and cached[0] > time.monotonic() and held is not None and held[0] == cached[1]
            and not held[1].stale):
        return held[1], cached[1][0]
    return None


async def lookup(name: str):
    """(ApiCluster, cluster id) of a simulated cluster; 404 when there is none of that name."""
    return _cached(name) or await sync_to_async(_lookup_sync)(name)



def forget() -> None:
    """Drop every cached name lookup and loaded cluster, as a new process starts (the tests, which reuse cluster
    names for new rows, begin each test so)."""
    with _guard:
        stores = list(_stores.values())
        _stores.clear()
        _lookups.clear()
        followers, _followers[:] = list(_followers), []
    for _sig, api in stores:
        api.close()
    for t in followers:   # they close their database connections as they end
        t.join(2 * FOLLOW_SECONDS + 1)
