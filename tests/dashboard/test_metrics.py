"""kube-scheduler's metrics as the recorder observes them: plugin durations sampled as kube samples them."""
from dashboard.services import metrics


def _count(metric, **labels) -> float:
    return sum(s.value for m in metric.collect() for s in m.samples
               if s.name.endswith("_count") and all(s.labels.get(k) == v for k, v in labels.items()))


def test_plugin_durations_are_sampled_and_extension_points_are_not():
    durations = {"total": 2.0, "Filter": 1.0, "Score": 0.5, "NodeResourcesFit": 0.4, "PreFilter/NodePorts": 0.01,
                 "ImageLocality": 0.1}
    for _ in range(40):
        metrics.observe_cycle("metrics-sampling", "", "scheduled", durations, ("NodeResourcesFit",))
    every = 100 // metrics.PLUGIN_METRICS_SAMPLE_PERCENT
    assert _count(metrics.EXTENSION_POINT_DURATION, cluster="metrics-sampling", extension_point="Filter") == 40
    assert _count(metrics.ATTEMPT_DURATION, cluster="metrics-sampling") == 40
    for plugin, point in (("NodeResourcesFit", "Filter"), ("ImageLocality", "Score"), ("NodePorts", "PreFilter")):
        assert _count(metrics.PLUGIN_DURATION, cluster="metrics-sampling", plugin=plugin,
                      extension_point=point) == 40 // every
