"""Which ApiCluster serves which simulated cluster, and the clusters' API tokens.

A cluster's API state is built from the database (its nodes, pods and other objects) the first time the API is
asked for it, and lives in this process from then on: API writes change it, not the database. Loading a new
scenario into the cluster (ClusterState.loaded changes) replaces it; open watches end and their clients re-list.

Requests carry one of the cluster's API tokens (``dashboard.services.credentials``: made on the Connect page, the
REST API or ``manage.py clustertoken``, stored as digests, revocable).
"""
from __future__ import annotations

import os
import threading
import time
import uuid

from asgiref.sync import sync_to_async

from scheduler_core.objects import Node, ParseError, Pod

from ..models import Cluster, ClusterState
from ..models import Node as NodeRow
from ..models import Pod as PodRow
from ..services import credentials
from .admission import node_defaults
from .errors import ApiError
from .store import ApiCluster, rfc3339

WATCH_WINDOW = int(os.environ.get("SCHEDSCOPE_K8S_WATCH_WINDOW", "10000"))
LOOKUP_TTL_SECONDS = 1.0

_guard = threading.Lock()
_stores = {}    # cluster name -> (signature, ApiCluster)
_lookups = {}   # cluster name -> (monotonic expiry, (pk, signature) or None)


async def check_token(header: str, pk: int) -> None:
    """401 unless ``header`` is ``Bearer <a live token of the cluster>``."""
    scheme, _, token = (header or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError.unauthorized()
    if not (credentials.token_recently_valid(pk, token)
            or await sync_to_async(credentials.authenticate_token)(pk, token)):
        raise ApiError.unauthorized()


def _signature(name: str):
    row = (Cluster.objects.filter(name=name, kind=Cluster.SIMULATED)
           .values_list("pk", "created", "state__loaded").first())
    return None if row is None else (row[0], row[1], row[2])


def _normalized(raw: dict, kind: str, cluster: str, created) -> dict:
    meta = dict(raw.get("metadata") or {})
    if kind == "Pod":
        meta.setdefault("namespace", "default")
    key = f'{meta.get("namespace", "")}/{meta.get("name", "")}'
    meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedscope:{cluster}:{kind}:{key}")))
    meta.setdefault("creationTimestamp", rfc3339(created.timestamp()))
    return dict(raw, apiVersion="v1", kind=kind, metadata=meta)


def _load(name: str, pk: int, start_rv: int) -> ApiCluster:
    nodes = []
    for row in NodeRow.objects.filter(cluster_id=pk).order_by("id"):
        try:
            nodes.append(Node(node_defaults(_normalized(row.raw, "Node", name, row.created))))
        except ParseError:
            continue   # as for pods below
    pods = []
    for row in PodRow.objects.filter(cluster_id=pk).order_by("id"):
        raw = _normalized(row.raw, "Pod", name, row.created)
        spec = dict(raw.get("spec") or {})
        if row.node_name and not spec.get("nodeName"):
            spec["nodeName"] = row.node_name
        spec.setdefault("schedulerName", "default-scheduler")
        raw["spec"] = spec
        raw["status"] = dict(raw.get("status") or {})
        raw["status"].setdefault("phase", "Pending")
        try:
            pods.append(Pod(raw))
        except ParseError:
            continue   # rows are validated when written; a row that no longer parses is not served
    state = ClusterState.objects.filter(cluster_id=pk).first()
    return ApiCluster(name, nodes, pods, dict(state.resources) if state else {}, window=WATCH_WINDOW,
                      start_rv=start_rv)


def _fresh_signature(name: str):
    """The cluster's signature (None: no simulated cluster of that name), read at most once per LOOKUP_TTL_SECONDS."""
    now = time.monotonic()
    with _guard:
        cached = _lookups.get(name)
    if cached is not None and cached[0] > now:
        return cached[1]
    sig = _signature(name)
    with _guard:
        _lookups[name] = (now + LOOKUP_TTL_SECONDS, sig)
    return sig


async def cluster_id(name: str) -> int | None:
    """The id of the simulated cluster called ``name``, or None; nothing is loaded (the token is checked first)."""
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
    if held is not None and held[0] == sig:
        return held[1], sig[0]
    # resourceVersions only grow, across reloads and restarts too: clients of an older state get 410 and re-list
    start_rv = max(held[1].rv + 1 if held is not None else 0, int(time.time() * 1e6))
    api = _load(name, sig[0], start_rv)
    with _guard:
        current = _stores.get(name)
        if current is not None and current[0] == sig:
            return current[1], sig[0]
        _stores[name] = (sig, api)
    if held is not None:
        held[1].close()
    return api, sig[0]


def _cached(name: str):
    """The answer of a lookup made less than LOOKUP_TTL_SECONDS ago, without the database."""
    with _guard:
        cached, held = _lookups.get(name), _stores.get(name)
    if cached is not None and cached[0] > time.monotonic() and held is not None and held[0] == cached[1]:
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
    for _sig, api in stores:
        api.close()
