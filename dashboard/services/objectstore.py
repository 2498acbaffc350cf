"""The store of a simulated cluster: its objects in the database, one resourceVersion sequence, the change log.

Nodes and pods are Node and Pod rows, events SchedulingEvent rows, every other kind a StoredObject row; each
carries the resourceVersion of its last change, and the cluster's ``StoreCounter`` holds the newest one. Every
write, whoever makes it (the Kubernetes API, the REST API and the pages, scenarios, the workload generator, the
scheduler's recorder), runs in a ``Write``: one transaction that takes the cluster's row first (the one lock
order, ``rowlock``), numbers its changes from the cluster's counter and appends them to the change log
(StoreChange rows). Readers list (``snapshot``) and then follow the log from that resourceVersion
(``changes_since``): the Kubernetes API's watch cache (``k8sapi.store.ApiCluster``) and the scheduler loop
(``engine.Engine``). A scenario load replaces the whole state: it bumps ``Cluster.version`` instead of logging,
and followers rebuild.
"""
from __future__ import annotations

import datetime
import functools
import hashlib
import ipaddress
import json
import threading
import time
import uuid

import orjson
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Min

from scheduler_core.cluster.simulated import OBJECT_KINDS, SCENARIO_ARRAYS
from scheduler_core.objects import Node as CoreNode
from scheduler_core.objects import Pod as CorePod

from ..models import Cluster, Node, Pod, SchedulingEvent, StoreChange, StoreCounter, StoredObject
from ..profiles.models import AuditLog
from . import admitted, kubeversions
from .admitted import ValidationFailed
from .groupcommit import GroupCommit, Item
from .rowlock import lock_cluster

NAMESPACED = {**{kind: namespaced for kind, (_attr, namespaced) in OBJECT_KINDS.items()},
              "Namespace": False, "Lease": True, "PriorityClass": False, "CSIStorageCapacity": True,
              "VolumeAttachment": False, "Event": True, "pods": True, "nodes": False}
ARRAYS = {**SCENARIO_ARRAYS, "namespaces": "Namespace"}           # scenario array -> kind
ADDED, MODIFIED, DELETED = StoreChange.ADDED, StoreChange.MODIFIED, StoreChange.DELETED
CHANGES_PER_READ = 5000
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


class Compacted(Exception):
    """The change log no longer reaches back to the resourceVersion a follower asked from: it must re-list."""


def rfc3339(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def key_of(kind: str, raw: dict) -> str:
    meta = raw.get("metadata") or {}
    return f'{meta.get("namespace") or "default"}/{meta.get("name", "")}' if NAMESPACED.get(kind, True) \
        else meta.get("name", "")


def with_rv(raw: dict, rv: int) -> dict:
    return dict(raw, metadata=dict(raw.get("metadata") or {}, resourceVersion=str(rv)))


def stored_pod(cluster_name: str, raw: dict, created: float) -> dict:
    """A pod as the API stores it: namespace, uid and creationTimestamp set, spec.schedulerName and status.phase
    defaulted (kube-apiserver's defaults for what the dashboard's writers leave out)."""
    meta = dict(raw.get("metadata") or {})
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL,
                                          f'schedscope:{cluster_name}:Pod:{meta["namespace"]}/{meta.get("name")}')))
    meta.setdefault("creationTimestamp", rfc3339(created))
    spec = dict(raw.get("spec") or {})
    spec.setdefault("schedulerName", "default-scheduler")
    status = dict(raw.get("status") or {})
    status.setdefault("phase", "Pending")
    return dict(raw, apiVersion="v1", kind="Pod", metadata=meta, spec=spec, status=status)


def stored_node(cluster_name: str, raw: dict, created: float) -> dict:
    meta = dict(raw.get("metadata") or {})
    meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, f'schedscope:{cluster_name}:Node:/{meta.get("name")}')))
    meta.setdefault("creationTimestamp", rfc3339(created))
    return dict(raw, apiVersion="v1", kind="Node", metadata=meta)


# -- the simulated kubelet ------------------------------------------------------------------------------
def node_ip(node_raw: dict | None, node_name: str) -> str:
    """The node's InternalIP, or one made from its name (10.128.0.0/9) when it reports none."""
    for addr in ((node_raw or {}).get("status") or {}).get("addresses") or ():
        if addr.get("type") == "InternalIP" and addr.get("address"):
            return addr["address"]
    h = int.from_bytes(hashlib.sha256(node_name.encode()).digest()[:3], "big")
    return f"10.{128 + (h >> 16) % 128}.{(h >> 8) & 255}.{(h & 255) or 1}"


def pod_ips(uid: str, node_raw: dict | None) -> list:
    """The pod's IPs: one in each of the node's pod CIDRs (``spec.podCIDRs``, else ``spec.podCIDR``), as the
    kubelet's network plugin gives them, or one made from the uid (10.0.0.0/9) when the node has none."""
    h = int.from_bytes(hashlib.sha256(uid.encode()).digest()[:8], "big")
    spec = (node_raw or {}).get("spec") or {}
    ips = []
    for cidr in spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []):
        try:
            net = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue
        hosts = net.num_addresses - 3   # not the network, the gateway (.1) or the broadcast address
        if hosts > 0:
            ips.append(str(net[2 + h % hosts]))
    if not ips:
        h >>= 40
        ips.append(f"10.{(h >> 16) % 128}.{(h >> 8) & 255}.{(h & 255) or 1}")
    return ips


def kubelet_node(node_raw: dict, release: str) -> dict:
    """A node as its simulated kubelet registers it: ``status.nodeInfo.kubeletVersion`` is the cluster's release
    (what kubectl shows as VERSION) when the node reports none, and its addresses, when it reports none, are the
    InternalIP its pods' hostIP is (``node_ip``) and its Hostname (what ``kubectl get nodes -o wide`` shows)."""
    status = dict(node_raw.get("status") or {})
    info = dict(status.get("nodeInfo") or {})
    if info.get("kubeletVersion") and status.get("addresses"):
        return node_raw
    if not info.get("kubeletVersion"):
        info["kubeletVersion"] = release
        status["nodeInfo"] = info
    if not status.get("addresses"):
        name = (node_raw.get("metadata") or {}).get("name", "")
        status["addresses"] = [{"type": "InternalIP", "address": node_ip(node_raw, name)},
                               {"type": "Hostname", "address": name}]
    return dict(node_raw, status=status)


def running_status(raw: dict, node_raw: dict | None, node_name: str, now: float) -> dict:
    """What a kubelet (as kwok's fake nodes) reports once the pod runs: phase Running, the Initialized, Ready,
    ContainersReady and PodScheduled conditions, hostIP, podIP(s) (in the node's pod CIDRs), startTime and a
    running state per container."""
    ts = rfc3339(now)
    status = dict(raw.get("status") or {})
    ips = pod_ips((raw.get("metadata") or {}).get("uid", "") or key_of("pods", raw), node_raw)
    host = node_ip(node_raw, node_name)
    conditions = [c for c in status.get("conditions") or () if c.get("type") not in
                  ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    conditions += [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts}
                   for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    containers = [{"name": c.get("name", ""), "image": c.get("image", ""), "imageID": "", "ready": True,
                   "restartCount": 0, "started": True, "state": {"running": {"startedAt": ts}}}
                  for c in (raw.get("spec") or {}).get("containers") or ()]
    status.update(phase="Running", conditions=conditions, hostIP=host, hostIPs=[{"ip": host}], podIP=ips[0],
                  podIPs=[{"ip": ip} for ip in ips], startTime=status.get("startTime") or ts, containerStatuses=containers,
                  qosClass=status.get("qosClass") or "BestEffort")
    return status


def scheduled_status(raw: dict, now: float) -> dict:
    """Without the simulated kubelet: the binding's PodScheduled=True only (the pod stays Pending)."""
    status = dict(raw.get("status") or {})
    status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"] + [
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": rfc3339(now)}]
    return status


# -- events ---------------------------------------------------------------------------------------------
def event_object(name_prefix: str, regarding: dict, event_type: str, reason: str, action: str, message: str,
                 controller: str, now: float, related: dict | None = None) -> dict:
    """A core/v1 Event as kube's event recorder makes it (served as events.k8s.io/v1 too)."""
    ev = {"apiVersion": "v1", "kind": "Event",
          "metadata": {"name": f"{name_prefix}.{int(now * 1e9):x}",
                       "namespace": regarding.get("namespace") or "default",
                       "uid": str(uuid.uuid4()), "creationTimestamp": rfc3339(now)},
          "involvedObject": regarding, "reason": reason, "message": message, "type": event_type,
          "action": action, "eventTime": micro_time(now), "reportingComponent": controller,
          "reportingInstance": f"{controller}-schedscope", "source": {}, "firstTimestamp": None,
          "lastTimestamp": None}   # as kube serves an events.k8s.io Event's zero timestamps (kubectl sorts by them)
    if related is not None:
        ev["related"] = related
    return ev


SERIES_FINISH_SECONDS = 6 * 60   # client-go's events.finishTime: a series ends six minutes after its last Event


def micro_time(now: float) -> str:
    return datetime.datetime.fromtimestamp(now, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventSeries:
    """kube's event series (client-go tools/events, the recorder kube-scheduler uses): an Event isomorphic to one
    observed less than ``SERIES_FINISH_SECONDS`` before (same type, action, reason, reporting controller and
    instance, regarding and related objects; the note does not count) is not a new Event: the first one's
    ``series`` counts it (count, lastObservedTime) and its note stays the first one's. One per recorder, kept in
    memory as kube's broadcaster keeps its cache (a restarted scheduler starts new Events)."""

    def __init__(self):
        self._seen = {}   # key -> (the first Event, last observed, count)
        self._pruned = 0.0

    def observe(self, raw: dict, now: float) -> tuple[dict, bool]:
        """(the Event to store, whether it is a later count of an earlier Event's series)."""
        if now - self._pruned > 60:
            self._seen = {k: v for k, v in self._seen.items() if now - v[1] <= SERIES_FINISH_SECONDS}
            self._pruned = now
        key = orjson.dumps([raw.get(f) for f in ("type", "action", "reason", "reportingComponent", "reportingInstance",
                                                  "involvedObject", "related")], option=orjson.OPT_SORT_KEYS)
        seen = self._seen.get(key)
        if seen is None or now - seen[1] > SERIES_FINISH_SECONDS:
            self._seen[key] = (raw, now, 1)
            return raw, False
        first, _last, count = seen
        self._seen[key] = (first, now, count + 1)
        return dict(first, series={"count": count + 1, "lastObservedTime": micro_time(now)}), True


def pod_reference(raw: dict) -> dict:
    meta = raw.get("metadata") or {}
    return {"kind": "Pod", "apiVersion": "v1", "namespace": meta.get("namespace") or "default",
            "name": meta.get("name", ""), "uid": meta.get("uid", ""),
            "resourceVersion": str(meta.get("resourceVersion", ""))}


def event_row_fields(raw: dict) -> dict:
    """SchedulingEvent columns of a v1 or events.k8s.io/v1 Event."""
    ref = raw.get("involvedObject") or raw.get("regarding") or {}
    pod = ref.get("kind") == "Pod"
    when = ((raw.get("series") or {}).get("lastObservedTime") or raw.get("eventTime") or raw.get("lastTimestamp")
            or (raw.get("metadata") or {}).get("creationTimestamp"))
    try:
        time = datetime.datetime.fromisoformat(str(when).replace("Z", "+00:00"))
    except ValueError:
        time = datetime.datetime.now(datetime.timezone.utc)
    return {"time": time, "type": str(raw.get("type") or "Normal")[:16], "reason": str(raw.get("reason") or "")[:64],
            "pod_uid": ref.get("uid", "") if pod else "", "pod_namespace": ref.get("namespace", "") if pod else "",
            "pod_name": ref.get("name", "") if pod else "",
            "node": ref.get("name", "") if ref.get("kind") == "Node" else "",
            "message": str(raw.get("message") or raw.get("note") or "")}


def occurrences(raw: dict) -> int:
    """How many times an Event happened: its series' count (events.k8s.io/v1), its count (v1), else once."""
    return max(int((raw.get("series") or {}).get("count") or 0), int(raw.get("count") or 0), 1)


def _count_attempts(cluster_id: int, fields: dict, attempts: int) -> None:
    """A scheduler's FailedScheduling Event written through the Kubernetes API (another scheduler than the
    cluster's loop, which records its own attempts): ``attempts`` more for the pending pod, its message the
    pod's reason."""
    pods = Pod.objects.filter(cluster_id=cluster_id, namespace=fields["pod_namespace"] or "default",
                              name=fields["pod_name"], node_name="")
    if fields["pod_uid"]:
        pods = pods.filter(uid=fields["pod_uid"])
    pods.update(attempts=F("attempts") + attempts, reason=fields["message"], plugins="")


# -- writing --------------------------------------------------------------------------------------------
class Write:
    """The changes of one transaction of a cluster's store (see the module doc); made by ``writing``."""

    def __init__(self, cluster_id: int, runner: str, rv: int, writer: str = "", pods: int = 0, used: int = 0):
        self.cluster_id = cluster_id
        self.runner = runner
        self.writer = writer
        self.start_rv = self.rv = rv
        self.pods = pods   # the cluster's pod rows when the transaction took the lock
        self.used = used   # the bytes of its pods, nodes and other objects then (StoreCounter.bytes)
        self.changes = []   # (rv, kind, type, key, raw) of the changes logged

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def log(self, kind: str, type_: str, raw: dict, rv: int | None = None) -> int:
        """Append a change (``raw`` carries its resourceVersion, or gets the next one); returns its rv."""
        rv = self.next_rv() if rv is None else rv
        self.rv = max(self.rv, rv)
        self.changes.append((rv, kind, type_, key_of(kind, raw), with_rv(raw, rv)))
        return rv

    def log_loaded(self, kind: str, type_: str, table: str) -> None:
        """PostgreSQL: log the changes whose objects a temporary ``table`` holds (columns ``rv``, ``key`` and
        ``raw``, each raw with its resourceVersion, the rvs taken with ``next_rv``), in one INSERT ... SELECT:
        the objects are not sent to the server a second time. The table is loaded once per transaction (its rows
        stay until the commit)."""
        with connection.cursor() as cur:
            cur.execute(f'INSERT INTO "{StoreChange._meta.db_table}" ("cluster_id", "rv", "kind", "type", "key", '
                        f'"raw", "writer") SELECT %s, rv, %s, %s, key, raw, %s FROM {table}',
                        [self.cluster_id, kind, type_, self.writer])

    def _finish(self) -> None:
        if self.changes and connection.vendor == "postgresql":
            _copy_rows(StoreChange, ("cluster_id", "rv", "kind", "type", "key", "raw", "writer"),
                       [(self.cluster_id, rv, kind, type_, key, _json_text(raw), self.writer)
                        for rv, kind, type_, key, raw in self.changes])
        elif self.changes:
            StoreChange.objects.bulk_create([StoreChange(cluster_id=self.cluster_id, rv=rv, kind=kind, type=type_,
                                                         key=key, raw=raw, writer=self.writer)
                                             for rv, kind, type_, key, raw in self.changes], batch_size=1000)
        if self.rv != self.start_rv:
            with connection.cursor() as cur:
                cur.execute(f'INSERT INTO "{StoreCounter._meta.db_table}" ("cluster_id", "resource_version") '
                            f'VALUES (%s, %s) ON CONFLICT ("cluster_id") DO UPDATE SET "resource_version" = '
                            f'EXCLUDED."resource_version"', [self.cluster_id, self.rv])


def json_bytes(value) -> bytes:
    """Compact JSON of an object (orjson; the standard encoder for what orjson refuses, as integers over 64 bits
    in an object's unknown fields or keys that are not strings): for COPY and the Kubernetes API's answers."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode()


def _json_text(value) -> str:
    return json_bytes(value).decode()


def _copy_rows(model, columns: tuple, rows: list) -> None:
    """Insert rows (tuples in ``columns`` order, JSON columns as text) with PostgreSQL's COPY: a fraction of
    bulk_create's cost per row, for the store's hot inserts (change log entries, new pods)."""
    names = ", ".join(f'"{c}"' for c in columns)
    with connection.cursor() as cur, connection.wrap_database_errors:   # errors as Django's (IntegrityError)
        with cur.cursor.copy(f'COPY "{model._meta.db_table}" ({names}) FROM STDIN') as copy:
            for row in rows:
                copy.write_row(row)


POD_COPY_COLUMNS = ("cluster_id", "uid", "namespace", "name", "labels", "priority", "scheduler_name", "cpu_m",
                    "memory", "node_name", "queue", "attempts", "reason", "plugins", "kube_message", "raw", "rv",
                    "created")


def _insert_pods(cluster_id: int, pods: list) -> None:
    """Insert new pods' rows: (raw, rv, queue, parsed pod) each."""
    _insert_pod_rows([Pod(cluster_id=cluster_id, raw=raw, rv=rv, queue=queue, **pod_columns(pod))
                      for raw, rv, queue, pod in pods])


def _stamp_now(rows: list, field: str) -> datetime.datetime:
    """Set ``field`` (an auto_now_add column, which Django sets only in its own inserts) of each row to now."""
    now = datetime.datetime.now(datetime.timezone.utc)
    for row in rows:
        setattr(row, field, now)
    return now


def _insert_pod_rows(rows: list) -> None:
    """Insert new Pod rows (their ``created`` set to now; on PostgreSQL, by COPY, their ids left unset)."""
    if connection.vendor != "postgresql":
        Pod.objects.bulk_create(rows)
        return
    now = _stamp_now(rows, "created")
    _copy_rows(Pod, POD_COPY_COLUMNS, [
        (r.cluster_id, r.uid, r.namespace, r.name, _json_text(r.labels), r.priority, r.scheduler_name, r.cpu_m,
         r.memory, r.node_name, r.queue, r.attempts, r.reason, r.plugins, r.kube_message, _json_text(r.raw), r.rv,
         now)
        for r in rows])


def _insert_audit_rows(entries: list) -> None:
    """Insert AuditLog entries, their ``time`` set to now: on PostgreSQL in one INSERT of SQL of its own (the
    entries as one JSON document, as ``recorder.update_statuses`` passes its rows), their ids not read back
    (Django's compiling of a bulk_create cost a REST pod create more than the statement)."""
    if connection.vendor != "postgresql":
        AuditLog.objects.bulk_create(entries)
        return
    now = _stamp_now(entries, "time")
    with connection.cursor() as cur:
        cur.execute(f'INSERT INTO "{AuditLog._meta.db_table}" ("time", "user_id", "action", "profile_id", '
                    '"version_id", "cluster_id", "detail") SELECT %s, v.user_id, v.action, v.profile_id, '
                    "v.version_id, v.cluster_id, v.detail FROM jsonb_to_recordset(%s::jsonb) AS v(user_id integer, "
                    "action text, profile_id bigint, version_id bigint, cluster_id bigint, detail jsonb)",
                    [now, _json_text([{"user_id": e.user_id, "action": e.action, "profile_id": e.profile_id,
                                       "version_id": e.version_id, "cluster_id": e.cluster_id, "detail": e.detail}
                                      for e in entries])])


EVENT_COLUMNS = ("time", "type", "reason", "pod_uid", "pod_namespace", "pod_name", "node", "message", "detail",
                 "cycle_seq")


def insert_events(w, events: list) -> None:
    """Store the recorder's events, (fields, v1 Event) pairs (``fields``: the EVENT_COLUMNS of a SchedulingEvent),
    each with the next resourceVersion of the store ``w``, and log their Events. PostgreSQL: COPY into a
    temporary table, then the events' rows and the change log's from it (each Event is sent once)."""
    rows = []
    for fields, raw in events:
        rv = w.next_rv()
        rows.append((fields, rv, with_rv(raw, rv)))
    if connection.vendor != "postgresql":
        for _fields, rv, raw in rows:
            w.log("Event", ADDED, raw, rv)
        SchedulingEvent.objects.bulk_create([SchedulingEvent(cluster_id=w.cluster_id, rv=rv, raw=raw, **fields)
                                             for fields, rv, raw in rows])
        return
    columns = ", ".join(EVENT_COLUMNS)
    with connection.cursor() as cur:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS _event_load (time timestamptz, type text, reason text, "
                    "pod_uid text, pod_namespace text, pod_name text, node text, message text, detail text, "
                    "cycle_seq bigint, "
                    "rv bigint, key text, raw jsonb) ON COMMIT DELETE ROWS")
        with cur.cursor.copy(f"COPY _event_load ({columns}, rv, key, raw) FROM STDIN") as copy:
            for fields, rv, raw in rows:
                copy.write_row((*(fields[c] for c in EVENT_COLUMNS), rv, key_of("Event", raw), _json_text(raw)))
        cur.execute(f'INSERT INTO "{SchedulingEvent._meta.db_table}" (cluster_id, {columns}, rv, raw) '
                    f"SELECT %s, {columns}, rv, raw FROM _event_load", [w.cluster_id])
    w.log_loaded("Event", ADDED, "_event_load")


def update_event_series(w, events: list) -> None:
    """Store the recorder's later counts of Event series (``EventSeries``), (fields, v1 Event) pairs: the series'
    Event updated to its last count (its row's time and cycle the latest) and logged as MODIFIED. An Event whose
    row is gone (deleted through the API, or pruned) is created again with its series, as kube's recorder creates
    it when its patch finds no Event."""
    latest = {}
    for fields, raw in events:
        latest[key_of("Event", raw)] = (fields, raw)
    for fields, raw in latest.values():
        rv = w.next_rv()
        raw = with_rv(raw, rv)
        meta = raw["metadata"]
        first = datetime.datetime.fromisoformat(raw["eventTime"].replace("Z", "+00:00"))
        updated = SchedulingEvent.objects.filter(
            cluster_id=w.cluster_id, pod_uid=fields["pod_uid"], time__gte=first - datetime.timedelta(seconds=1),
            raw__metadata__namespace=meta["namespace"], raw__metadata__name=meta["name"],
        ).update(rv=rv, raw=raw, time=fields["time"], cycle_seq=fields["cycle_seq"], detail=fields["detail"])
        if updated:
            w.log("Event", MODIFIED, raw, rv)
        else:
            SchedulingEvent.objects.create(cluster_id=w.cluster_id, rv=rv, raw=raw,
                                           **dict(fields, message=raw.get("message") or ""))
            w.log("Event", ADDED, raw, rv)


class _Writing:
    def __init__(self, cluster_id: int, writer: str):
        self.cluster_id = cluster_id
        self.writer = writer
        self._atomic = transaction.atomic()

    def __enter__(self) -> Write:
        self._atomic.__enter__()
        try:
            row = lock_cluster(self.cluster_id)
        except BaseException as err:
            self._atomic.__exit__(type(err), err, err.__traceback__)
            raise
        runner, rv, pods, used = (None, 0, 0, 0) if row is None else row
        self.write = Write(self.cluster_id, runner, rv, self.writer, pods, used)
        return self.write

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.write._finish()
            except BaseException as err:   # the transaction rolls back, and the write fails with the error
                self._atomic.__exit__(type(err), err, err.__traceback__)
                raise
        return self._atomic.__exit__(exc_type, exc, tb)


def writing(cluster_id: int, writer: str = "") -> _Writing:
    """``with writing(cluster_id) as w:`` a transaction that holds the cluster's row lock from its start (taken
    before any other write of its rows: the one lock order) and commits ``w``'s changes with it. ``w.runner`` is
    the cluster's ``runner`` ("" when no loop has claimed it, None when the cluster is gone). ``writer``: the
    scheduler loop writing (its lock token), whose own changes it does not follow back."""
    return _Writing(cluster_id, writer)


def put_pod(w: Write, row: Pod, type_: str = ADDED) -> None:
    """Store a new or changed pod row (its ``raw`` is the object) with the next resourceVersion."""
    row.rv = w.log("pods", type_, row.raw)
    row.raw = with_rv(row.raw, row.rv)


def put_node(w: Write, row: Node, type_: str = ADDED) -> None:
    row.rv = w.log("nodes", type_, row.raw)
    row.raw = with_rv(row.raw, row.rv)


def deleted(w: Write, kind: str, raws) -> None:
    """Log the deletion of objects already removed from their table."""
    for raw in raws:
        w.log(kind, DELETED, raw)


def put_object(w: Write, kind: str, raw: dict) -> None:
    """Create or replace a StoredObject (a kind other than pods, nodes and events)."""
    key = key_of(kind, raw)
    existed = StoredObject.objects.filter(cluster_id=w.cluster_id, kind=kind, key=key).exists()
    rv = w.log(kind, MODIFIED if existed else ADDED, raw)
    StoredObject.objects.update_or_create(cluster_id=w.cluster_id, kind=kind, key=key,
                                          defaults={"rv": rv, "raw": with_rv(raw, rv)})


def delete_object(w: Write, kind: str, raw: dict) -> None:
    """Delete a StoredObject and log it (nothing when it is gone already)."""
    if StoredObject.objects.filter(cluster_id=w.cluster_id, kind=kind, key=key_of(kind, raw)).delete()[0]:
        w.log(kind, DELETED, raw)


def replace_objects(w: Write, objects: dict, now: float) -> None:
    """A scenario's objects (arrays by scenario name) replace the cluster's StoredObjects of those kinds, each
    created at ``now`` unless it says when; no change is logged (a scenario load bumps the cluster's version:
    followers rebuild)."""
    StoredObject.objects.filter(cluster_id=w.cluster_id).exclude(kind__in=("Lease",)).delete()
    rows = {}
    for array, items in (objects or {}).items():
        kind = ARRAYS.get(array)
        for raw in items if kind else ():
            meta = raw.get("metadata") or {}
            if not meta.get("creationTimestamp"):
                raw = dict(raw, metadata=dict(meta, creationTimestamp=rfc3339(now)))
            key = key_of(kind, raw)
            rv = w.next_rv()
            rows[(kind, key)] = StoredObject(cluster_id=w.cluster_id, kind=kind, key=key, rv=rv, raw=with_rv(raw, rv))
    StoredObject.objects.bulk_create(rows.values(), batch_size=1000)


def pod_columns(pod) -> dict:
    """The Pod row's indexed columns of a parsed pod (scheduler_core.objects.Pod)."""
    return {"uid": pod.uid, "namespace": pod.namespace, "name": pod.name, "labels": pod.labels,
            "priority": pod.priority, "scheduler_name": pod.scheduler_name, "cpu_m": pod.requests.get("cpu", 0),
            "memory": pod.requests.get("memory", 0), "node_name": pod.node_name}


def node_columns(node) -> dict:
    """The Node row's indexed columns of a parsed node (scheduler_core.objects.Node)."""
    zone = next((node.labels[k] for k in ZONE_LABELS if k in node.labels), "")
    return {"name": node.name, "zone": zone, "labels": node.labels, "taints": [t.to_dict() for t in node.taints],
            "unschedulable": node.unschedulable, "allocatable": node.allocatable}


def store_changes(w: Write, changes) -> None:
    """``store_change`` for each (kind, type, raw, rv), the new pods inserted together."""
    new_pods = []
    for kind, type_, raw, rv in changes:
        if kind == "pods" and type_ == ADDED:
            w.log(kind, type_, raw, rv)
            pod = CorePod(raw)
            queue = Pod.BOUND if pod.node_name else Pod.GATED if pod.scheduling_gates else Pod.ACTIVE
            new_pods.append((raw, rv, queue, pod))
        else:
            if new_pods:   # in order: a pod created and then changed in one group
                _insert_pods(w.cluster_id, new_pods)
                new_pods = []
            store_change(w, kind, type_, raw, rv)
    if new_pods:
        _insert_pods(w.cluster_id, new_pods)


def store_change(w: Write, kind: str, type_: str, raw: dict, rv: int) -> None:
    """Store a change the Kubernetes API made (``raw`` as its cache holds it, with resourceVersion ``rv``): the
    object's row written or deleted, and the change logged."""
    if kind == "pods" and type_ == ADDED:
        store_changes(w, [(kind, type_, raw, rv)])
        return
    cid = w.cluster_id
    w.log(kind, type_, raw, rv)
    key = key_of(kind, raw)
    meta = raw.get("metadata") or {}
    if kind == "pods":
        rows = Pod.objects.filter(cluster_id=cid, namespace=meta.get("namespace") or "default", name=meta.get("name"))
        if type_ == DELETED:
            rows.delete()
            return
        cols = pod_columns(CorePod(raw))
        if cols["node_name"] and rows.filter(node_name="").exists():
            rows.update(raw=raw, rv=rv, queue=Pod.BOUND, reason="", plugins="",
                        bound_at=datetime.datetime.now(datetime.timezone.utc), **cols)
        else:
            rows.update(raw=raw, rv=rv, **cols)
    elif kind == "nodes":
        rows = Node.objects.filter(cluster_id=cid, name=key)
        if type_ == DELETED:
            rows.delete()
        elif type_ == ADDED:
            Node.objects.create(cluster_id=cid, raw=raw, rv=rv, **node_columns(CoreNode(raw)))
        else:
            rows.update(raw=raw, rv=rv, **node_columns(CoreNode(raw)))
    elif kind == "Event":
        rows = SchedulingEvent.objects.filter(cluster_id=cid, raw__metadata__namespace=meta.get("namespace"),
                                              raw__metadata__name=meta.get("name"))
        if type_ == DELETED:
            rows.delete()
            return
        fields = event_row_fields(raw)
        if type_ == ADDED:
            before = 0
            SchedulingEvent.objects.create(cluster_id=cid, rv=rv, raw=raw, **fields)
        else:
            before = max((occurrences(r) for r in rows.values_list("raw", flat=True) if r), default=0)
            rows.update(rv=rv, raw=raw, **fields)
        if fields["reason"] == "FailedScheduling" and fields["pod_name"] and occurrences(raw) > before:
            _count_attempts(cid, fields, occurrences(raw) - before)
    elif type_ == DELETED:
        StoredObject.objects.filter(cluster_id=cid, kind=kind, key=key).delete()
    else:
        StoredObject.objects.update_or_create(cluster_id=cid, kind=kind, key=key, defaults={"rv": rv, "raw": raw})


# -- the dashboard's admitted writes of nodes and pods (pages, REST API, scenarios, workload) ------------
def check_size(cluster, nodes: int = 0, pods: int = 0, replace: bool = False) -> None:
    """Refuse growing a simulated cluster past SCHEDSCOPE MAX_NODES / MAX_PODS (adds ``nodes`` and ``pods``
    to what it holds, or replaces it when ``replace``)."""
    limits = settings.SCHEDSCOPE
    errors = {}
    held = {"nodes": lambda: Node.objects.filter(cluster=cluster).count(), "pods": lambda: pod_count(cluster.pk)}
    for field, adding, limit in (("nodes", nodes, limits["MAX_NODES"]), ("pods", pods, limits["MAX_PODS"])):
        if not adding:
            continue
        total = adding if replace else adding + held[field]()
        if total > limit:
            errors[field] = [_too_many(field, limit, total)]
    if errors:
        raise ValidationFailed(errors)


def within_quota(w: Write, raw: dict, old: dict | None = None) -> None:
    """The cluster's bytes quota (``admitted.check_quota``, kube's 403 and words) on a write of ``raw`` (replacing
    ``old``) in ``w``, against the bytes its objects held when it took the cluster's lock and those its earlier
    writes added."""
    w.used += admitted.check_quota({"bytes": settings.SCHEDSCOPE["MAX_STORE_BYTES"]}, "", 0, w.used, raw, old)


def _too_many(field: str, limit: int, total: int) -> str:
    return f"a simulated cluster holds at most {limit} {field}; this would make {total}"


def node_row(cluster, node: CoreNode, now: float | None = None) -> Node:
    """The row of a node; its ``raw`` as the store keeps it (``stored_node``)."""
    return Node(cluster=cluster, raw=stored_node(cluster.name, node.raw, time.time() if now is None else now),
                **node_columns(node))


def pod_row(cluster, pod: CorePod, now: float | None = None) -> Pod:
    """The row of a pod; its ``raw`` as the store keeps it (``stored_pod``: the uid of the row)."""
    if pod.node_name:
        queue = Pod.BOUND
    else:
        queue = Pod.GATED if pod.scheduling_gates else Pod.ACTIVE
    raw = stored_pod(cluster.name, pod.raw, time.time() if now is None else now)
    return Pod(cluster=cluster, queue=queue, raw=raw, **dict(pod_columns(pod), uid=raw["metadata"]["uid"]))


def priority_classes(cluster_id: int) -> dict:
    """The cluster's PriorityClasses by name, the system ones included (the Priority admission plugin's)."""
    stored = StoredObject.objects.filter(cluster_id=cluster_id, kind="PriorityClass").values_list("raw", flat=True)
    return admitted.with_system_priority_classes({raw["metadata"]["name"]: raw for raw in stored})


def insert_pods(cluster, raws, writer: str = "", audit=None) -> list:
    """Create pod rows from v1.Pod dicts, each admitted (``services.admitted``: none is stored unless all are);
    raises ValidationFailed on refused pods and duplicate names. ``writer``: see ``writing``; ``audit(row)``: an
    AuditLog entry per pod, stored in the same transaction. Concurrent calls of one process for one cluster share a
    transaction (``services.groupcommit``), except a loop's (``writer``: one thread) and calls inside a
    transaction of the caller's, which the pods then join. Returns the rows stored (on PostgreSQL without their
    ids: ``_insert_pod_rows``)."""
    classes, created = priority_classes(cluster.pk), rfc3339(time.time())
    features = kubeversions.cluster_features(cluster)
    rows = [pod_row(cluster, admitted.admit_pod(admitted.check_kind("Pod", raw), classes, created, features))
            for raw in raws]
    entries = [audit(row) for row in rows] if audit is not None else []
    if writer or connection.in_atomic_block:
        item = Item((rows, entries))
        _commit_pod_creates(cluster.pk, writer, [item])
        if item.error is not None:
            raise item.error
    else:
        with _pod_creates_guard:
            group = _pod_creates.get(cluster.pk)
            if group is None:
                group = _pod_creates[cluster.pk] = GroupCommit(functools.partial(_commit_pod_creates, cluster.pk, ""))
        group.submit((rows, entries))
    return rows


_pod_creates = {}   # cluster id -> the GroupCommit of the pod creates of this process
_pod_creates_guard = threading.Lock()


def _commit_pod_creates(cluster_id: int, writer: str, batch: list) -> None:
    """Store the pods (and audit rows) of a group of ``insert_pods`` calls in one transaction, each call refused
    (ValidationFailed) if it would grow the cluster past MAX_PODS (the store's count, read under the cluster's
    lock); when a name or uid clashes, each call again in its own, so that only the clashing one fails."""
    try:
        with writing(cluster_id, writer) as w:
            limit, total = settings.SCHEDSCOPE["MAX_PODS"], w.pods
            stored = []
            for item in batch:
                adding = len(item.payload[0])
                item.error = None if total + adding <= limit else ValidationFailed(
                    {"pods": [_too_many("pods", limit, total + adding)]})
                used = w.used
                try:
                    for row in item.payload[0] if item.error is None else ():
                        within_quota(w, row.raw)
                except admitted.Refused as err:
                    item.error, w.used = err, used
                if item.error is None:
                    total += adding
                    stored.append(item)
            rows = [row for item in stored for row in item.payload[0]]
            for row in rows:
                put_pod(w, row)
            _insert_pod_rows(rows)
            audits = [entry for item in stored for entry in item.payload[1]]
            if audits:
                _insert_audit_rows(audits)
    except IntegrityError:
        if len(batch) > 1 and not connection.in_atomic_block:
            for item in batch:
                _commit_pod_creates(cluster_id, writer, [item])
            return
        err = ValidationFailed({"metadata.name": ["a pod with this name or uid already exists"]})
    except Exception as exc:   # the database's: every call of the group fails with it
        err = exc
    else:
        return
    for item in batch:
        item.error = err


# -- reading --------------------------------------------------------------------------------------------
def current_rv(cluster_id: int) -> int:
    return StoreCounter.objects.filter(cluster_id=cluster_id).values_list("resource_version", flat=True).first() or 0


def pod_count(cluster_id: int) -> int:
    """How many pods the cluster holds (StoreCounter.pods, kept by the database)."""
    return StoreCounter.objects.filter(cluster_id=cluster_id).values_list("pods", flat=True).first() or 0


def scenario_objects(cluster_id: int) -> dict:
    """The cluster's objects other than nodes, pods and events, as scenario arrays (SimulatedCluster's input)."""
    arrays = {kind: array for array, kind in ARRAYS.items()}
    out = {}
    for kind, raw in (StoredObject.objects.filter(cluster_id=cluster_id, kind__in=arrays).order_by("id")
                      .values_list("kind", "raw")):
        out.setdefault(arrays[kind], []).append(raw)
    return out


def other_objects(cluster_id: int, kinds) -> list:
    """(kind, raw) of the StoredObjects of ``kinds``."""
    return list(StoredObject.objects.filter(cluster_id=cluster_id, kind__in=kinds).order_by("id")
                .values_list("kind", "raw"))


def changes_since(cluster_id: int, rv: int, limit: int = CHANGES_PER_READ, skip_writer: str = "") -> list:
    """The logged changes after ``rv``, oldest first (at most ``limit``), without those of ``skip_writer`` (a
    loop's own); Compacted when the log no longer reaches back to ``rv``. With ``skip_writer`` the last row may be
    (rv, None, ...): how far the log was read."""
    changes = StoreChange.objects.filter(cluster_id=cluster_id, rv__gt=rv).order_by("rv")
    if skip_writer:
        # the loop's own changes are not sent, only how far the log reaches (to move its resourceVersion on)
        newest = changes.values_list("rv", flat=True).last()
        rows = list(changes.exclude(writer=skip_writer).values_list("rv", "kind", "type", "key", "raw")[:limit])
        if newest is not None and len(rows) < limit and (not rows or rows[-1][0] < newest):
            rows.append((newest, None, None, None, None))
    else:
        rows = list(changes.values_list("rv", "kind", "type", "key", "raw")[:limit])
    if rows and rows[0][0] > rv + 1:
        oldest = StoreChange.objects.filter(cluster_id=cluster_id).aggregate(m=Min("rv"))["m"]
        # a gap: bindings of pods deleted meanwhile leave some, pruning others
        if oldest is not None and oldest > rv + 1 and Cluster.objects.filter(pk=cluster_id,
                                                                              compacted_rv__gt=rv).exists():
            raise Compacted(rv)
    return rows


def prune_changes(cluster_id: int, keep: int) -> int:
    """Keep the newest ``keep`` changes of the cluster's log (a watch or follower from before gets Compacted)."""
    edge = (StoreChange.objects.filter(cluster_id=cluster_id).order_by("-rv").values_list("rv", flat=True)
            [keep:keep + 1])
    if not edge:
        return 0
    n = StoreChange.objects.filter(cluster_id=cluster_id, rv__lte=edge[0]).delete()[0]
    Cluster.objects.filter(pk=cluster_id).update(compacted_rv=edge[0])
    return n
