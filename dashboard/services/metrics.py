"""Prometheus metrics with kube-scheduler's names and labels (plus a ``cluster`` label), and the recorder's own."""
from __future__ import annotations

import itertools

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric

PLUGIN_METRICS_SAMPLE_PERCENT = 10   # kube-scheduler's pluginMetricsSamplePercent (schedule_one.go)


def exponential_buckets(start: float, factor: float, count: int) -> list:
    """Prometheus' ExponentialBuckets, as kube-scheduler's metrics define them."""
    return [start * factor ** i for i in range(count)]


REGISTRY = CollectorRegistry(auto_describe=True)

SCHEDULE_ATTEMPTS = Counter(
    "scheduler_schedule_attempts_total",
    "Number of attempts to schedule pods, by the result.", ["cluster", "result", "profile"], registry=REGISTRY)
ATTEMPT_DURATION = Histogram(
    "scheduler_scheduling_attempt_duration_seconds",
    "Scheduling attempt latency in seconds (scheduling algorithm + binding)", ["cluster", "result", "profile"],
    buckets=exponential_buckets(0.001, 2, 15), registry=REGISTRY)
EXTENSION_POINT_DURATION = Histogram(
    "scheduler_framework_extension_point_duration_seconds",
    "Latency for running all plugins of a specific extension point.",
    ["cluster", "extension_point", "status", "profile"], buckets=exponential_buckets(0.0001, 2, 12),
    registry=REGISTRY)
PLUGIN_DURATION = Histogram(
    "scheduler_plugin_execution_duration_seconds",
    "Duration for running a plugin at a specific extension point.",
    ["cluster", "plugin", "extension_point", "status"], buckets=exponential_buckets(0.00001, 1.5, 20),
    registry=REGISTRY)
QUEUE_INCOMING = Counter(
    "scheduler_queue_incoming_pods_total",
    "Number of pods added to scheduling queues by event and queue type.", ["cluster", "queue", "event"],
    registry=REGISTRY)
PENDING_PODS = Gauge(
    "scheduler_pending_pods",
    "Number of pending pods, by the queue type.", ["cluster", "queue"], registry=REGISTRY)

RECORDER_BUFFER = Gauge("schedscope_recorder_buffered_records",
                        "Records waiting to be written to the database.", ["cluster"], registry=REGISTRY)
RECORDER_LAG = Gauge("schedscope_recorder_lag_seconds",
                     "Age of the oldest record not yet written.", ["cluster"], registry=REGISTRY)
RECORDER_WRITTEN = Counter("schedscope_recorder_written_cycles_total",
                           "Cycles written to the database.", ["cluster"], registry=REGISTRY)
RECORDER_OVERFLOW = Counter("schedscope_recorder_overflow_cycles_total",
                            "Cycles dropped because the recorder's buffer was full.", ["cluster"], registry=REGISTRY)
RECORDER_FAILURES = Counter("schedscope_recorder_write_failures_total",
                            "Batch writes that failed and will be retried.", ["cluster"], registry=REGISTRY)

POINTS = ("PreFilter", "Filter", "PostFilter", "PreScore", "Score")
RESULT_STATUS = {"scheduled": "Success", "unschedulable": "Unschedulable", "error": "Error"}


_CHILDREN = {}   # (metric, label values) -> the labelled child: labels() costs more than observing


def _child(metric, *labels):
    key = (metric, labels)
    child = _CHILDREN.get(key)
    if child is None:
        child = _CHILDREN[key] = metric.labels(*labels)
    return child


_cycles = itertools.count()


def observe_cycle(cluster: str, profile: str, result: str, durations: dict, filter_plugins) -> None:
    """Count one cycle into the kube metrics: its profile, result, durations (seconds per extension point and
    plugin, as CycleTrace.durations) and the names of the Filter plugins among them. The plugins' durations
    are observed in one cycle of every 100 / PLUGIN_METRICS_SAMPLE_PERCENT, as kube samples them (at random,
    there), the extension points' in every cycle."""
    profile = profile or "default-scheduler"
    result = result or "unschedulable"
    _child(SCHEDULE_ATTEMPTS, cluster, result, profile).inc()
    _child(ATTEMPT_DURATION, cluster, result, profile).observe(durations.get("total", 0.0))
    status = RESULT_STATUS.get(result, "Error")
    plugins = next(_cycles) % (100 // PLUGIN_METRICS_SAMPLE_PERCENT) == 0
    for key, seconds in durations.items():
        if key in POINTS:
            _child(EXTENSION_POINT_DURATION, cluster, key, status, profile).observe(seconds)
        elif not plugins:
            continue
        elif key.startswith("PreFilter/"):
            _child(PLUGIN_DURATION, cluster, key[10:], "PreFilter", "Success").observe(seconds)
        elif key != "total":
            point = "Filter" if key in filter_plugins else "Score"
            _child(PLUGIN_DURATION, cluster, key, point, "Success").observe(seconds)


class _OfClusters:
    """A view of REGISTRY with the samples of the clusters named in ``names`` only (every metric here has a
    ``cluster`` label)."""

    def __init__(self, names):
        self.names = names

    def collect(self):
        for family in REGISTRY.collect():
            kept = Metric(family.name, family.documentation, family.type, family.unit)
            kept.samples = [s for s in family.samples if s.labels.get("cluster") in self.names]
            yield kept


def exposition(cluster_names) -> bytes:
    """The metrics in Prometheus' text format, of the clusters named in ``cluster_names`` only."""
    return generate_latest(_OfClusters(frozenset(cluster_names)))
