"""kube-scheduler's metrics as the recorder observes them: plugin durations sampled as kube samples them."""
from dashboard.services import metrics


def _count(metric, suffix="_count", **labels) -> float:
    return sum(s.value for m in metric.collect() for s in m.samples
               if s.name.endswith(suffix) and all(s.labels.get(k) == v for k, v in labels.items()))


def test_plugin_durations_are_sampled_and_extension_points_are_not():
    durations = {"total": 0.002, "Filter": 0.001, "Score": 0.0005, "NodeResourcesFit": 0.0004,
                 "PreFilter/NodePorts": 0.00001, "ImageLocality": 0.0001}
    for _ in range(40):
        metrics.observe_cycle("metrics-sampling", "", "scheduled", durations, ("NodeResourcesFit",))
    every = 100 // metrics.PLUGIN_METRICS_SAMPLE_PERCENT
    assert _count(metrics.EXTENSION_POINT_DURATION, cluster="metrics-sampling", extension_point="Filter") == 40
    assert _count(metrics.ATTEMPT_DURATION, cluster="metrics-sampling") == 40
    # observed in seconds, as kube's histograms are (CycleTrace.durations)
    assert abs(_count(metrics.ATTEMPT_DURATION, "_sum", cluster="metrics-sampling") - 40 * 0.002) < 1e-9
    for plugin, point in (("NodeResourcesFit", "Filter"), ("ImageLocality", "Score"), ("NodePorts", "PreFilter")):
        assert _count(metrics.PLUGIN_DURATION, cluster="metrics-sampling", plugin=plugin,
                      extension_point=point) == 40 // every
