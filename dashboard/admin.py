from django import forms
from django.contrib import admin

from .models import (Cluster, ClusterMembership, ClusterState, ClusterToken, Node, Pod, QueueSnapshot,
                     SchedulerProfile, SchedulingCycle, SchedulingEvent)
from .services import credentials, memberships, workload


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shown, never written here: the rows are written by a service that checks and audits every change."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(SchedulerProfile)
class SchedulerProfileAdmin(ReadOnlyAdmin):
    """Profiles change in the profile editor (/profiles/) or the API (dashboard.profiles.services)."""

    list_display = ("name", "created")
    search_fields = ("name",)


class ClusterMembershipInline(admin.TabularInline):
    """Who has which role on the cluster (the only way in to a restricted cluster, admins aside)."""

    model = ClusterMembership
    extra = 1
    autocomplete_fields = ("user",)
    readonly_fields = ("created",)


class SecretTextarea(forms.Textarea):
    """A textarea that never renders its value (a secret typed in is not sent back, not even on errors)."""

    def format_value(self, value):
        return None


class ClusterAdminForm(forms.ModelForm):
    """The cluster with a write-only kubeconfig document (stored encrypted, never shown again)."""

    kubeconfig_document = forms.CharField(
        required=False, strip=False, widget=SecretTextarea(attrs={"rows": 8, "autocomplete": "off"}),
        help_text="paste a kubeconfig (YAML) to store it encrypted, replacing the stored one; it is never shown")
    clear_kubeconfig = forms.BooleanField(required=False, help_text="remove the stored kubeconfig document")

    class Meta:
        model = Cluster
        fields = "__all__"

    def clean(self):
        data = super().clean()
        document, context = data.get("kubeconfig_document"), data.get("kube_context") or ""
        self.stored_summary = None
        try:
            if document:
                if data.get("clear_kubeconfig"):
                    self.add_error("clear_kubeconfig", "either paste a kubeconfig or clear it, not both")
                credentials.parse_kubeconfig(document, context)
            elif self.instance.kubeconfig_secret and not data.get("clear_kubeconfig") \
                    and context != self.instance.kube_context:
                self.stored_summary = credentials.stored_summary(self.instance, context)
        except credentials.KubeconfigInvalid as err:
            self.add_error("kubeconfig_document", str(err))
        except credentials.KubeconfigUnreadable as err:
            self.add_error("kube_context", str(err))
        if data.get("workload") is not None:
            for field, msgs in workload.spec_errors(data["workload"]).items():
                self.add_error("workload", [f"{field}: {m}" for m in msgs])
        return data


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    """Clusters, with their members; membership and ``restricted`` changes go to the audit log."""

    list_display = ("name", "kind", "restricted", "desired_state", "profile", "runner", "heartbeat")
    list_filter = ("kind", "restricted", "desired_state")
    inlines = (ClusterMembershipInline,)
    form = ClusterAdminForm
    readonly_fields = ("kubeconfig_status",)

    @admin.display(description="stored kubeconfig")
    def kubeconfig_status(self, obj):
        return credentials.kubeconfig_status(obj)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if form.cleaned_data.get("clear_kubeconfig"):
            credentials.set_kubeconfig(obj, "", request.user)
        elif form.cleaned_data.get("kubeconfig_document"):
            credentials.set_kubeconfig(obj, form.cleaned_data["kubeconfig_document"], request.user)
        elif form.stored_summary is not None:
            credentials.set_summary(obj, form.stored_summary, request.user)
        if "restricted" in form.changed_data:
            memberships.record_restricted(obj, request.user)

    def save_formset(self, request, form, formset, change):
        """The memberships inline (the only one) saves through services.memberships, which audits."""
        for membership in formset.save(commit=False):
            memberships.save(membership, request.user)
        for membership in formset.deleted_objects:
            memberships.delete(membership, request.user)


@admin.register(ClusterToken)
class ClusterTokenAdmin(admin.ModelAdmin):
    """Simulated clusters' API tokens (made on the Connect page, the API or ``manage.py clustertoken``): masked,
    revocable, never shown."""

    list_display = ("cluster", "name", "masked", "created", "created_by", "last_used", "revoked")
    list_filter = ("cluster",)
    fields = readonly_fields = ("cluster", "name", "masked", "created", "created_by", "last_used", "revoked")
    actions = ("revoke",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # revoked, not deleted: the record stays

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset.select_related("cluster"):
            credentials.revoke_token(token, request.user)


class StateViewOnly:
    """Nodes, pods and scenario objects are viewed here, not written: writes go through the API, scenarios and
    the Kubernetes API, which validate them (scheduler_core.objects.validation) and tell the cluster's loop."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ClusterState)
class ClusterStateAdmin(StateViewOnly, admin.ModelAdmin):
    list_display = ("cluster", "source", "loaded")


@admin.register(Node)
class NodeAdmin(StateViewOnly, admin.ModelAdmin):
    list_display = ("name", "cluster", "zone", "unschedulable")
    list_filter = ("cluster", "zone")
    search_fields = ("name",)


@admin.register(Pod)
class PodAdmin(StateViewOnly, admin.ModelAdmin):
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
