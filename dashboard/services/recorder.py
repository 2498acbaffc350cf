"""The recorder: a TraceSink that writes cycles, events, bindings and pod queue state in batches.

``emit`` only appends to an in-memory buffer; a background thread writes batches with bulk inserts, each
batch in one transaction, in the order the records were made. A binding is therefore never committed
before the cycle that decided it (nor a shadow decision before the shadow's cycle). When the database is
unreachable the thread keeps the batch, backs off and retries; records made meanwhile wait in the buffer. The
buffer is bounded for cycles, events and shadow decisions (``max_buffer``); what does not fit is dropped and counted (``overflow``, also in /metrics). Bindings,
deletions and pod states are never dropped: they are small, and pod states are coalesced per pod.

Each batch is a write of the cluster's store (``objectstore.writing``: the cluster row locked before any of its
nodes, pods or events is written, as every writer of a cluster's rows does, so they never deadlock; the batch's
cycles go in before it, in the same transaction): bindings, deletions and events get resourceVersions and
enter the change log that the Kubernetes API's watches follow. A binding also writes what the simulated kubelet
reports (``Cluster.kubelet``: phase Running, Ready conditions, hostIP, podIP, startTime). Fencing: with ``fence`` set (the token of the loop's cluster lock), the batch then checks that
``Cluster.runner`` is still that token. A loop that lost its lock (it stalled past the TTL and another worker claimed the cluster and rebuilt it from the database) therefore commits
nothing more: its batch is dropped (``fenced``) and ``deposed`` is set, so no pod is bound twice.

On PostgreSQL a batch of at least ``fork_cycles`` cycles is encoded and written by a child process forked for it
(``_write_forked``): the child sees the batch's traces as they were at the fork, without copying them, and the
encoding and the database driver's work then take no time from the scheduling thread's GIL. The child writes
exactly what the thread would (the same ``_write_here``, in its own connection and transaction) and reports
how it went (the cycles' summaries for ``on_commit``, or the error) through a pipe. While the child lives, each
page the scheduling process writes is copied: under load such a batch is taken when its oldest record is
``fork_spacing`` seconds old or once the loop goes quiet (``_space_forks``), not every ``flush_interval``.
Smaller batches (a loop scheduling a few pods a second) are written by the thread, where a fork and a new
connection would cost more than they save; so is a batch that a flush waits for (whoever flushes waits, so the
GIL is free).
"""
from __future__ import annotations

import gc
import logging
import os
import pickle
import signal
import threading
import time
from collections import deque
from datetime import datetime, timezone

import orjson
import psycopg
from django.db import connection, connections, models, transaction
from django.db.utils import DatabaseError, IntegrityError, InterfaceError

from scheduler_core.trace import TraceSink

from ..fields import PackedJSONField
from ..packing import PACK_OPTIONS
from ..models import Node, NodeList, Pod, QueueSnapshot, SchedulingCycle, SchedulingEvent, ShadowDecision
from . import admitted, kubeversions, metrics, objectstore
from .tracecodec import NodeLists, trace_fields

log = logging.getLogger("dashboard.recorder")
HOLD_FOR_BINDING_SECONDS = 0.5
HELD_POLL_SECONDS = 0.005   # how often a flush looks again for the binding of a held cycle

CYCLE, EVENT, BIND, DELETE, SNAPSHOT, SHADOW = "cycle", "event", "bind", "delete", "snapshot", "shadow"
STATUS, OBJECT, OBJECT_DELETED = "status", "object", "object-deleted"
ACTIONS = {"Scheduled": "Binding", "FailedScheduling": "Scheduling", "Preempted": "Preempting",
           "ManualBinding": "Binding"}   # the event's action, as kube's scheduler names it
BOUNDED = (CYCLE, EVENT, SHADOW)


def _committed_event(payload) -> dict:
    """What ``on_commit`` receives of a written event: the recorded event with ``key``, the namespace/name of its
    v1 Event (a later count of a series has its first Event's key, so a page updates that Event's row)."""
    return dict(payload[0], key=SchedulingEvent.key_of(payload[1]))


def _first_line(err) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


class _Emitted:
    """A queued CycleTrace with its seq and what the caller overrides (``attempt``, ``result``, ``error``,
    ``suggestions`` and ``suggestions_basis``, the attempt they were computed for when it is another cluster
    state; ``result`` other than "scheduled" clears the node). After it is encoded, ``summary`` is
    what ``on_commit`` receives (seq, pod, result, bound_node, error, message, attempt, durations_ms)."""

    __slots__ = ("seq", "trace", "overrides", "summary")

    def __init__(self, seq: int, trace, overrides: dict):
        self.seq = seq
        self.trace = trace
        self.overrides = overrides
        self.summary = None

    def encode(self, node_lists=None) -> dict:
        """The cycle row's field values (tracecodec.trace_fields with the overrides, ``node_lists`` for the
        column form); sets ``summary``."""
        tr = self.trace
        over = self.overrides
        suggestions = over.get("suggestions") if over else None
        try:
            row = trace_fields(tr, node_lists, suggestions)
        except Exception:
            if node_lists is None:
                raise
            # a bug in the column form must not cost the cycle (nor stop the writer): the row form needs no list
            log.exception("cycle %s of %s: the column form failed; stored in the row form", self.seq, tr.pod.key)
            row = trace_fields(tr, None, suggestions)
        error = tr.error
        if over:
            if suggestions and over.get("suggestions_basis"):
                row["matrix"]["suggestions_basis"] = over["suggestions_basis"]
            if over.get("attempt"):
                row["attempt"] = over["attempt"]
            if over.get("result"):
                row["result"] = over["result"]
                if over["result"] != "scheduled":
                    row["node"] = ""
            if over.get("error"):
                error = row["message"] = row["matrix"]["error"] = over["error"]
        self.summary = {"seq": self.seq, "pod": tr.pod.key, "result": row["result"], "bound_node": row["node"] or None,
                        "error": error, "message": tr.message, "attempt": row["attempt"],
                        "durations_ms": row["durations"]}
        return row


class Deposed(Exception):
    """Another loop has claimed the cluster: this recorder's writes are refused."""


def _now():
    return datetime.now(timezone.utc)


class Recorder(TraceSink):
    """Batched, non-blocking writer of one cluster's scheduling history."""

    def __init__(self, cluster, *, first_seq: int = 1, batch_size: int = 500, max_buffer: int = 100_000,
                 flush_interval: float = 0.25, retry_max: float = 5.0, on_commit=None, observe=True,
                 fence: str | None = None, bindings: bool = True, fork_cycles: int = 32, fork_spacing: float = 1.0):
        self.cluster_id = cluster.id
        self.cluster_name = cluster.name
        self.kubelet = getattr(cluster, "kubelet", True)
        self.clears_nominated = admitted.binding_clears_nominated_node_name(kubeversions.cluster_features(cluster))
        self.node_lists = NodeLists()   # used by the writer thread only
        self.series = objectstore.EventSeries()   # the writer thread's too
        self.batch_size = batch_size
        self.max_buffer = max_buffer
        self.flush_interval = flush_interval
        self.retry_max = retry_max
        self.on_commit = on_commit          # callable(list of committed (kind, payload)) for broadcasts
        self.observe = observe
        self.fence = fence
        self.bindings = bindings            # a chosen node's binding follows its cycle (held for it, see _run)
        self.fork_cycles = fork_cycles      # batches with this many cycles are written by a child (0: never)
        self.fork_spacing = fork_spacing    # seconds at least between two forks (see _space_forks)
        self.forked = 0                     # batches written by a child process
        self.deposed = False
        self.fenced = 0                     # records dropped because another loop claimed the cluster
        self.high_water = 0                 # most records waiting at once (e.g. during an outage)
        self.next_seq = first_seq
        self.overflow = 0
        self.written_cycles = 0
        self.failures = 0
        self.rejected = 0                   # records of batches the database refused as invalid
        self.last_error = ""
        self._buf = deque()                 # (kind, payload, monotonic time)
        self._buffered_cycles = 0           # cycles in _buf
        self._last_cycle = 0.0              # monotonic time of the latest cycle recorded
        self._bounded = 0                   # cycles and events in _buf and in flight
        self._inflight = 0                  # records taken by the writer, not yet committed
        self._states = {}                   # pod uid -> {field: value}, coalesced
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._flushing = False              # a flush waits: write what is buffered without waiting for more
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"recorder-{cluster.name}", daemon=True)
        self._thread.start()

    # -- producer side (the scheduling thread) ------------------------------------------------------
    def emit(self, trace) -> None:
        """TraceSink: queue the CycleTrace itself (the writer thread encodes it); never blocks on the
        database. The trace must not change after it is emitted (the scheduling loop emits it last)."""
        self.record_trace(trace)

    def record_trace(self, trace, **overrides) -> int | None:
        """``emit`` with field overrides (see ``_Emitted``); returns the cycle's seq, or None if the buffer
        was full (counted as overflow)."""
        with self._lock:
            seq = self._claim_seq()
            if seq is None:
                return None
            self._append(CYCLE, _Emitted(seq, trace, overrides))
        if self.observe:
            ft = trace.filter_table
            filter_plugins = ft.plugins if ft is not None else next(iter(trace.filter.values()), ())
            metrics.observe_cycle(self.cluster_name, trace.profile, overrides.get("result") or trace.result,
                                  trace.durations, filter_plugins)
        return seq

    def _claim_seq(self) -> int | None:
        """The next cycle's seq, or None (counted as overflow) when the buffer is full. Holds the lock."""
        if self._bounded >= self.max_buffer:
            self.overflow += 1
            metrics.RECORDER_OVERFLOW.labels(self.cluster_name).inc()
            return None
        seq = self.next_seq
        self.next_seq += 1
        return seq

    def record_event(self, reason: str, message: str, pod=None, node: str = "", type_: str = "Normal",
                     cycle_seq=None, detail: str = "") -> None:
        """An event; ``detail``: what only editors of the cluster and admins read in place of ``message``."""
        ev = {"time": _now(), "type": type_, "reason": reason, "message": message, "detail": detail, "node": node,
              "cycle_seq": cycle_seq, "pod_uid": "", "pod_namespace": "", "pod_name": ""}
        if pod is not None:
            ev.update(pod_uid=pod.uid, pod_namespace=pod.namespace, pod_name=pod.name)
        with self._lock:
            if self._bounded >= self.max_buffer:
                self.overflow += 1
                return
            self._append(EVENT, (ev, pod))   # its v1 Event is made by the writer thread

    def record_binding(self, uid: str, node: str, cycle_seq=None, attempts: int | None = 1) -> None:
        """A pod bound to ``node``; ``attempts`` None (a binding no cycle of this loop decided, e.g. a manual
        one) keeps the pod's attempts and latest cycle as they are."""
        with self._lock:
            self._states.pop(uid, None)
            self._append(BIND, (uid, node, cycle_seq, attempts, _now()))

    def record_shadow(self, decision: dict) -> None:
        """A shadow-mode comparison (ShadowDecision fields), committed with the shadow's cycle before it."""
        with self._lock:
            if self._bounded >= self.max_buffer:
                self.overflow += 1
                return
            self._append(SHADOW, dict(decision, time=_now()))

    def record_deletion(self, uid: str) -> None:
        with self._lock:
            self._states.pop(uid, None)
            self._append(DELETE, uid)

    def record_pod_status(self, uid: str, status: dict) -> None:
        """A pending pod's status as the scheduler patched it (conditions, nominatedNodeName,
        extendedResourceClaimStatus)."""
        with self._lock:
            self._append(STATUS, (uid, status))

    def record_object(self, kind: str, raw: dict) -> None:
        """An object the scheduler's plugins or the PV controller wrote (a PV, a PVC, a ResourceClaim)."""
        with self._lock:
            self._append(OBJECT, (kind, raw))

    def record_object_deletion(self, kind: str, raw: dict) -> None:
        """An object the scheduler's plugins deleted (a stale extended-resource ResourceClaim)."""
        with self._lock:
            self._append(OBJECT_DELETED, (kind, raw))

    def record_pod_state(self, uid: str, **fields) -> None:
        """Latest queue, attempts, reason, plugins, last_cycle (and kube_message) of a pending pod (coalesced)."""
        with self._lock:
            self._states.setdefault(uid, {}).update(fields)
            self._idle.clear()

    def record_queue_snapshot(self, **counts) -> None:
        with self._lock:
            self._append(SNAPSHOT, dict(counts, time=_now()))

    def _append(self, kind, payload):
        now = time.monotonic()
        self._buf.append((kind, payload, now))
        if kind == CYCLE:
            self._buffered_cycles += 1
            self._last_cycle = now
        if len(self._buf) > self.high_water:
            self.high_water = len(self._buf)
        if kind in BOUNDED:
            self._bounded += 1
        self._idle.clear()
        if len(self._buf) >= self.batch_size:
            self._wake.set()

    # -- status ---------------------------------------------------------------------------------
    @property
    def buffered(self) -> int:
        """Records not yet committed (waiting or in flight)."""
        return len(self._buf) + self._inflight + len(self._states)

    def lag(self) -> float:
        with self._lock:
            return time.monotonic() - self._buf[0][2] if self._buf else 0.0

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything queued so far is written; False on timeout."""
        with self._lock:
            self._flushing = True
        self._wake.set()
        return self._idle.wait(timeout)

    def close(self, timeout: float = 30.0) -> bool:
        """Flush and stop the writer thread."""
        ok = self.flush(timeout)
        self._stop = True
        self._wake.set()
        self._thread.join(timeout=5)
        return ok

    # -- writer thread --------------------------------------------------------------------------
    def _run(self):
        delay = 0.0
        batch, states = [], {}
        held = False   # the last turn put back a cycle that awaits its binding
        try:
            while True:
                if not batch and not states:
                    with self._lock:   # the buffer, not the event: a wake set before the last clear is not lost
                        flushing = self._flushing
                        ready = self._stop or len(self._buf) >= self.batch_size or (flushing and not held)
                    if not ready:
                        self._wake.wait(HELD_POLL_SECONDS if held and flushing else self.flush_interval)
                        self._space_forks()
                    self._wake.clear()
                    held = False
                    with self._lock:
                        # A batch ends only before a cycle: a cycle and the binding and events that
                        # follow it are committed together or not at all.
                        while self._buf and (len(batch) < self.batch_size or self._buf[0][0] != CYCLE):
                            batch.append(self._buf.popleft())
                            if batch[-1][0] == CYCLE:
                                self._buffered_cycles -= 1
                        if batch and self._awaits_binding(batch[-1]):
                            # The buffer ran dry between a cycle that chose a node and its binding (recorded
                            # right after the binding cycle): the cycle waits for it, briefly, so that a worker
                            # killed in between leaves neither (its successor schedules the pod once), never
                            # the cycle alone (its successor would schedule the pod again).
                            self._buf.appendleft(batch.pop())
                            self._buffered_cycles += 1
                            held = True
                        if not self._buf:
                            states, self._states = self._states, {}
                        if not batch and not states:
                            if not self._buf:
                                self._flushing = False
                                self._idle.set()
                                if self._stop:
                                    return
                            continue
                self._inflight = len(batch) + len(states)
                try:
                    self._write(batch, states)
                except Deposed:
                    self.deposed = True
                    self.fenced += len(batch)
                    log.warning("recorder %s: the cluster was claimed by another loop; %d records dropped",
                                self.cluster_name, len(batch))
                    self._release(batch)
                    batch, states = [], {}
                    continue
                except IntegrityError as err:
                    # Retrying cannot help (e.g. the cluster was deleted meanwhile): drop the batch.
                    self.rejected += len(batch)
                    self.last_error = _first_line(err)
                    log.error("recorder %s: batch of %d records rejected: %s", self.cluster_name, len(batch),
                              self.last_error)
                    self._release(batch)
                    batch, states = [], {}
                    continue
                except (DatabaseError, InterfaceError) as err:
                    self.failures += 1
                    self.last_error = _first_line(err)
                    metrics.RECORDER_FAILURES.labels(self.cluster_name).inc()
                    try:
                        connection.close()
                    except (DatabaseError, InterfaceError):
                        pass
                    if self._stop:
                        log.error("recorder %s: closing with %d records unwritten (%s)", self.cluster_name,
                                  self.buffered, self.last_error)
                        return
                    delay = min(self.retry_max, delay * 2 or 0.2)
                    log.warning("recorder %s: write failed (%s); retrying in %.1fs with %d records buffered",
                                self.cluster_name, self.last_error, delay, self.buffered)
                    time.sleep(delay)
                    continue
                except Exception as err:
                    # A bug, not the database: the writer must not die with the batch (its loop would go on
                    # scheduling with nothing stored). Logged with its traceback, retried like a failed write.
                    self.failures += 1
                    self.last_error = _first_line(err)
                    log.exception("recorder %s: writing a batch of %d records failed", self.cluster_name, len(batch))
                    if self._stop:
                        return
                    delay = min(self.retry_max, delay * 2 or 0.2)
                    time.sleep(delay)
                    continue
                if self.failures and delay:
                    log.warning("recorder %s: writing again after %d failed attempts; buffer high-water mark %d "
                                "records", self.cluster_name, self.failures, self.high_water)
                delay = 0.0
                self._release(batch)
                ncycles = sum(1 for kind, _p, _t in batch if kind == CYCLE)
                self.written_cycles += ncycles
                metrics.RECORDER_WRITTEN.labels(self.cluster_name).inc(ncycles)
                metrics.RECORDER_BUFFER.labels(self.cluster_name).set(self.buffered)
                metrics.RECORDER_LAG.labels(self.cluster_name).set(self.lag())
                if self.on_commit is not None and batch:
                    try:
                        self.on_commit([(k, p.summary if k == CYCLE else _committed_event(p) if k == EVENT else p)
                                        for k, p, _t in batch])
                    except Exception:  # a broadcast problem must never stop the recorder
                        log.exception("recorder %s: on_commit failed", self.cluster_name)
                batch, states = [], {}
        finally:
            connection.close()

    def _make_events(self, batch) -> None:
        """Each recorded event of the batch made into its v1 Event, once (a batch is written again after a failed
        write): a new Event, or a later count of an earlier one's series (``objectstore.EventSeries``)."""
        for i, (kind, payload, t) in enumerate(batch):
            if kind == EVENT and len(payload) == 2:
                ev, pod = payload
                raw, repeat = self.series.observe(self._event_object(ev, pod), ev["time"].timestamp())
                batch[i] = (kind, (ev, raw, repeat), t)

    def _event_object(self, ev: dict, pod) -> dict:
        """The v1 Event the Kubernetes API serves for a recorded event (as kube's scheduler reports it)."""
        if pod is not None:
            regarding, prefix, controller = objectstore.pod_reference(pod.raw), pod.name, pod.scheduler_name
        else:
            node = ev["node"]
            regarding = {"kind": "Node" if node else "Cluster", "apiVersion": "v1", "name": node or self.cluster_name}
            prefix, controller = regarding["name"], "default-scheduler"
        return objectstore.event_object(prefix, regarding, ev["type"], ev["reason"],
                                        ACTIONS.get(ev["reason"], ev["reason"]), ev["message"],
                                        controller or "default-scheduler", ev["time"].timestamp())

    def _space_forks(self) -> None:
        """Under load, at most one forked batch every ``fork_spacing`` seconds: while the buffer holds a batch that a
        child would write, wait until its oldest record is ``fork_spacing`` seconds old, or until the loop is quiet
        (no cycle recorded for ``flush_interval``: it waits out a backoff, or has nothing left to schedule), or
        until a flush or stop asks, or the buffer reaches ``batch_size``; the batch before took every record older
        than that. A fork costs the scheduling process a copy of every page it then writes while the child lives
        (the module docstring), about as much at 300 cycles as at 3,000, and next to nothing while it waits; a
        loop recording a few cycles a second is written by the thread every ``flush_interval`` as before."""
        if not self.fork_cycles or connection.vendor != "postgresql":
            return
        while True:
            self._wake.clear()   # before the test: a flush's or stop's wake-up after it is not lost
            with self._lock:
                if (self._stop or self._flushing or len(self._buf) >= self.batch_size
                        or self._buffered_cycles < self.fork_cycles):
                    return
                rest = (min(self._buf[0][2] + self.fork_spacing, self._last_cycle + self.flush_interval)
                        - time.monotonic())
            if rest <= 0:
                return
            self._wake.wait(rest)

    def _awaits_binding(self, record) -> bool:
        """A cycle that chose a node, recorded less than HOLD_FOR_BINDING_SECONDS ago, while the writer runs on."""
        kind, payload, t = record
        return (kind == CYCLE and self.bindings and not self._stop and bool(payload.trace.chosen)
                and time.monotonic() - t < HOLD_FOR_BINDING_SECONDS)

    def _release(self, batch):
        done = sum(1 for kind, _p, _t in batch if kind in BOUNDED)
        with self._lock:
            self._bounded -= done
        self._inflight = 0

    def _write(self, batch, states):
        """A batch of ``fork_cycles`` cycles or more goes to a child, unless a flush waits for it: whoever flushes
        waits (the Runner's loop thread, for a reload or a manual binding; a stopping loop), so the GIL is free,
        and the thread's own connection spares the child's fork, connection and temporary tables."""
        self._make_events(batch)
        ncycles = sum(1 for kind, _p, _t in batch if kind == CYCLE)
        if (self.fork_cycles and ncycles >= self.fork_cycles and connection.vendor == "postgresql"
                and not self._flushing):
            self._write_forked(batch, states)
        else:
            self._write_here(batch, states)

    def _write_forked(self, batch, states):
        """``_write_here`` in a child process forked for this batch; raises what it raised there (Deposed,
        IntegrityError, DatabaseError, or RuntimeError for anything else and for a child that died)."""
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError as err:   # no memory or process left for a child: the thread writes the batch
            os.close(read_fd)
            os.close(write_fd)
            log.warning("recorder %s: cannot fork a writer (%s); writing in the thread", self.cluster_name, err)
            return self._write_here(batch, states)
        if pid == 0:
            os.close(read_fd)
            _child_write(self, batch, states, write_fd)   # never returns
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            report = pipe.read()
        _pid, status = os.waitpid(pid, 0)
        if not report:
            raise RuntimeError(f"the writer process died ({_wait_status(status)})")
        outcome, detail = pickle.loads(report)
        if outcome == "ok":
            for payload, summary in zip((p for kind, p, _t in batch if kind == CYCLE), detail):
                payload.summary = summary
            self.forked += 1
            return
        raise {"deposed": Deposed, "integrity": IntegrityError, "database": DatabaseError}.get(
            outcome, RuntimeError)(detail)

    def _write_here(self, batch, states):
        cid = self.cluster_id
        cycles, events, repeats, snaps, shadows, deleted = [], [], [], [], [], []
        bindings = {}   # pod uid -> (node, cycle seq, attempts, bound at): what its bindings leave
        statuses, objects = {}, []
        for kind, payload, _t in batch:
            if kind == CYCLE:
                cycles.append(dict(payload.encode(self.node_lists), cluster_id=cid, seq=payload.seq))
            elif kind == EVENT:
                (repeats if payload[2] else events).append(payload[:2])
            elif kind == SNAPSHOT:
                snaps.append(QueueSnapshot(cluster_id=cid, **payload))
            elif kind == SHADOW:
                shadows.append(ShadowDecision(cluster_id=cid, **payload))
            elif kind == BIND:
                uid, node, seq, attempts, when = payload
                earlier = bindings.get(uid)
                if attempts is None and earlier is not None:   # keeps what the earlier binding decided
                    seq, attempts = earlier[1], earlier[2]
                bindings[uid] = (node, seq, attempts, when)
            elif kind == STATUS:
                statuses[payload[0]] = payload[1]
            elif kind in (OBJECT, OBJECT_DELETED):
                objects.append((kind == OBJECT_DELETED, *payload))
            else:
                deleted.append(payload)
        # One transaction: nobody sees the order of the statements inside it, so the cycle rows are inserted
        # first and the bindings written after them in one statement. The rows that only refer to the cluster
        # (cycles, queue snapshots, shadow decisions: their foreign keys take FOR KEY SHARE, which the cluster's
        # other writers do not wait for) go in before the cluster's row lock, which the store's writes take
        # (``objectstore.writing``), so that the lock is held only for those. The recorder never creates pod
        # rows, so a deleted pod's row is gone at the end whether its binding came before or after its
        # deletion: the deletions go last.
        with transaction.atomic():
            store_node_lists(self.node_lists.take_used())
            if cycles:
                insert_cycles(cycles)
            if snaps:
                QueueSnapshot.objects.bulk_create(snaps)
            if shadows:
                ShadowDecision.objects.bulk_create(shadows)
            with objectstore.writing(cid, self.fence or "") as w:
                if self.fence is not None and w.runner != self.fence:
                    raise Deposed()
                if events:
                    objectstore.insert_events(w, events)
                if repeats:
                    objectstore.update_event_series(w, repeats)
                if statuses:
                    update_statuses(w, statuses)
                for gone, kind, raw in objects:
                    (objectstore.delete_object if gone else objectstore.put_object)(w, kind, raw)
                if bindings:
                    update_bindings(w, bindings, self.kubelet, self.clears_nominated)
                if deleted:
                    gone = Pod.objects.filter(cluster_id=cid, uid__in=deleted)
                    objectstore.deleted(w, "pods", list(gone.values_list("raw", flat=True)))
                    gone.delete()
                if states:
                    update_pod_states(cid, states)


def _child_write(recorder: Recorder, batch, states, report_fd: int) -> None:
    """In a child forked by ``Recorder._write_forked``: write the batch in a connection of its own, report the
    outcome through ``report_fd`` and exit (``os._exit``: none of the parent's atexit handlers, buffers or
    sockets is touched)."""
    code = 1
    try:
        # the worker's shutdown signals are for the worker: the child ends its batch (a Ctrl-C in a terminal
        # reaches the whole process group), and the parent, which waits for it, stops after that
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        gc.disable()   # a collection would touch (and copy) the whole inherited heap
        for conn in connections.all(initialized_only=True):
            conn.connection = None   # the parent's session: dropped, never closed (psycopg does not end it here)
        try:
            recorder._write_here(batch, states)
            report = ("ok", [p.summary for kind, p, _t in batch if kind == CYCLE])
        except Deposed:
            report = ("deposed", "")
        except IntegrityError as err:
            report = ("integrity", _first_line(err))
        except (DatabaseError, InterfaceError) as err:
            report = ("database", _first_line(err))
        except Exception as err:
            log.exception("recorder %s: the writer process failed on a batch of %d records", recorder.cluster_name,
                          len(batch))
            report = ("error", _first_line(err))
        finally:
            for conn in connections.all(initialized_only=True):
                try:
                    conn.close()
                except (DatabaseError, InterfaceError):
                    pass
        data = pickle.dumps(report)
        while data:
            data = data[os.write(report_fd, data):]
        code = 0
    finally:
        os._exit(code)


def _wait_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def store_node_lists(used: dict) -> None:
    """Store the node lists that rows written now refer to ({key: packed names}, tracecodec.NodeLists), or mark
    them used now if they are stored already."""
    if used:
        now = _now()
        NodeList.objects.bulk_create([NodeList(key=key, names=packed, last_used=now) for key, packed in used.items()],
                                     update_conflicts=True, unique_fields=["key"], update_fields=["last_used"])


def update_statuses(w, statuses: dict) -> None:
    """The status patches of pending pods (pod uid -> status), stored and logged (a pod bound or deleted
    meanwhile keeps what its binding or deletion left)."""
    rows = []
    for uid, raw in Pod.objects.filter(cluster_id=w.cluster_id, uid__in=list(statuses), node_name="") \
            .values_list("uid", "raw"):
        new = dict(raw, status=statuses[uid])
        rv = w.log("pods", objectstore.MODIFIED, new)
        rows.append((uid, rv, objectstore.with_rv(new, rv)))
    if connection.vendor != "postgresql":
        for uid, rv, raw in rows:
            Pod.objects.filter(cluster_id=w.cluster_id, uid=uid).update(raw=raw, rv=rv)
        return
    if rows:   # PostgreSQL: one UPDATE for the batch, its rows as one JSON document
        with connection.cursor() as cur:
            cur.execute(f'UPDATE "{Pod._meta.db_table}" AS p SET raw = v.raw, rv = v.rv '
                        "FROM jsonb_to_recordset(%s::jsonb) AS v(uid text, rv bigint, raw jsonb) "
                        "WHERE p.cluster_id = %s AND p.uid = v.uid",
                        [orjson.dumps([{"uid": uid, "rv": rv, "raw": raw} for uid, rv, raw in rows]).decode(),
                         w.cluster_id])


def update_bindings(w, bindings: dict, kubelet: bool, clears_nominated: bool) -> None:
    """Mark pods bound, in the store ``w``: ``bindings`` maps a pod uid to (node, cycle seq, attempts, bound
    at); attempts None keeps the pod's attempts and latest cycle. Each pod's object gets spec.nodeName, the status
    its binding (status.nominatedNodeName cleared if ``clears_nominated``, see
    ``admitted.binding_clears_nominated_node_name``) and, with ``kubelet``, the simulated kubelet give it and a
    resourceVersion; the changes are
    logged. PostgreSQL: COPY into a temporary table, then the change log's rows and one UPDATE ... FROM it.
    Elsewhere: one UPDATE per pod."""
    cluster_id = w.cluster_id
    postgresql = connection.vendor == "postgresql"
    raws = dict(Pod.objects.filter(cluster_id=cluster_id, uid__in=list(bindings)).values_list("uid", "raw"))
    names = {b[0] for uid, b in bindings.items() if uid in raws}
    # the nodes' addresses and pod CIDRs, not their whole objects: a node's InternalIP is its pods' hostIP, their
    # IPs are in its pod CIDRs
    nodes = {name: {"status": {"addresses": addresses}, "spec": {"podCIDRs": cidrs, "podCIDR": cidr}}
             for name, addresses, cidrs, cidr in Node.objects.filter(cluster_id=cluster_id, name__in=names)
             .values_list("name", "raw__status__addresses", "raw__spec__podCIDRs", "raw__spec__podCIDR")
             } if kubelet else {}
    rows = []
    for uid, (node, seq, attempts, when) in bindings.items():
        raw = raws.get(uid)
        if raw is None:
            continue   # deleted meanwhile
        t = when.timestamp()
        if clears_nominated:
            raw = dict(raw, status={k: v for k, v in (raw.get("status") or {}).items() if k != "nominatedNodeName"})
        status = (objectstore.running_status(raw, nodes.get(node), node, t) if kubelet
                  else objectstore.scheduled_status(raw, t))
        new = dict(raw, spec=dict(raw.get("spec") or {}, nodeName=node), status=status)
        if not postgresql:
            rv = w.log("pods", objectstore.MODIFIED, new)
            decided = {} if attempts is None else {"last_cycle": seq, "attempts": attempts}
            Pod.objects.filter(cluster_id=cluster_id, uid=uid).update(
                node_name=node, queue=Pod.BOUND, bound_at=when, reason="", plugins="", rv=rv,
                raw=objectstore.with_rv(new, rv), **decided)
            continue
        rv = w.next_rv()
        rows.append((uid, objectstore.key_of("pods", new), node, seq, attempts, when, rv,
                     orjson.dumps(objectstore.with_rv(new, rv)).decode()))
    if not postgresql:
        return
    with connection.cursor() as cur:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS _binding_load (uid text, key text, node text, seq bigint, "
                    "attempts integer, bound_at timestamptz, rv bigint, raw jsonb) ON COMMIT DELETE ROWS")
        with cur.cursor.copy("COPY _binding_load (uid, key, node, seq, attempts, bound_at, rv, raw) FROM STDIN") \
                as copy:
            for row in rows:
                copy.write_row(row)
        w.log_loaded("pods", objectstore.MODIFIED, "_binding_load")
        cur.execute(f'UPDATE "{Pod._meta.db_table}" AS p SET node_name = v.node, queue = %s, '
                    "bound_at = v.bound_at, reason = '', plugins = '', rv = v.rv, raw = v.raw, "
                    "last_cycle = CASE WHEN v.attempts IS NULL THEN p.last_cycle ELSE v.seq END, "
                    "attempts = COALESCE(v.attempts, p.attempts) "
                    "FROM _binding_load AS v WHERE p.cluster_id = %s AND p.uid = v.uid", [Pod.BOUND, cluster_id])


STATE_TYPES = {"queue": "text", "attempts": "integer", "reason": "text", "plugins": "text", "last_cycle": "bigint",
               "kube_message": "text"}


def update_pod_states(cluster_id: int, states: dict) -> None:
    """Store pending pods' queue states (pod uid -> the Pod fields of STATE_TYPES to set; a bound pod keeps its
    own). PostgreSQL: one UPDATE per set of fields, its rows as one JSON document as in ``update_statuses`` (a
    Preemption batch holds hundreds of states, and an UPDATE each held the cluster's lock for up to a second);
    elsewhere one UPDATE per pod."""
    if connection.vendor != "postgresql":
        for uid, fields in states.items():
            Pod.objects.filter(cluster_id=cluster_id, uid=uid, node_name="").update(**fields)
        return
    by_fields = {}
    for uid, fields in states.items():
        by_fields.setdefault(tuple(sorted(fields)), []).append(dict(fields, uid=uid))
    with connection.cursor() as cur:
        for names, rows in by_fields.items():
            cur.execute(f'UPDATE "{Pod._meta.db_table}" AS p SET '
                        + ", ".join(f'"{n}" = v."{n}"' for n in names)
                        + " FROM jsonb_to_recordset(%s::jsonb) AS v(uid text, "
                        + ", ".join(f'"{n}" {STATE_TYPES[n]}' for n in names)
                        + ") WHERE p.cluster_id = %s AND p.uid = v.uid AND p.node_name = ''",
                        [orjson.dumps(rows).decode(), cluster_id])


CYCLE_FIELDS = [f for f in SchedulingCycle._meta.concrete_fields if f.column != "id"]
CYCLE_COLUMNS = [f.column for f in CYCLE_FIELDS]


def _copy_value(field):
    """How one column's value is written in a COPY row: JSON as text, packed JSON as bytes, others as is."""
    if isinstance(field, models.JSONField):
        return lambda v: None if v is None else orjson.dumps(v, option=PACK_OPTIONS).decode()
    if isinstance(field, PackedJSONField):
        return field.get_prep_value
    return None


COPY_VALUES = [(f.column, _copy_value(f)) for f in CYCLE_FIELDS]


def insert_cycles(rows: list) -> None:
    """Insert cycle rows (dicts of column values); a row whose (cluster, seq) exists is skipped, so a
    batch retried after a lost commit acknowledgement is not duplicated.

    PostgreSQL: COPY straight into the table, in a savepoint (several times faster than a multi-row INSERT with
    thousands of bound JSON parameters). When a row exists already (a retried batch), the savepoint is rolled
    back and the rows go through a temporary table and one INSERT ... ON CONFLICT DO NOTHING. Elsewhere:
    bulk_create.
    """
    if connection.vendor != "postgresql":
        SchedulingCycle.objects.bulk_create([SchedulingCycle(**r) for r in rows], ignore_conflicts=True)
        return
    cols = ", ".join(f'"{c}"' for c in CYCLE_COLUMNS)
    table = SchedulingCycle._meta.db_table
    values = [[r[c] if to_copy is None else to_copy(r[c]) for c, to_copy in COPY_VALUES] for r in rows]
    with connection.cursor() as cur:
        try:
            with transaction.atomic():
                _copy(cur, f'"{table}"', cols, values)
            return
        except psycopg.errors.UniqueViolation:
            pass
        cur.execute(f'CREATE TEMP TABLE IF NOT EXISTS _cycle_load ON COMMIT DELETE ROWS AS '
                    f'SELECT {cols} FROM "{table}" WITH NO DATA')
        _copy(cur, "_cycle_load", cols, values)
        cur.execute(f'INSERT INTO "{table}" ({cols}) SELECT {cols} FROM _cycle_load '
                    f'ON CONFLICT ("cluster_id", "seq") DO NOTHING')


def _copy(cur, table: str, cols: str, values: list) -> None:
    with cur.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
        for row in values:
            copy.write_row(row)
