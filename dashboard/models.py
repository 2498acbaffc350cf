"""Stored state of simulated clusters and the history of every scheduling cycle."""
from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models

from scheduler_core.shadow import messages_agree
from scheduler_core.versions import LATEST_VERSION

from .fields import CycleMatrixField, PackedJSONField


class SchedulerProfile(models.Model):
    """A KubeSchedulerConfiguration document (empty: kube's defaults)."""

    name = models.CharField(max_length=200, unique=True)
    document = models.JSONField(default=dict, blank=True)
    kube_version = models.CharField(max_length=8, default=LATEST_VERSION,
                                    help_text="the Kubernetes version the document is written for and checked at")
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Cluster(models.Model):
    """A cluster the scheduler drives: simulated (state in this database) or real (kubeconfig)."""

    SIMULATED, REAL = "simulated", "real"
    KINDS = [(SIMULATED, "Simulated"), (REAL, "Real (kubeconfig)")]
    STOPPED, RUNNING, PAUSED = "stopped", "running", "paused"
    STATES = [(STOPPED, "Stopped"), (RUNNING, "Running"), (PAUSED, "Paused")]
    SCHEDULER, SHADOW = "scheduler", "shadow"
    MODES = [(SCHEDULER, "Scheduler (binds pending pods)"),
             (SHADOW, "Observe (read-only: explains another scheduler's pending pods and compares its bindings "
                      "with the profile's choice)")]

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=KINDS, default=SIMULATED)
    kubeconfig = models.CharField(max_length=500, blank=True,
                                  help_text="path of a kubeconfig file on the workers, e.g. a mounted secret "
                                            "(real clusters; or the stored kubeconfig document)")
    kubeconfig_secret = models.TextField(blank=True, editable=False,
                                         help_text="the kubeconfig document, Fernet-encrypted (dashboard.crypto)")
    kubeconfig_summary = models.CharField(max_length=600, blank=True, editable=False,
                                          help_text="server, context and user of the stored kubeconfig (no secrets)")
    kube_context = models.CharField(max_length=200, blank=True)
    profile = models.ForeignKey(SchedulerProfile, null=True, blank=True, on_delete=models.SET_NULL)
    desired_state = models.CharField(max_length=16, choices=STATES, default=STOPPED)
    mode = models.CharField(max_length=16, choices=MODES, default=SCHEDULER)
    tie_break = models.CharField(max_length=8, choices=[("name", "name"), ("random", "random")], default="random")
    seed = models.BigIntegerField(null=True, blank=True)
    workload = models.JSONField(null=True, blank=True, help_text="workload generator settings (demo)")
    version = models.PositiveIntegerField(default=0, help_text="bumped when a scenario replaces the state")
    runner = models.CharField(max_length=200, blank=True, help_text="who drives the loop now")
    heartbeat = models.DateTimeField(null=True, blank=True)
    restricted = models.BooleanField(default=False, help_text="only its members (and admins) see the cluster")
    compacted_rv = models.BigIntegerField(default=0, help_text="the newest change pruned from the change log")
    kubelet = models.BooleanField(default=True, help_text="simulated kubelet: bound pods run and report Ready")
    kube_version = models.CharField(max_length=8, blank=True, default=LATEST_VERSION,
                                    help_text="the Kubernetes version whose scheduler rules run (blank: a real "
                                              "cluster's own, from its /version, the nearest supported)")
    feature_gates = models.TextField(blank=True, help_text="kube-scheduler's --feature-gates, e.g. "
                                                           "\"NodeDeclaredFeatures=false\" (blank: the version's defaults)")
    server_version = models.CharField(max_length=64, blank=True, editable=False,
                                      help_text="gitVersion of a real cluster's /version, read when it connects")
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class ClusterMembership(models.Model):
    """A user's role on one cluster (dashboard.access.cluster_role): on a restricted cluster the only way in
    for non-admins; on the others it can raise the user's global role."""

    VIEWER, EDITOR = "viewer", "editor"
    ROLES = [(VIEWER, "Viewer"), (EDITOR, "Editor")]

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cluster_memberships")
    role = models.CharField(max_length=16, choices=ROLES, default=VIEWER)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "user"], name="membership_unique_user")]
        ordering = ["cluster", "user"]

    def __str__(self):
        return f"{self.user} {self.role} on {self.cluster}"


class ClusterToken(models.Model):
    """A bearer token of a simulated cluster's Kubernetes API, stored only as its SHA-256 digest."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, hex")
    prefix = models.CharField(max_length=8, help_text="the token's first characters, to tell tokens apart")
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "prefix"], name="clustertoken_prefix_idx")]
        ordering = ["cluster", "-created", "-id"]

    @property
    def masked(self) -> str:
        return f"{self.prefix}…"

    def __str__(self):
        return f"{self.cluster.name}/{self.name} ({self.masked})"


class ClusterState(models.Model):
    """Where the simulated cluster's state came from (the last scenario loaded into it)."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="state")
    source = models.CharField(max_length=300, blank=True)
    loaded = models.DateTimeField(auto_now=True)


class StoredObject(models.Model):
    """An object of a simulated cluster other than a node, a pod or an event (those have their own tables):
    services, PVs, PVCs, namespaces, leases, ... as the Kubernetes API stores them (``services.objectstore``)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="stored_objects")
    kind = models.CharField(max_length=64)
    key = models.CharField(max_length=600, help_text="namespace/name, or name for cluster-scoped kinds")
    rv = models.BigIntegerField(default=0)
    raw = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "kind", "key"], name="stored_object_unique_key")]
        ordering = ["cluster", "id"]


class StoreCounter(models.Model):
    """A simulated cluster's newest resourceVersion, in a row of its own. Every write of the store bumps it; were
    it a column of the cluster's row, that row (which every recorded cycle, event and change references) would get
    a new version per write, and PostgreSQL's foreign-key checks at commit walk those versions: at hundreds of
    writes a second, commits took seconds."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, primary_key=True, related_name="store_counter")
    resource_version = models.BigIntegerField(default=0)
    pods = models.BigIntegerField(default=0, db_default=0, help_text=(
        "how many pod rows the cluster has: kept by the database itself, with triggers on the pods table "
        "(migration 0012), so that the size limit needs no count of them under the cluster's lock"))
    bytes = models.BigIntegerField(default=0, db_default=0, help_text=(
        "the size of the cluster's pods, nodes and other objects (their JSON as the database renders it): "
        "kept by the database itself, with triggers on those tables (migration 0017), for the bytes quota"))


class StoreChange(models.Model):
    """One change of a simulated cluster's store, by resourceVersion: what watches and the scheduler follow.
    ``raw`` is the object after the change (for DELETED: as it was, with the deletion's resourceVersion)."""

    ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

    # no index of its own: every index below leads with it (one index less to write per row)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="store_changes", db_index=False)
    rv = models.BigIntegerField()
    kind = models.CharField(max_length=64)
    type = models.CharField(max_length=8)
    key = models.CharField(max_length=600)
    raw = models.JSONField()
    writer = models.CharField(max_length=200, blank=True, help_text="the scheduler loop that wrote it (its lock "
                                                                     "token), so that it skips its own changes")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "rv"], name="store_change_unique_rv")]
        ordering = ["cluster", "rv"]


class Node(models.Model):
    """A node of a simulated cluster (the raw v1.Node plus indexed columns)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=253)
    zone = models.CharField(max_length=100, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    taints = models.JSONField(default=list, blank=True)
    unschedulable = models.BooleanField(default=False)
    allocatable = models.JSONField(default=dict, blank=True, help_text="scheduler units: cpu in millicores")
    raw = models.JSONField()
    rv = models.BigIntegerField(default=0, help_text="resourceVersion of its last change")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="node_unique_name")]
        ordering = ["cluster", "id"]

    def __str__(self):
        return self.name


class Pod(models.Model):
    """A pod of a simulated cluster with its placement and scheduling-queue state."""

    ACTIVE, BACKOFF, UNSCHEDULABLE, GATED, BOUND = "active", "backoff", "unschedulable", "gated", "bound"
    QUEUES = [(ACTIVE, "activeQ"), (BACKOFF, "backoffQ"), (UNSCHEDULABLE, "unschedulablePods"),
              (GATED, "gated"), (BOUND, "bound")]

    # no index of its own: every index below leads with it (one index less to write per row)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pods", db_index=False)
    uid = models.CharField(max_length=300)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    labels = models.JSONField(default=dict, blank=True)
    priority = models.IntegerField(default=0)
    scheduler_name = models.CharField(max_length=200, default="default-scheduler")
    cpu_m = models.BigIntegerField(default=0, help_text="requested cpu, millicores")
    memory = models.BigIntegerField(default=0, help_text="requested memory, bytes")
    node_name = models.CharField(max_length=253, blank=True)
    queue = models.CharField(max_length=16, choices=QUEUES, default=ACTIVE)
    attempts = models.IntegerField(default=0)
    reason = models.TextField(blank=True, help_text="latest FitError message")
    kube_message = models.TextField(blank=True, help_text="observe mode: the other scheduler's latest "
                                                          "FailedScheduling message, beside ``reason``")
    plugins = models.CharField(max_length=1000, blank=True,
                               help_text="plugins that rejected it last time, as ,A,B, (searchable)")
    last_cycle = models.BigIntegerField(null=True, blank=True, help_text="seq of its latest cycle")
    raw = models.JSONField()
    rv = models.BigIntegerField(default=0, help_text="resourceVersion of its last change")
    created = models.DateTimeField(auto_now_add=True)
    bound_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="pod_unique_uid"),
                       models.UniqueConstraint(fields=["cluster", "namespace", "name"], name="pod_unique_name")]
        indexes = [models.Index(fields=["cluster", "queue", "-priority", "created"], name="pod_queue_idx"),
                   models.Index(fields=["cluster", "node_name", "created", "id"], name="pod_pending_age_idx"),
                   models.Index(fields=["cluster", "node_name", "-attempts", "created"], name="pod_pending_attempts_idx"),
                   models.Index(fields=["cluster", "node_name", "-priority", "created"], name="pod_pending_prio_idx"),
                   models.Index(fields=["cluster", "node_name", "namespace", "name"], name="pod_pending_name_idx")]
        ordering = ["cluster", "id"]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def kube_agrees(self) -> bool:
        """Observe mode: whether the profile's latest message (``reason``) is the other scheduler's."""
        return messages_agree(self.reason, self.kube_message)

    @property
    def plugin_list(self) -> list:
        return [p for p in self.plugins.split(",") if p]

    @staticmethod
    def join_plugins(names) -> str:
        return f",{','.join(sorted(names))}," if names else ""

    def __str__(self):
        return self.key


class SchedulingCycle(models.Model):
    """One scheduling attempt: summary columns for queries and the full per-node, per-plugin matrix."""

    SCHEDULED, UNSCHEDULABLE, ERROR = "scheduled", "unschedulable", "error"
    RESULTS = [(SCHEDULED, "Scheduled"), (UNSCHEDULABLE, "Unschedulable"), (ERROR, "Error")]

    # no index of its own: every index below leads with it (one index less to write per row)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="cycles", db_index=False)
    seq = models.BigIntegerField(help_text="cycle number within the cluster")
    pod_uid = models.CharField(max_length=300)
    pod_namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    profile = models.CharField(max_length=200)
    attempt = models.IntegerField(default=1)
    started = models.DateTimeField()
    result = models.CharField(max_length=16, choices=RESULTS)
    node = models.CharField(max_length=253, blank=True)
    message = models.TextField(blank=True)
    num_nodes = models.IntegerField(default=0)
    num_feasible = models.IntegerField(default=0)
    duration_ms = models.FloatField(default=0)
    durations = models.JSONField(default=dict, blank=True, help_text="ms per extension point and plugin")
    failing_plugins = models.JSONField(default=dict, blank=True, help_text="{plugin: nodes rejected}")
    failing_reasons = models.JSONField(default=dict, blank=True, help_text="{reason: nodes}")
    matrix = CycleMatrixField(default=dict, blank=True, help_text="compact filter and score matrices (tracecodec)")
    preemption = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "seq"], name="cycle_unique_seq")]
        indexes = [models.Index(fields=["cluster", "pod_uid", "-seq"], name="cycle_pod_idx"),
                   models.Index(fields=["cluster", "pod_namespace", "pod_name", "-seq"], name="cycle_podname_idx"),
                   models.Index(fields=["cluster", "-started"], name="cycle_time_idx"),
                   models.Index(fields=["cluster", "result", "-seq"], name="cycle_result_idx"),
                   models.Index(fields=["cluster", "node", "-seq"], name="cycle_node_idx")]
        ordering = ["-seq"]

    @property
    def pod_key(self) -> str:
        return f"{self.pod_namespace}/{self.pod_name}"


class NodeList(models.Model):
    """A list of node names, stored once, that column-form cycle matrices refer to by row
    (services/tracecodec.NodeLists). ``key`` is a digest of the names, so a list is the same in any cluster."""

    key = models.CharField(max_length=32, primary_key=True)
    names = PackedJSONField(default=list)
    last_used = models.DateTimeField(db_index=True, help_text="when a cycle written last referred to it")


class SchedulingEvent(models.Model):
    """A Kubernetes-style event the scheduler emitted (Scheduled, FailedScheduling, Preempted, ...)."""

    # no index of its own: every index below leads with it (one index less to write per row)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="events", db_index=False)
    time = models.DateTimeField()
    type = models.CharField(max_length=16, default="Normal")
    reason = models.CharField(max_length=64)
    pod_uid = models.CharField(max_length=300, blank=True)
    pod_namespace = models.CharField(max_length=253, blank=True)
    pod_name = models.CharField(max_length=253, blank=True)
    node = models.CharField(max_length=253, blank=True)
    message = models.TextField(blank=True)
    detail = models.TextField(blank=True, default="", db_default="", help_text=(
        "what editors of the cluster and admins read in place of the message (a remote API server's own error "
        "text, what is wrong with a kubeconfig file); blank: the message is all there is"))
    cycle_seq = models.BigIntegerField(null=True, blank=True)
    rv = models.BigIntegerField(default=0, help_text="resourceVersion (0: recorded before the store)")
    raw = models.JSONField(null=True, blank=True, help_text="the v1 Event as the Kubernetes API serves it")

    class Meta:
        indexes = [models.Index(fields=["cluster", "-time"], name="event_time_idx"),
                   models.Index(fields=["cluster", "pod_uid", "-time"], name="event_pod_idx"),
                   models.Index(fields=["cluster", "reason", "-time"], name="event_reason_idx")]
        ordering = ["-time", "-id"]

    def message_for(self, editor: bool) -> str:
        """The message a user reads: the detail for an ``editor`` of the cluster (or an admin), the neutral
        message for the others (``access.event_messages``; the v1 Event in ``raw`` has the neutral one)."""
        return self.detail if self.detail and editor else self.message

    @staticmethod
    def key_of(raw) -> str:
        """The namespace/name of a v1 Event ("" without one): what pages and live updates name an event by."""
        meta = (raw or {}).get("metadata") or {}
        return f'{meta.get("namespace") or "default"}/{meta["name"]}' if meta.get("name") else ""

    @property
    def key(self) -> str:
        return self.key_of(self.raw)

    @property
    def series_count(self) -> int:
        """How many times kube's event series counted this Event (0: once, no series)."""
        return ((self.raw or {}).get("series") or {}).get("count", 0)

    @property
    def first_time(self):
        """When the series began: the Event's eventTime."""
        when = (self.raw or {}).get("eventTime")
        try:
            return datetime.fromisoformat(when.replace("Z", "+00:00"))
        except (AttributeError, ValueError):
            return self.time


class QueueSnapshot(models.Model):
    """Queue sizes and throughput at one moment (for charts and history)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="queue_snapshots")
    time = models.DateTimeField()
    active = models.IntegerField(default=0)
    backoff = models.IntegerField(default=0)
    unschedulable = models.IntegerField(default=0)
    gated = models.IntegerField(default=0)
    bound = models.IntegerField(default=0)
    cycles_per_second = models.FloatField(default=0)
    p50_ms = models.FloatField(default=0)
    p99_ms = models.FloatField(default=0)

    class Meta:
        indexes = [models.Index(fields=["cluster", "-time"], name="queue_time_idx")]
        ordering = ["-time"]


class ShadowDecision(models.Model):
    """Shadow mode: a binding another scheduler made, next to the node the active profile would have chosen."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="shadow_decisions")
    time = models.DateTimeField()
    pod_uid = models.CharField(max_length=300)
    pod_namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    scheduler = models.CharField(max_length=200, help_text="schedulerName of the pod (who bound it)")
    profile = models.CharField(max_length=200, help_text="the profile compared")
    actual_node = models.CharField(max_length=253, help_text="where the other scheduler bound it")
    shadow_node = models.CharField(max_length=253, blank=True, help_text="the profile's choice (blank: none)")
    agree = models.BooleanField()
    within_ties = models.BooleanField(help_text="the actual node had the profile's best score too")
    actual_feasible = models.BooleanField(help_text="the actual node passes the profile's Filter plugins")
    actual_score = models.BigIntegerField(null=True, blank=True)
    shadow_score = models.BigIntegerField(null=True, blank=True)
    actual_reasons = models.JSONField(default=list, blank=True, help_text="why the profile rejects the actual node")
    message = models.TextField(blank=True, help_text="the profile's FitError or error, if it found no node")
    num_feasible = models.IntegerField(default=0)
    cycle_seq = models.BigIntegerField(null=True, blank=True, help_text="seq of the shadow's recorded cycle")

    class Meta:
        indexes = [models.Index(fields=["cluster", "-time"], name="shadow_time_idx"),
                   models.Index(fields=["cluster", "agree", "-time"], name="shadow_agree_idx")]
        ordering = ["-time", "-id"]

    @property
    def pod_key(self) -> str:
        return f"{self.pod_namespace}/{self.pod_name}"


class BackgroundRun(models.Model):
    """Work asked for on a page or through the API and done by a task (a profile dry run, a what-if question):
    who asked, its state and progress while it works, then its answer or its error."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(QUEUED, "queued"), (RUNNING, "running"), (DONE, "done"), (FAILED, "failed")]

    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=16, choices=STATES, default=QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0)
    error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def percent(self) -> int:
        return 100 if self.state == self.DONE else (100 * self.done // self.total if self.total else 0)


class WhatIfRun(BackgroundRun):
    """A what-if question asked of a copy of a cluster's state (scheduler_core.whatif), its progress and answer."""

    CAPACITY, DRAIN, ADD_NODES = "capacity", "drain", "add-nodes"
    KINDS = [(CAPACITY, "How many more fit"), (DRAIN, "Drain nodes"), (ADD_NODES, "Add nodes")]

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="whatif_runs")
    kind = models.CharField(max_length=16, choices=KINDS)
    params = models.JSONField(default=dict, help_text="the question: pod or node manifest, nodes, count, limits")
    version = models.ForeignKey("profiles.ProfileVersion", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+", help_text="the profile version asked with (blank: the cluster's)")
    compare_version = models.ForeignKey("profiles.ProfileVersion", null=True, blank=True, on_delete=models.SET_NULL,
                                        related_name="+", help_text="capacity: a second version side by side")
    stage = models.CharField(max_length=200, blank=True, help_text="what the run is doing now, for people")

    class Meta:
        indexes = [models.Index(fields=["cluster", "-created"], name="whatif_cluster_idx")]
        ordering = ["-created", "-id"]


class WhatIfTrace(models.Model):
    """The decision trace of one attempt inside a what-if run (a failure or a placement it explains), stored as
    the pod page stores a cycle, with what would fix it."""

    run = models.ForeignKey(WhatIfRun, on_delete=models.CASCADE, related_name="traces")
    number = models.PositiveIntegerField(help_text="position within the run, as the result refers to it")
    pod_namespace = models.CharField(max_length=253)
    pod_name = models.CharField(max_length=253)
    profile = models.CharField(max_length=200)
    result = models.CharField(max_length=16)
    node = models.CharField(max_length=253, blank=True)
    message = models.TextField(blank=True)
    num_nodes = models.IntegerField(default=0)
    num_feasible = models.IntegerField(default=0)
    failing_plugins = models.JSONField(default=dict, blank=True)
    matrix = CycleMatrixField(default=dict, blank=True)
    node_list = models.CharField(max_length=32, blank=True,
                                 help_text="NodeList the matrix refers to (column form), kept while the run is")
    preemption = models.JSONField(null=True, blank=True)
    suggestions = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="whatif_trace_unique")]
        ordering = ["run", "number"]

    @property
    def pod_key(self) -> str:
        return f"{self.pod_namespace}/{self.pod_name}"


class GeneratedPassword(models.Model):
    """A password generated by ``manage.py ensureadmin``: while the user's password hash is still this one, their
    first sign-in leads to the password change (dashboard.signin) before any other page."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True)
    password = models.CharField(max_length=128, help_text="the hash the generated password had")
