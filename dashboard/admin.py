from django.contrib import admin

from .models import Cluster, ClusterState, Node, Pod, QueueSnapshot, SchedulerProfile, SchedulingCycle, SchedulingEvent


@admin.register(SchedulerProfile)
class SchedulerProfileAdmin(admin.ModelAdmin):
    list_display = ("name", "created")
    search_fields = ("name",)


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "desired_state", "profile", "runner", "heartbeat")
    list_filter = ("kind", "desired_state")


@admin.register(ClusterState)
class ClusterStateAdmin(admin.ModelAdmin):
    list_display = ("cluster", "source", "loaded")


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("name", "cluster", "zone", "unschedulable")
    list_filter = ("cluster", "zone")
    search_fields = ("name",)


@admin.register(Pod)
class PodAdmin(admin.ModelAdmin):
    list_display = ("key", "cluster", "queue", "node_name", "priority", "attempts")
    list_filter = ("cluster", "queue")
    search_fields = ("name", "namespace", "uid")


@admin.register(SchedulingCycle)
class SchedulingCycleAdmin(admin.ModelAdmin):
    list_display = ("seq", "cluster", "pod_namespace", "pod_name", "attempt", "result", "node", "duration_ms", "started")
    list_filter = ("cluster", "result")
    search_fields = ("pod_name", "pod_namespace", "pod_uid", "node")
    show_full_result_count = False


@admin.register(SchedulingEvent)
class SchedulingEventAdmin(admin.ModelAdmin):
    list_display = ("time", "cluster", "type", "reason", "pod_namespace", "pod_name", "node")
    list_filter = ("cluster", "type", "reason")
    search_fields = ("pod_name", "message")
    show_full_result_count = False


@admin.register(QueueSnapshot)
class QueueSnapshotAdmin(admin.ModelAdmin):
    list_display = ("time", "cluster", "active", "backoff", "unschedulable", "gated", "bound", "cycles_per_second")
    list_filter = ("cluster",)
