"""DRF serializers. Writes validate with the scheduler core's own parsers (field-level errors, 400)."""
from __future__ import annotations

from rest_framework import serializers

from ..models import Cluster, Node, Pod, SchedulerProfile, SchedulingCycle, SchedulingEvent
from ..services import clusters as svc


class ProfileSerializer(serializers.ModelSerializer):
    class Meta:
        model = SchedulerProfile
        fields = ["id", "name", "document", "created"]

    def validate_document(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("expected a KubeSchedulerConfiguration object")
        try:
            svc.validate_config(value)
        except svc.ValidationFailed as err:
            raise serializers.ValidationError(err.errors["config"]) from None
        return value


class ClusterSerializer(serializers.ModelSerializer):
    profile = serializers.SlugRelatedField(slug_field="name", queryset=SchedulerProfile.objects.all(),
                                           required=False, allow_null=True)
    queue = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = ["id", "name", "kind", "kubeconfig", "kube_context", "profile", "desired_state", "tie_break",
                  "seed", "workload", "runner", "heartbeat", "created", "queue"]
        read_only_fields = ["desired_state", "runner", "heartbeat", "created"]

    def get_queue(self, obj) -> dict:
        from ..services.queries import queue_counts
        return queue_counts(obj)

    def validate(self, attrs):
        if attrs.get("kind") == Cluster.REAL and not attrs.get("kubeconfig"):
            raise serializers.ValidationError({"kubeconfig": ["required for a real cluster"]})
        return attrs


class NodeSerializer(serializers.ModelSerializer):
    class Meta:
        model = Node
        fields = ["name", "zone", "labels", "taints", "unschedulable", "allocatable", "raw", "created"]
        read_only_fields = fields


class PodSerializer(serializers.ModelSerializer):
    plugins = serializers.ListField(source="plugin_list", child=serializers.CharField(), read_only=True)

    class Meta:
        model = Pod
        fields = ["uid", "namespace", "name", "labels", "priority", "scheduler_name", "cpu_m", "memory",
                  "node_name", "queue", "attempts", "reason", "plugins", "last_cycle", "created", "bound_at", "raw"]
        read_only_fields = fields


class ObjectSerializer(serializers.Serializer):
    """A v1.Node or v1.Pod manifest to create."""

    manifest = serializers.JSONField()

    def validate_manifest(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("expected an object")
        return value


class ScenarioSerializer(serializers.Serializer):
    """A scenario document (golden format or a List) as JSON, or a file upload (JSON or YAML)."""

    scenario = serializers.JSONField(required=False)
    file = serializers.FileField(required=False)

    def validate(self, attrs):
        if attrs.get("scenario") is None and attrs.get("file") is None:
            raise serializers.ValidationError({"scenario": ["give a scenario document or a file"]})
        return attrs


class StepSerializer(serializers.Serializer):
    n = serializers.IntegerField(min_value=1, max_value=10000, default=1)


class CycleSerializer(serializers.ModelSerializer):
    pod = serializers.CharField(source="pod_key", read_only=True)

    class Meta:
        model = SchedulingCycle
        fields = ["seq", "pod", "pod_uid", "profile", "attempt", "started", "result", "node", "message",
                  "num_nodes", "num_feasible", "duration_ms", "failing_plugins", "failing_reasons"]


class CycleDetailSerializer(CycleSerializer):
    matrix = serializers.JSONField(read_only=True, help_text="compact filter and score matrices (tracecodec)")

    class Meta(CycleSerializer.Meta):
        fields = CycleSerializer.Meta.fields + ["durations", "matrix", "preemption"]


class FullMatrixSerializer(serializers.Serializer):
    """A cycle recomputed over every node (dashboard.services.fullmatrix)."""

    seq = serializers.IntegerField()
    matrix = serializers.JSONField(help_text="compact filter and score matrices over every node (tracecodec)")
    node = serializers.CharField(allow_blank=True, help_text="the node the profile picks over every node")
    message = serializers.CharField(allow_blank=True, help_text="the FitError message when no node fits")
    nodes = serializers.IntegerField(help_text="nodes evaluated (all of the cluster's)")
    bound_pods = serializers.IntegerField(help_text="pods bound up to the cycle, counted on their nodes")
    profile = serializers.CharField(help_text="the configuration the cycle was recomputed with")


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class CycleFilterSerializer(serializers.Serializer):
    pod = serializers.CharField(required=False, help_text="namespace/name or uid")
    node = serializers.CharField(required=False)
    plugin = serializers.CharField(required=False, help_text="a plugin that rejected at least one node")
    result = serializers.ChoiceField(choices=[c for c, _ in SchedulingCycle.RESULTS], required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)


class EventSerializer(serializers.ModelSerializer):
    class Meta:
        model = SchedulingEvent
        fields = ["id", "time", "type", "reason", "pod_uid", "pod_namespace", "pod_name", "node", "message",
                  "cycle_seq"]
