"""The scheduler of one real cluster: scheduler_core's Scheduler over a KubeCluster (the code path of
``python -m scheduler_core.kuberun``), with every decision handed to the recorder.

The KubeCluster lists and watches the API server; bindings, status patches, evictions and events go to the API
server (that is its job) and are journaled as well, so the recorder stores each cycle with the binding and the
events it caused, as for a simulated cluster (``engine.RecordingEngine``). ``InformerMirror`` keeps the Node and
Pod tables in step with the informer cache (nodes; pods of the profile's schedulerNames while pending, and every
bound pod whoever bound it), so the overview, pending, node and pod pages and what-if count what runs on a node.

Leader election: the profile's ``leaderElection`` (kube's defaults: on, Lease kube-system/kube-scheduler,
15s/10s/2s) is honoured through a Lease, as kube-scheduler does, so a Schedscope loop and another scheduler
replica of the same name never both schedule: cycles run only while leading; a lost lease ends the loop.

Observe mode (``Cluster.mode`` "shadow"): the KubeCluster is read-only, nothing is bound and no lease is taken.
A ShadowScheduler compares every binding of a default-scheduler pod with the profile's choice (its cycle and the
ShadowDecision, ``RecordingEngine._record_shadow``), and explains every pod the default scheduler reports
FailedScheduling for, again while it waits and the cluster changes: each explanation is recorded as an attempt of
the pod with what would fix it, and kube's message is kept beside the profile's (``_record_observation``).
"""
from __future__ import annotations

import logging
import threading
from collections import defaultdict
from datetime import datetime, timezone

from django.db import connection
from django.db.utils import DatabaseError, InterfaceError
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError, MaxRetryError

from scheduler_core import gcpolicy
from scheduler_core.cluster import permissions
from scheduler_core.cluster.kube import KubeCluster, api_message
from scheduler_core.cluster.leaderelection import (STOPPED, LeaderElector, LeaseLock, config_seconds,
                                                   default_identity)
from scheduler_core.config import ConfigError
from scheduler_core.kuberun import BINDING_WORKERS, BINDINGS_DRAIN_SECONDS
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scheduler import Scheduler
from scheduler_core.shadow import ShadowScheduler
from scheduler_core.trace import CallbackSink

from ..models import Cluster
from ..models import Node as NodeRow
from ..models import Pod as PodRow
from ..profiles.services import note_span, running_document
from . import credentials, extenders, kubeversions
from .objectstore import node_row, pod_row
from .engine import JournaledBindings, RecordingEngine
from .rowlock import cluster_writes

log = logging.getLogger("dashboard.kubeengine")
NODE_FIELDS = ["zone", "labels", "taints", "unschedulable", "allocatable", "raw"]
POD_SPEC_FIELDS = ["labels", "priority", "scheduler_name", "cpu_m", "memory", "raw"]
DB_ERRORS = (DatabaseError, InterfaceError)
JUDGE_WINDOW_SECONDS = 1.0   # kube's bindings judged in its decision order once none came for this long


class ClusterUnavailable(Exception):
    """The real cluster cannot be driven: its credentials are missing, unreadable, unknown to the API server (401)
    or lack permissions its mode needs (all of them named), or its API server cannot be reached. The message
    names the cluster and the server's address, never a secret. ``transient``: the API server could not answer
    (unreachable, overloaded, or refusing everything while it starts): the loop is tried again later, the
    cluster stays running. ``public``: what every viewer of the cluster may read when the message holds more (the
    remote API server's own words, what is wrong with a kubeconfig file, which tells whether a path exists): the
    message itself is for the cluster's editors and admins."""

    def __init__(self, message: str, transient: bool = False, public: str = ""):
        super().__init__(message)
        self.transient = transient
        self.public = public or message


class JournaledKubeCluster(JournaledBindings, KubeCluster):
    """A KubeCluster whose successful writes (bindings, events) are also journaled for the recorder."""

    def record_event(self, obj, event_type: str, reason: str, action: str, message: str, related=None,
                     controller: str | None = None) -> None:
        super().record_event(obj, event_type, reason, action, message, related, controller)
        if not self.read_only:
            self.journal.append(("event", obj, (event_type, reason, message)))


class InformerMirror:
    """A KubeCluster handler that collects node and pod changes and writes them to the Node and Pod tables in
    one transaction per ``flush``: nodes upserted and deleted; pods of ``scheduler_names`` upserted while
    pending, a row's pod marked bound when it gets a node (whoever bound it), a row added for every other bound
    pod (another scheduler's, or bound before the loop watched: it uses its node's resources), rows deleted
    with their pods. Queue state, attempts and cycles of a row stay the recorder's. A failed write is kept and
    retried."""

    def __init__(self, cluster: Cluster, scheduler_names):
        self.cluster = cluster
        self.scheduler_names = frozenset(scheduler_names)
        self.known = set(PodRow.objects.filter(cluster=cluster).values_list("uid", flat=True))
        self.nodes, self.gone_nodes = {}, set()
        self.pods, self.bound, self.gone_pods = {}, {}, set()
        self.failing = False

    @property
    def dirty(self) -> bool:
        return bool(self.nodes or self.gone_nodes or self.pods or self.bound or self.gone_pods)

    # -- handler ---------------------------------------------------------------------------------
    def on_node_add(self, node) -> None:
        self.gone_nodes.discard(node.name)
        self.nodes[node.name] = node

    def on_node_update(self, old, new) -> None:
        self.on_node_add(new)

    def on_node_delete(self, node) -> None:
        self.nodes.pop(node.name, None)
        self.gone_nodes.add(node.name)

    def on_pod_add(self, pod) -> None:
        if pod.node_name and (pod.uid in self.known or pod.uid in self.pods):
            self.bound[pod.uid] = pod.node_name
        elif pod.node_name or pod.scheduler_name in self.scheduler_names:
            self.gone_pods.discard(pod.uid)
            self.pods[pod.uid] = pod

    def on_pod_update(self, old, new) -> None:
        self.on_pod_add(new)

    def on_pod_delete(self, pod) -> None:
        self.pods.pop(pod.uid, None)
        self.bound.pop(pod.uid, None)
        if pod.uid in self.known:
            self.gone_pods.add(pod.uid)

    def on_object_event(self, kind: str, action: str, old, new) -> None:
        """Only nodes and pods have tables."""

    # -- writing ---------------------------------------------------------------------------------
    def forget_absent(self, kube: KubeCluster) -> None:
        """Rows of nodes and pods the API server no longer has (deleted while no loop watched): deleted at the
        next flush."""
        present = {p.uid for p in kube.list_pods()}
        self.gone_pods |= self.known - present - set(self.pods)
        names = {n.name for n in kube.list_nodes()}
        self.gone_nodes |= set(NodeRow.objects.filter(cluster=self.cluster).exclude(name__in=names)
                               .values_list("name", flat=True))

    def _row(self, pod, now: datetime) -> PodRow:
        row = pod_row(self.cluster, pod)
        if pod.node_name:   # first seen bound: bound as of now (the full matrix of an earlier cycle leaves it out)
            row.bound_at = now
        return row

    def flush(self) -> bool:
        """Write what changed since the last successful flush; False (kept for the next one) if the database
        refused."""
        if not self.dirty:
            return True
        cid = self.cluster.pk
        try:
            with cluster_writes(cid):
                if self.gone_nodes:
                    NodeRow.objects.filter(cluster_id=cid, name__in=self.gone_nodes).delete()
                if self.nodes:
                    NodeRow.objects.bulk_create([node_row(self.cluster, n) for n in self.nodes.values()],
                                                update_conflicts=True, unique_fields=["cluster", "name"],
                                                update_fields=NODE_FIELDS)
                if self.gone_pods:
                    PodRow.objects.filter(cluster_id=cid, uid__in=self.gone_pods).delete()
                if self.pods:
                    now = datetime.now(timezone.utc)
                    PodRow.objects.bulk_create([self._row(p, now) for p in self.pods.values()],
                                               update_conflicts=True, unique_fields=["cluster", "uid"],
                                               update_fields=POD_SPEC_FIELDS)
                by_node = defaultdict(list)
                for uid, node in self.bound.items():
                    by_node[node].append(uid)
                now = datetime.now(timezone.utc)
                for node, uids in by_node.items():
                    PodRow.objects.filter(cluster_id=cid, uid__in=uids, node_name="").update(
                        node_name=node, queue=PodRow.BOUND, bound_at=now, reason="", plugins="")
        except DB_ERRORS as err:
            if not self.failing:
                log.warning("cluster %s: mirroring nodes and pods failed (%s); retrying", self.cluster.name, err)
            self.failing = True
            connection.close()
            return False
        self.failing = False
        self.known |= set(self.pods)
        self.known -= self.gone_pods
        self.nodes, self.gone_nodes = {}, set()
        self.pods, self.bound, self.gone_pods = {}, {}, set()
        return True


def _unavailable(cluster: Cluster, err: Exception) -> ClusterUnavailable:
    """A ClusterUnavailable for an error of the first requests: unknown credentials (401), refused ones (403), or
    an API server that cannot answer now (transient)."""
    where = credentials.kubeconfig_status(cluster)
    transient = False
    if isinstance(err, permissions.CredentialsRejected):
        neutral = "the API server does not accept the credentials"
        why = f"{neutral} ({err})"
    elif isinstance(err, ApiException):
        if err.status == 401:
            neutral = "the API server does not accept the credentials"
            why = f"{neutral} (401 {api_message(err)})"
        elif err.status == 403:   # every permission was granted a moment ago: RBAC reloading; try again
            neutral = "the API server refused a request"
            why, transient = f"{neutral} (403 {api_message(err)})", True
        else:
            neutral = f"the API server answered {err.status}"
            why, transient = f"{neutral}: {api_message(err)}", err.status in (429, 500, 503, 504)
    else:   # the URL of a connection error may hold a token (plain-HTTP simulated clusters): never quoted
        reason = err.reason if isinstance(err, MaxRetryError) and err.reason is not None else err
        text = str(reason).split(": ", 1)[-1] if isinstance(reason, HTTPError) else type(reason).__name__
        neutral = "the API server cannot be reached"
        why, transient = f"{neutral} ({text})", True
    return ClusterUnavailable(f"cluster {cluster.name}: {why}; kubeconfig {where}", transient=transient,
                              public=f"cluster {cluster.name}: {neutral} (editors of the cluster see why)")


def _lacking(cluster: Cluster, kube: KubeCluster, shadow: bool, le: dict) -> str:
    """Every permission the cluster's mode needs and its credentials lack, in one sentence ("" if none)."""
    lease = None
    if not shadow and le.get("leaderElect", True):
        lease = (le.get("resourceNamespace") or "kube-system", le.get("resourceName") or "kube-scheduler")
    lacking = permissions.missing(kube, permissions.required(kube, writes=not shadow, lease=lease))
    if not lacking:
        return ""
    return (f"cluster {cluster.name}: {permissions.lacking_sentence(lacking, 'observe' if shadow else 'scheduler')}; "
            f"kubeconfig {credentials.kubeconfig_status(cluster)}")


class KubeEngine(RecordingEngine):
    """Scheduler (or ShadowScheduler) over a KubeCluster of one real Cluster row (see the module doc).

    Raises ClusterUnavailable when the credentials lack a permission of the mode or the cluster cannot be
    listed. ``pump`` delivers watch events (and mirrors
    them); ``schedule_one`` runs one attempt while leading; ``close`` stops watching and gives the lease up.
    ``interrupted``: as for Engine."""

    def __init__(self, cluster: Cluster, recorder, identity: str | None = None, interrupted=None):
        self._start_recording(recorder)
        self.name = cluster.name
        self.base_attempts = dict(PodRow.objects.filter(cluster=cluster, attempts__gt=0)
                                  .values_list("uid", "attempts"))
        row, doc, profile_version = running_document(cluster)
        registry = in_tree_registry()
        config = kubeversions.scheduler_config(row, doc)   # at the server's version as last seen
        raw = config.raw or {}
        cc, le = raw.get("clientConnection") or {}, raw.get("leaderElection") or {}
        shadow = cluster.mode == Cluster.SHADOW
        try:
            kube = credentials.kube_cluster_for(cluster, cluster_class=JournaledKubeCluster, journal=self.journal,
                                                qps=cc.get("qps", 50.0), burst=cc.get("burst", 100),
                                                read_only=shadow, watch_failed_scheduling=shadow,
                                                kube_version=config.features)
        except (credentials.KubeconfigInvalid, credentials.KubeconfigUnreadable, ConfigException) as err:
            raise ClusterUnavailable(f"cluster {cluster.name}: unusable kubeconfig: {err}",
                                     public=f"cluster {cluster.name}: unusable kubeconfig (editors of the cluster "
                                            f"see why)") from None
        try:
            server_version = (kube.get_json("/version") or {}).get("gitVersion") or ""
            seen_version, row.server_version = row.server_version, server_version
            kube.follow_version(kubeversions.cluster_features(row))   # the informers of the server's version
            lacking = _lacking(cluster, kube, shadow, le)
            if not lacking:
                kube.start()
        except (ApiException, HTTPError, OSError, permissions.CredentialsRejected) as err:
            kube.close()
            raise _unavailable(cluster, err) from None
        if lacking:
            kube.close()
            raise ClusterUnavailable(lacking)
        try:   # a failure past this point must not leave the watches running
            if server_version != seen_version:
                Cluster.objects.filter(pk=cluster.pk).update(server_version=server_version)
            if kubeversions.cluster_features(row) != config.features:   # blank kube_version follows the server
                try:
                    config = kubeversions.scheduler_config(row, doc)
                except ConfigError as err:
                    raise ClusterUnavailable(f"cluster {cluster.name}: its profile cannot run at Kubernetes "
                                             f"{kubeversions.cluster_version(row)}, the nearest supported version "
                                             f"to its API server's {server_version}: {err}") from None
            note_span(cluster, recorder, profile_version, config.features, row.feature_gates)
            self.cluster = kube
            names = ["default-scheduler"] if shadow else [p.scheduler_name for p in config.profiles]
            self.mirror = InformerMirror(cluster, names)
            kube.subscribe(self.mirror)
            self.mirror.forget_absent(kube)
            self.mirror.flush()
            self.scheduler = Scheduler(kube, config, registry=registry, tie_break=cluster.tie_break,
                                       seed=cluster.seed, trace_sink=CallbackSink(self._traces.append),
                                       trace_all_filters=True, extender_policy=extenders.policy(interrupted),
                                       binding_workers=0 if shadow else BINDING_WORKERS)
            self.shadow = None
            if shadow:
                self.shadow = ShadowScheduler(kube, config, registry, tie_break=cluster.tie_break,
                                              seed=cluster.seed, trace_all_filters=True,
                                              on_record=lambda rec, tr: self._compared.append((rec, tr)),
                                              on_observe=lambda obs, tr: self._observed.append((obs, tr)),
                                              order_window=JUDGE_WINDOW_SECONDS)
            self.sync_queue_states()
            gcpolicy.configure()
            gcpolicy.settle()
            self._stop = threading.Event()
            self.elector = None if shadow or not le.get("leaderElect", True) else self._elect(le, identity)
        except BaseException:
            kube.close()
            raise

    def _elect(self, le: dict, identity: str | None) -> LeaderElector:
        """Leader election with the profile's ``leaderElection`` settings: one attempt now (a free lease is held
        from the first cycle on), then acquiring or renewing in a thread until ``close``."""
        lock = LeaseLock(self.cluster, le.get("resourceNamespace") or "kube-system",
                         le.get("resourceName") or "kube-scheduler", identity or f"schedscope-{default_identity()}")
        elector = LeaderElector(
            lock, **config_seconds(le),
            on_started_leading=lambda: log.info("cluster %s: %s leads", self.name, lock.identity),
            on_new_leader=lambda who: log.info("cluster %s: lease %s held by %s", self.name, lock.describe(),
                                               who or "<none>"))
        self.cluster.write_fence = elector.valid_for   # no write once the lease may have passed to another
        elector.step()
        self._elector_thread = threading.Thread(target=elector.run, args=(self._stop,),
                                                name=f"leader-election-{self.name}", daemon=True)
        self._elector_thread.start()
        return elector

    @property
    def leading(self) -> bool:
        """Whether cycles may run: no leader election, or this loop holds the lease; and every watch is connected
        (``KubeCluster.in_sync``)."""
        return (self.elector is None or self.elector.leading) and self.cluster.in_sync()

    @property
    def lost_lease(self) -> bool:
        """The lease was held and could not be renewed: the loop must end (kube-scheduler exits)."""
        return self.elector is not None and self.elector.state == STOPPED

    def pump(self, timeout: float = 0.0) -> int:
        """Deliver the watch events that arrived (waiting up to ``timeout`` for one), mirror them to the tables
        and record what they caused (shadow comparisons). Returns how many were delivered."""
        n = self.cluster.pump(timeout)
        self.scheduler.process_bound()
        self.mirror.flush()
        self._flush()
        return n

    def schedule_one(self):
        """Watch events, timers and queue flushes that are due, then one attempt while leading; its CycleTrace,
        or None when idle (while another replica leads). In observe mode: the next due pending pod explained.
        """
        self.pump()
        if self.shadow is not None:
            self.shadow.judge_due()
            # reports answered in kube's order may have been recorded (and _observed flushed) by the pump above
            observed = self.shadow.observe_pending(limit=1)
            tr = self._observed[-1][1] if observed and self._observed else None
            self._flush()
            return tr
        if not self.leading:
            return None
        sched = self.scheduler
        sched.process_timers()
        sched.queue.tick()
        tr = sched.schedule_one() if sched.queue.num_poppable() else None
        self._flush()
        return tr

    def close(self) -> None:
        """Finish the binding requests in flight, stop leader election (giving the lease up) and the watches;
        wait for the API events in flight."""
        self.scheduler.wait_for_bindings(BINDINGS_DRAIN_SECONDS)
        self.scheduler.close()
        self._flush()
        self._stop.set()
        if self.elector is not None:
            self._elector_thread.join(15)
        self.cluster.close()
