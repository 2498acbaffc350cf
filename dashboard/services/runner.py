"""The loop that drives one cluster: commands, workload, scheduling cycles, heartbeats, broadcasts.

Only the holder of the cluster's lock runs it. The lock is renewed every third of its TTL; a loop that
loses it (another worker took over after a stall) stops at once without writing further decisions.
A new holder first claims the cluster row (``Cluster.runner`` = its lock token) and only then reads the
state it rebuilds from; the recorder commits a batch only while that claim is still its own (fencing),
so the late writes of a stalled, deposed loop can never bind a pod a second time.

A simulated cluster is driven by ``engine.Engine``, a real one by ``kubeengine.KubeEngine`` (the KubeCluster code
path of ``scheduler_core.kuberun``): its watch events are pumped every turn, it schedules only while it holds
the profile's leader-election Lease, and a lost lease ends the loop. Changes that only a simulated cluster takes
from the dashboard (nodes, pods, scenarios, manual bindings) are refused for a real one. A real cluster whose
credentials are unusable or whose API server cannot be reached is stopped with one specific error (logged, and a
Warning event of the cluster); the worker goes on.
"""
from __future__ import annotations

import logging
import os
import random
import time
from collections import deque
from datetime import datetime, timezone

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Max
from django.db.utils import DatabaseError, InterfaceError
from redis.exceptions import RedisError

from ..models import Cluster, SchedulingCycle, SchedulingEvent
from . import admitted, control, locks, metrics, objectstore, retention
from .admitted import ValidationFailed
from .broadcast import Broadcaster
from .engine import BindRefused, Engine
from .kubeengine import ClusterUnavailable, KubeEngine
from .objectstore import insert_pods
from .recorder import Recorder
from .workload import WorkloadGenerator

log = logging.getLogger("dashboard.runner")
DB_ERRORS = (DatabaseError, InterfaceError)
BURST_SECONDS = 0.05
BIND_FLUSH_SECONDS = 5.0
COMPACT_SECONDS = 30.0
CHANGE_LOG_KEPT = int(os.environ.get("SCHEDSCOPE_K8S_WATCH_WINDOW", "10000"))
SIMULATED_ONLY_OPS = ("bind",)
# Commands that make an extender call in flight give up (stop, pause, start; reload: an apply; a manual binding).
INTERRUPTING_OPS = frozenset({"state", "reload", "bind"})


def _conf(key):
    return settings.SCHEDSCOPE[key]


def next_seq(cluster_id: int) -> int:
    return (SchedulingCycle.objects.filter(cluster_id=cluster_id).aggregate(m=Max("seq"))["m"] or 0) + 1


_active = set()


def stop_all(timeout: float = 10.0) -> None:
    """Process shutdown: every loop of this process stops (desired states unchanged) and flushes."""
    runners = list(_active)
    for r in runners:
        r.shutdown = True
    end = time.monotonic() + timeout
    while _active and time.monotonic() < end:
        time.sleep(0.05)


class Runner:
    """Runs a cluster while its desired state is running or paused; ``steps`` runs that many cycles and stops."""

    def __init__(self, cluster_id: int, steps: int | None = None, lock=None):
        self.cluster_id = cluster_id
        self.one_shot = steps is not None
        self.pending_steps = steps or 0
        self.lock = lock or locks.cluster_lock(cluster_id)
        self.cycles = 0
        self.failures = 0
        self.needs_reload = False
        self.shutdown = False
        self.redis_down = False
        self.real = False
        self.engine = None
        self.interrupted = False        # an extender call was given up for a waiting command
        self.follow_failed = False      # the store's changes could not be read (the database away)
        self.next_renew = 0.0           # when the lock is renewed next
        self._recent = deque()          # (monotonic time, ms) of recent cycles, for rate and latency

    def run(self) -> bool:
        """Drive the cluster; False if another loop holds it."""
        if not self.lock.acquire():
            return False
        _active.add(self)
        try:
            close_old_connections()
            self._loop()
        except Exception:
            log.exception("scheduler loop of cluster %s failed", self.cluster_id)
            raise
        finally:
            _active.discard(self)
            try:
                self.lock.release()
            except RedisError:
                pass   # Redis away: the lock expires by itself
            connection.close()
        return True

    def _loop(self):
        cluster = Cluster.objects.select_related("profile").filter(pk=self.cluster_id).first()
        if cluster is None:
            log.warning("cluster %s does not exist (any more)", self.cluster_id)
            return
        # Claim before reading: waits for a deposed loop's batch in flight, and fences off the rest.
        Cluster.objects.filter(pk=self.cluster_id).update(runner=self.lock.token, heartbeat=datetime.now(timezone.utc))
        self.state = cluster.desired_state
        self.broadcaster = Broadcaster(cluster.id, _conf("BROADCAST_INTERVAL_SECONDS"))
        self.recorder = Recorder(cluster, first_seq=next_seq(cluster.id), batch_size=_conf("RECORDER_BATCH_SIZE"),
                                 max_buffer=_conf("RECORDER_MAX_BUFFER"),
                                 flush_interval=_conf("RECORDER_FLUSH_SECONDS"),
                                 fork_cycles=_conf("RECORDER_FORK_CYCLES"),
                                 fork_spacing=_conf("RECORDER_FORK_SPACING_SECONDS"),
                                 on_commit=self.broadcaster.committed, fence=self.lock.token)
        self.cluster = cluster
        try:
            self.engine = self._make_engine(cluster)
        except ClusterUnavailable as err:
            self._stop_unavailable(err)
            return
        self.workload_spec = self.workload = None
        self._set_workload(cluster.workload)
        self.version = cluster.version
        self.mode = cluster.mode
        self.kube = (cluster.kube_version, cluster.feature_gates)
        ttl = self.lock.ttl
        self.next_renew = next_snapshot = next_prune = next_sync = next_compact = 0.0
        log.info("cluster %s: scheduler loop started (%s)", cluster.name, self.state)
        try:
            while True:
                now = time.monotonic()
                if now >= self.next_renew or self.recorder.deposed:
                    held = self._renew()
                    if held is False or not self._heartbeat() or self.recorder.deposed:
                        log.warning("cluster %s: lost the lock; stopping", cluster.name)
                        return
                    self.next_renew = now + (ttl / 3 if held else 0.5)
                busy = self.state == Cluster.RUNNING or self.pending_steps > 0
                self.interrupted = False
                try:
                    if self.needs_reload:
                        self._apply({"op": "reload"})
                        self.needs_reload = False
                    for cmd in self._commands(0 if busy else 0.2):
                        self._apply(cmd)
                    if self.shutdown or (self.state == Cluster.STOPPED and self.pending_steps == 0):
                        return
                    if not self.real:
                        self._follow()
                    if self.real:
                        if self.engine.lost_lease:
                            log.error("cluster %s: lost the leader-election lease; stopping", cluster.name)
                            return
                        self.engine.pump()
                    if self.state == Cluster.RUNNING:
                        if self.workload is not None:
                            self._workload_tick()
                        self._burst()
                    elif self.pending_steps > 0:
                        self.pending_steps = 0 if self._cycle() is None else self.pending_steps - 1
                except Exception:
                    # A bug in a plugin, or the database gone, must not leave the cluster undriven:
                    # rebuild the scheduler from the stored state (what was committed) and go on, slowly.
                    self.failures += 1
                    log.exception("cluster %s: scheduling failed (%d so far); reloading from the database",
                                  cluster.name, self.failures)
                    connection.close()
                    self.needs_reload = True
                    time.sleep(min(ttl / 3, 0.25 * 2 ** min(self.failures, 6)))
                    continue
                if self.one_shot and self.pending_steps == 0:
                    return
                if now >= next_sync:
                    self.engine.sync_queue_states()
                    self._sync_replica_sets()
                    next_sync = now + 1.0
                counts = self.engine.queue_counts()
                rate, p50, p99 = self._rates()
                self.broadcaster.queue_state(counts, rate, p50, p99)
                for q in ("active", "backoff", "unschedulable", "gated"):
                    metrics.PENDING_PODS.labels(cluster.name, q).set(counts[q])
                if now >= next_snapshot:
                    self.recorder.record_queue_snapshot(
                        active=counts["active"], backoff=counts["backoff"], unschedulable=counts["unschedulable"],
                        gated=counts["gated"], bound=counts["bound"], cycles_per_second=rate, p50_ms=p50, p99_ms=p99)
                    next_snapshot = now + _conf("QUEUE_SNAPSHOT_SECONDS")
                if now >= next_prune:
                    self._prune()
                    next_prune = now + 600
                if now >= next_compact and not self.real:
                    self._compact()
                    next_compact = now + COMPACT_SECONDS
        finally:
            self.engine.sync_queue_states()
            self._sync_replica_sets()
            self._close_engine()
            self.recorder.close()
            self.broadcaster.close()
            log.info("cluster %s: scheduler loop stopped after %d cycles", cluster.name, self.cycles)

    # -- pieces --------------------------------------------------------------------------------
    def _make_engine(self, cluster):
        """The engine of the cluster's kind (KubeEngine raises ClusterUnavailable)."""
        self.real = cluster.kind == Cluster.REAL
        engine = KubeEngine if self.real else Engine
        return engine(cluster, self.recorder, interrupted=self._interrupted)

    def _set_workload(self, spec) -> None:
        """The demo workload generator of ``spec`` (None: none), unless it is the one running: simulated clusters
        only (it adds and deletes pods itself)."""
        if spec == self.workload_spec:
            return
        if self.workload is not None:   # its ReplicaSets scaled to the pods it made last
            self.engine.sync_replica_sets(self.workload.scaled)
        self.workload_spec = spec
        self.workload = WorkloadGenerator(spec, random.Random()) if spec and not self.real else None

    def _close_engine(self) -> None:
        """A real cluster's engine stops watching and gives its lease up; nothing to do for a simulated one."""
        if isinstance(self.engine, KubeEngine):
            self.engine.close()

    def _stop_unavailable(self, err: ClusterUnavailable) -> None:
        """A real cluster that cannot be driven: one error (log, and a Warning event unless the latest one says
        the same; its neutral text for every viewer, the whole error for the cluster's editors). Its desired state is stopped, unless the API server could not answer (``transient``): then
        the loop ends and the watchdog starts another one later, so the cluster resumes by itself."""
        if err.transient:
            log.warning("%s; trying again later", err)
        else:
            log.error("%s; the scheduler loop stops", err)
        latest = (SchedulingEvent.objects.filter(cluster_id=self.cluster_id, reason="ClusterUnavailable")
                  .order_by("-id").values_list("message", "detail").first())
        detail = str(err) if str(err) != err.public else ""
        if latest != (err.public, detail):   # the detail for the cluster's editors only (SchedulingEvent.detail)
            self.recorder.record_event("ClusterUnavailable", err.public, type_="Warning", detail=detail)
        if not err.transient:
            Cluster.objects.filter(pk=self.cluster_id).update(desired_state=Cluster.STOPPED)
        self.recorder.close()
        self.broadcaster.close()

    def _renew(self):
        """True: lock renewed; False: lost; None: Redis unreachable. While nobody can reach Redis nobody
        can take the lock over, so the loop goes on; when Redis is back (possibly restarted empty) the
        lock is renewed, or taken again if it vanished, or the loop stops if another worker holds it."""
        try:
            if self.lock.renew():
                self.redis_down = False
                return True
            if self.redis_down and self.lock.acquire():
                log.warning("cluster %s: Redis is back; lock taken again", self.cluster_id)
                self.redis_down = False
                return True
            return False
        except RedisError as err:
            if not self.redis_down:
                log.warning("cluster %s: Redis unreachable (%s); scheduling goes on", self.cluster_id, err)
            self.redis_down = True
            return None

    def _commands(self, timeout: float) -> list:
        """Commands from the control queue; none while Redis is unreachable."""
        try:
            return control.receive(self.cluster_id, timeout)
        except RedisError as err:
            if not self.redis_down:
                log.warning("cluster %s: Redis unreachable (%s); scheduling goes on", self.cluster_id, err)
            self.redis_down = True
            if timeout:
                time.sleep(timeout)
            return []

    def _interrupted(self) -> bool:
        """Polled while an extender call is in flight: give it up when the process shuts down or a command that
        must not wait for it (INTERRUPTING_OPS) is queued; the attempt fails and the loop takes the command.
        A long call (up to SCHEDSCOPE_EXTENDER_TIMEOUT_MAX) renews the lock meanwhile; a lost lock gives it up too
        (the loop's next turn finds the lock lost and stops)."""
        if not self.interrupted and time.monotonic() >= self.next_renew:
            held = self._renew()
            self.next_renew = 0.0 if held is False else time.monotonic() + (self.lock.ttl / 3 if held else 0.5)
            self.interrupted = held is False
        if not self.interrupted:
            try:
                self.interrupted = self.shutdown or control.waiting(self.cluster_id, INTERRUPTING_OPS)
            except RedisError:
                return False
        return self.interrupted

    def _cycle(self):
        trace = self.engine.schedule_one()
        if trace is not None:
            self.cycles += 1
            self._recent.append((time.monotonic(), trace.durations.get("total", 0.0) * 1000))
        return trace

    def _burst(self):
        """Cycles for up to BURST_SECONDS, so that commands are never kept waiting long."""
        end = time.monotonic() + BURST_SECONDS
        while time.monotonic() < end:
            if self._cycle() is None:
                time.sleep(0.02)
                return
            if self.interrupted:   # the command waits: no more attempts failed for it
                return

    def _rates(self):
        cutoff = time.monotonic() - 10
        while self._recent and self._recent[0][0] < cutoff:
            self._recent.popleft()
        if not self._recent:
            return 0.0, 0.0, 0.0
        span = max(1.0, time.monotonic() - self._recent[0][0])
        ms = sorted(m for _t, m in self._recent)
        return len(ms) / span, ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))]

    def _apply(self, cmd: dict):
        op = cmd["op"]
        if op in SIMULATED_ONLY_OPS and self.real:
            message = (f"cluster {self.cluster.name} is a real cluster: {op} is for simulated clusters; change a "
                       f"real cluster through its API server")
            log.warning("%s", message)
            if op == "bind":
                control.reply(cmd, {"status": 400, "field": "", "message": message})
        elif op == "state":
            try:
                self.state = Cluster.objects.values_list("desired_state", flat=True).get(pk=self.cluster_id)
            except Cluster.DoesNotExist:
                self.state = Cluster.STOPPED
            except DB_ERRORS as err:
                log.warning("cluster %s: cannot read desired state (%s)", self.cluster_id, err)
        elif op == "step":
            self.pending_steps += int(cmd.get("n", 1))
        elif op == "reload":
            self.recorder.flush()
            cluster = Cluster.objects.select_related("profile").get(pk=self.cluster_id)
            self.version, self.mode = cluster.version, cluster.mode
            self.kube = (cluster.kube_version, cluster.feature_gates)
            self._close_engine()   # first: the new engine takes the lease this one gives up
            self.engine = self._make_engine(cluster)
            self.workload_spec = self.workload = None
            self._set_workload(cluster.workload)
        elif op == "workload":
            self._set_workload(Cluster.objects.filter(pk=self.cluster_id).values_list("workload", flat=True).first())
        elif op == "bind":
            self._bind(cmd)
        else:
            log.warning("cluster %s: unknown command %r", self.cluster_id, op)

    def _follow(self) -> None:
        """What the store's other writers changed reaches the scheduler (a log pruned past the engine's
        resourceVersion: rebuild from the store). With the database away nobody can write the store: scheduling
        goes on, and following resumes when it is back."""
        try:
            self.engine.follow()
            self.follow_failed = False
        except DB_ERRORS as err:
            if not self.follow_failed:
                log.warning("cluster %s: cannot read the store's changes (%s); scheduling goes on",
                            self.cluster_id, str(err).strip().splitlines()[0] if str(err).strip() else err)
            self.follow_failed = True
            connection.close()
        except objectstore.Compacted:
            log.warning("cluster %s: the change log was pruned past the scheduler's state; rebuilding",
                        self.cluster_id)
            self._apply({"op": "reload"})

    def _bind(self, cmd: dict) -> None:
        """A manual binding (a control.request): bind (or only check, ``dry_run``), store it, and answer with
        the HTTP status and details."""
        if control.expired(cmd):
            log.warning("cluster %s: binding of %s dropped: its requester stopped waiting", self.cluster_id,
                        cmd["key"])
            return
        dry_run = cmd.get("dry_run", False)
        try:
            answer = dict(self.engine.bind(cmd["key"], cmd["node"], cmd["by"], cmd.get("uid", ""), dry_run),
                          status=201)
        except BindRefused as err:
            answer = {"status": err.status, "field": err.field, "message": err.message}
        if answer["status"] == 201 and not dry_run:
            answer["stored"] = self.recorder.flush(BIND_FLUSH_SECONDS)
        control.reply(cmd, answer)

    def _workload_tick(self):
        add, delete = self.workload.tick(time.monotonic(), self.engine, self._replica_set_of)
        rows = []
        if add:
            try:
                rows = insert_pods(self.cluster, add, writer=self.lock.token)   # added to the engine below
            except DB_ERRORS + (ValidationFailed,) as err:
                log.warning("cluster %s: workload pods not created (%s)", self.cluster.name, err)
        for row in rows:
            self.engine.add_pod(row.raw)
        for key in delete:
            uid = self.engine.delete_pod(key)
            if uid is not None:
                self.recorder.record_deletion(uid)

    def _sync_replica_sets(self) -> None:
        """A simulated cluster's ReplicaSet controller pass (its statuses; the workload generator's scaled to
        their pods), every second and when the loop ends."""
        if not self.real:
            self.engine.sync_replica_sets(self.workload.scaled if self.workload is not None else ())

    def _replica_set_of(self, rs: dict) -> dict:
        """The cluster's ReplicaSet of ``rs``'s name, or ``rs`` created as kube-apiserver admits it (the recorder
        stores it)."""
        meta = rs["metadata"]
        held = self.engine.cluster.get_object("ReplicaSet", f'{meta["namespace"]}/{meta["name"]}')
        if held is not None:
            return held
        created = objectstore.rfc3339(time.time())
        rs = admitted.admit_object("ReplicaSet", rs, created, self.engine.features)
        return self.engine.cluster.add_object("ReplicaSet", dict(
            rs, metadata=admitted.server_metadata(rs.get("metadata") or {}, created)))

    def _heartbeat(self) -> bool:
        """Mark the cluster as driven; pick up what another process changed (state, a new scenario, the mode).
        False if another loop has claimed the cluster meanwhile."""
        try:
            # Plain reads never wait; the heartbeat is skipped while the recorder holds the row.
            row = (Cluster.objects.filter(pk=self.cluster_id)
                   .values("desired_state", "version", "mode", "runner", "workload", "kube_version", "feature_gates")
                   .first())
            if row is not None and row["runner"] == self.lock.token:
                with transaction.atomic():
                    free = Cluster.objects.select_for_update(skip_locked=True).filter(pk=self.cluster_id)
                    if list(free.values_list("pk", flat=True)):
                        free.update(heartbeat=datetime.now(timezone.utc))
        except DB_ERRORS:
            connection.close()
            return True   # the database is away: keep scheduling, the recorder buffers (and fences)
        if row is None:
            self.state = Cluster.STOPPED
            return True
        if row["runner"] != self.lock.token:
            return False
        if not self.one_shot:
            self.state = row["desired_state"]
        if (row["version"] != self.version or row["mode"] != self.mode
                or (row["kube_version"], row["feature_gates"]) != self.kube):
            self._apply({"op": "reload"})
        else:
            self._set_workload(row["workload"])   # changed by a writer that sent no command (the admin)
        return True

    def _compact(self):
        """The store's change log keeps its newest CHANGE_LOG_KEPT changes (watches from before get 410 Gone)."""
        try:
            objectstore.prune_changes(self.cluster_id, CHANGE_LOG_KEPT)
        except DB_ERRORS as err:
            log.warning("cluster %s: compacting the change log failed (%s)", self.cluster_id, err)

    def _prune(self):
        try:
            retention.prune(self.cluster_id)
        except DB_ERRORS as err:
            log.warning("cluster %s: pruning history failed (%s)", self.cluster_id, err)
