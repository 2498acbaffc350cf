"""DRF serializers. Writes validate with the scheduler core's own parsers (field-level errors, 400)."""
from __future__ import annotations

import copy

from django.contrib.auth import get_user_model
from django.db import models
from django.utils.functional import cached_property
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

from ..models import (Cluster, ClusterMembership, ClusterToken, Node, Pod, SchedulerProfile, SchedulingCycle,
                      SchedulingEvent, WhatIfRun, WhatIfTrace)
from ..profiles import services as profile_svc
from ..profiles.models import ProfileVersion
from ..services import credentials, kubeversions, timeline, timewindow, workload
from ..services.objectstore import ValidationFailed
from .parsers import JSONField


class StrictCharField(serializers.CharField):
    """A string field that takes only strings (DRF's CharField also turns numbers into strings)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ModelSerializer(serializers.ModelSerializer):
    """DRF's ModelSerializer with text columns as StrictCharField, and its fields built from the model once per
    class (then copied for each serializer, as DRF copies declared fields): building them walks the model's
    fields and costs more than serializing a row."""

    serializer_field_mapping = {**serializers.ModelSerializer.serializer_field_mapping,
                                models.CharField: StrictCharField, models.TextField: StrictCharField}

    def get_fields(self):
        built = type(self).__dict__.get("_built_fields")
        if built is None:
            built = super().get_fields()
            type(self)._built_fields = built
        return {name: _copied(field) for name, field in built.items()}


def _copied(field: serializers.Field) -> serializers.Field:
    """A copy of a field never bound to a serializer: shallow (binding sets only the copy's own attributes; DRF's
    deep copy builds the field again from its arguments, most of a row's serializing time), with its own copy of a
    list's or dict's child, whose parent it is; deep for a nested serializer or a relation."""
    if isinstance(field, serializers.BaseSerializer) or hasattr(field, "child_relation"):
        return copy.deepcopy(field)
    copied = object.__new__(type(field))   # copy.copy's result, without its protocol's cost
    copied.__dict__.update(field.__dict__)
    if hasattr(field, "child"):
        copied.child = _copied(field.child)   # bound to the original (as ListField binds it), now to the copy
        copied.child.parent = copied
    return copied


class AnswerSerializer(ModelSerializer):
    """A ModelSerializer for answers only (every field read-only, none reading the request's context): its fields
    are built and bound once per class, to an instance of their own, and its instances share them, as they only
    read them. Building and binding a copy of each field for every answer cost more than serializing the row
    (a pod's answer: 50 µs before, 23 µs after)."""

    @cached_property
    def fields(self):
        cls = type(self)
        bound = cls.__dict__.get("_bound_fields")
        if bound is None:
            bound = BindingDict(cls())
            for name, field in self.get_fields().items():
                bound[name] = field
            cls._bound_fields = bound
        return bound


class ProfileSerializer(ModelSerializer):
    """A scheduler profile. Its document is the running one (the active version's); it changes only through a
    new version (``versions/``), applied. ``document`` is written only when the profile is created (version 1)."""

    document = serializers.DictField(required=False, help_text="KubeSchedulerConfiguration ({}: kube's defaults)")
    active_version = serializers.SerializerMethodField()

    class Meta:
        model = SchedulerProfile
        fields = ["id", "name", "document", "active_version", "created"]
        read_only_fields = ["id", "created"]

    def get_active_version(self, obj) -> int | None:
        version = profile_svc.active_version(obj)
        return version.number if version is not None else None


def document_errors(err: profile_svc.Invalid) -> dict:
    """A profile document the core's loader refused (or a name refused), as a 400 body
    (dashboard.profiles.validate)."""
    out = {}
    for p in err.problems:
        key = "name" if p.stage == "name" else "document"
        out.setdefault(key, []).append(f"{p.path}: {p.message}" if p.path and not p.message.startswith(p.path)
                                       else p.message)
    return out


class VersionSerializer(ModelSerializer):
    """A saved version of a profile's document; ``active``: the one its clusters run."""

    document = serializers.DictField(help_text="KubeSchedulerConfiguration ({}: kube's defaults)")
    author = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    active = serializers.SerializerMethodField()

    class Meta:
        model = ProfileVersion
        fields = ["number", "document", "comment", "author", "created", "active"]
        read_only_fields = ["number", "author", "created"]

    def get_active(self, obj) -> bool:
        return obj.pk == self.context.get("active_pk")


class ApplySerializer(serializers.Serializer):
    """Apply a version: to the clusters on its profile, and to ``cluster`` (which then uses the profile)."""

    cluster = StrictCharField(required=False, allow_blank=True,
                              help_text="a cluster to move to the profile (editors of it); empty: only the clusters "
                                        "already on it")


class AppliedSerializer(serializers.Serializer):
    """An applied version and the clusters that reload their scheduler with it."""

    version = serializers.IntegerField()
    clusters = serializers.ListField(child=serializers.CharField())


class ProfileNameField(serializers.SlugRelatedField):
    """A scheduler profile by name, or null for kube's defaults; an empty name is an error, not null (DRF's
    related fields take "" for null)."""

    def run_validation(self, data=serializers.empty):
        if data == "":
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().run_validation(data)

    def get_queryset(self):
        """The profiles the requesting user may know of: another is answered as one that does not exist."""
        request = self.context.get("request")
        queryset = super().get_queryset()
        return queryset if request is None else profile_svc.visible_profiles(request.user, queryset)


class ClusterSerializer(ModelSerializer):
    """A cluster. A real cluster's kubeconfig document is written (``kubeconfig_document``; "" clears it) and
    never read back: reads show ``kubeconfig_status`` (server, context, user). ``kubeconfig`` is the path of a
    kubeconfig file on the workers instead (a mounted secret)."""

    profile = ProfileNameField(slug_field="name", queryset=SchedulerProfile.objects.all(), required=False,
                               allow_null=True)
    queue = serializers.SerializerMethodField()
    kubeconfig_document = StrictCharField(
        write_only=True, required=False, allow_blank=True, trim_whitespace=False,
        style={"base_template": "textarea.html"}, help_text="kubeconfig YAML, stored encrypted; never shown again")
    kubeconfig_status = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = ["id", "name", "kind", "kubeconfig", "kubeconfig_document", "kubeconfig_status", "kube_context",
                  "profile", "kube_version", "feature_gates", "server_version", "desired_state", "mode",
                  "tie_break", "seed", "workload", "restricted", "runner", "heartbeat", "created", "queue"]
        read_only_fields = ["desired_state", "server_version", "runner", "heartbeat", "created"]

    def get_queue(self, obj) -> dict:
        from ..services.queries import queue_counts
        return queue_counts(obj)

    def get_kubeconfig_status(self, obj) -> str:
        return credentials.kubeconfig_status(obj)

    def validate_workload(self, value):
        errors = workload.spec_errors(value) if value is not None else {}
        if errors:
            raise serializers.ValidationError([f"{k}: {m}" for k, msgs in errors.items() for m in msgs])
        return value

    def validate(self, attrs):
        current = self.instance
        document = attrs.get("kubeconfig_document")
        context = attrs.get("kube_context", current.kube_context if current else "")
        try:
            if document:
                credentials.parse_kubeconfig(document, context)
            elif document is None and current is not None and current.kubeconfig_secret \
                    and context != current.kube_context:
                self.stored_summary = credentials.stored_summary(current, context)
        except credentials.KubeconfigInvalid as err:
            raise serializers.ValidationError({"kubeconfig_document": [str(err)]}) from None
        except credentials.KubeconfigUnreadable as err:
            raise serializers.ValidationError({"kube_context": [str(err)]}) from None
        stored = document if document is not None else (current.kubeconfig_secret if current else "")
        path = attrs.get("kubeconfig", current.kubeconfig if current else "")
        if attrs.get("kind", current.kind if current else Cluster.SIMULATED) == Cluster.REAL and not (stored or path):
            raise serializers.ValidationError({"kubeconfig_document": [
                "required for a real cluster (or kubeconfig: the path of a kubeconfig file on the workers)"]})
        try:
            attrs.update(kubeversions.check_change(current, kind=attrs.get("kind"), **{
                k: attrs[k] for k in ("kube_version", "feature_gates", "profile") if k in attrs}))
        except ValidationFailed as err:
            raise serializers.ValidationError(err.errors) from None
        return attrs

    def _user(self):
        request = self.context.get("request")
        return request.user if request is not None else None

    def create(self, validated_data):
        document = validated_data.pop("kubeconfig_document", "")
        cluster = super().create(validated_data)
        credentials.set_kubeconfig(cluster, document, self._user())
        return cluster

    def update(self, instance, validated_data):
        document = validated_data.pop("kubeconfig_document", None)
        cluster = super().update(instance, validated_data)
        if document is not None:
            credentials.set_kubeconfig(cluster, document, self._user())
        elif hasattr(self, "stored_summary"):
            credentials.set_summary(cluster, self.stored_summary, self._user())
        return cluster


class ClusterTokenSerializer(ModelSerializer):
    """An API token of a simulated cluster, masked (its first characters)."""

    token = serializers.CharField(source="masked", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ClusterToken
        fields = ["id", "name", "token", "created", "created_by", "last_used", "revoked"]
        read_only_fields = ["id", "token", "created", "created_by", "last_used", "revoked"]


class NewClusterTokenSerializer(ClusterTokenSerializer):
    """A token just created: the only answer that holds the whole token, and its kubeconfig."""

    token = serializers.CharField(read_only=True)
    kubeconfig = serializers.CharField(read_only=True)

    class Meta(ClusterTokenSerializer.Meta):
        fields = ClusterTokenSerializer.Meta.fields + ["kubeconfig"]


class MembershipSerializer(ModelSerializer):
    """A user's role on the cluster of the URL (one membership per user and cluster)."""

    user = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())

    class Meta:
        model = ClusterMembership
        fields = ["user", "role", "created"]
        read_only_fields = ["created"]

    def validate_user(self, user):
        others = ClusterMembership.objects.filter(cluster=self.context["view"].cluster(), user=user)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise serializers.ValidationError(f"{user.get_username()} already has a role on this cluster")
        return user


class NodeSerializer(AnswerSerializer):
    class Meta:
        model = Node
        fields = ["name", "zone", "labels", "taints", "unschedulable", "allocatable", "raw", "created"]
        read_only_fields = fields


class PodSerializer(AnswerSerializer):
    plugins = serializers.ListField(source="plugin_list", child=serializers.CharField(), read_only=True)

    class Meta:
        model = Pod
        fields = ["uid", "namespace", "name", "labels", "priority", "scheduler_name", "cpu_m", "memory",
                  "node_name", "queue", "attempts", "reason", "plugins", "last_cycle", "created", "bound_at", "raw"]
        read_only_fields = fields


class ObjectSerializer(serializers.Serializer):
    """A v1.Node or v1.Pod to create: the object itself (a body with ``apiVersion``, ``kind`` or ``metadata`` at the
    top, as kubectl sends it) or wrapped, ``{"manifest": {...}}``. Either is validated by the same
    ``dashboard.services.clusters.checked`` (a wrong ``kind`` or ``apiVersion`` included)."""

    OBJECT_KEYS = ("apiVersion", "kind", "metadata")

    manifest = serializers.DictField(error_messages={
        "required": 'give the object itself (with "apiVersion", "kind" and "metadata" at the top) or '
                    '{{"manifest": {{...}}}}'})   # a format string

    def to_internal_value(self, data):
        if isinstance(data, dict) and any(key in data for key in self.OBJECT_KEYS):
            data = {"manifest": data}
        return super().to_internal_value(data)


class ScenarioSerializer(serializers.Serializer):
    """A scenario document (golden format or a List) as JSON, or a file upload (JSON or YAML)."""

    scenario = JSONField(required=False)
    file = serializers.FileField(required=False)

    def validate(self, attrs):
        if attrs.get("scenario") is None and attrs.get("file") is None:
            raise serializers.ValidationError({"scenario": ["give a scenario document or a file"]})
        return attrs


class StepSerializer(serializers.Serializer):
    n = serializers.IntegerField(min_value=1, max_value=10000, default=1)


class QueuedStepsSerializer(serializers.Serializer):
    """The answer to a step request: how many cycles the loop was asked to run."""

    queued_steps = serializers.IntegerField()


class ScenarioCountsSerializer(serializers.Serializer):
    """What a loaded scenario holds."""

    nodes = serializers.IntegerField()
    bound = serializers.IntegerField()
    pending = serializers.IntegerField()


class CycleSerializer(ModelSerializer):
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
    """Query filters of the cycle list (as for every list's filters, an empty one is no filter)."""

    pod = serializers.CharField(required=False, allow_blank=True, help_text="namespace/name or uid")
    node = serializers.CharField(required=False, allow_blank=True)
    plugin = serializers.CharField(required=False, allow_blank=True,
                                   help_text="a plugin that rejected at least one node")
    result = serializers.ChoiceField(choices=[c for c, _ in SchedulingCycle.RESULTS], required=False,
                                     allow_blank=True)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)


class NodeFilterSerializer(serializers.Serializer):
    zone = serializers.CharField(required=False, allow_blank=True)


class PodFilterSerializer(serializers.Serializer):
    queue = serializers.ChoiceField(choices=[c for c, _ in Pod.QUEUES], required=False, allow_blank=True)
    node = serializers.CharField(required=False, allow_blank=True)
    namespace = serializers.CharField(required=False, allow_blank=True)
    q = serializers.CharField(required=False, allow_blank=True, help_text="part of the name")
    plugin = serializers.CharField(required=False, allow_blank=True, help_text="a plugin that rejected the pod")


class EventFilterSerializer(serializers.Serializer):
    pod = serializers.CharField(required=False, allow_blank=True, help_text="namespace/name")
    reason = serializers.CharField(required=False, allow_blank=True)
    node = serializers.CharField(required=False, allow_blank=True)
    type = serializers.CharField(required=False, allow_blank=True)


class EventSerializer(ModelSerializer):
    """An event; ``message`` as the user may read it (``SchedulingEvent.message_for``: the context's ``editor``)."""

    message = serializers.SerializerMethodField()

    def get_message(self, obj) -> str:
        return obj.message_for(self.context.get("editor", False))

    class Meta:
        model = SchedulingEvent
        fields = ["id", "time", "type", "reason", "pod_uid", "pod_namespace", "pod_name", "node", "message",
                  "cycle_seq"]


class BindingTargetSerializer(serializers.Serializer):
    """A Binding's target: the node (kind Node)."""

    apiVersion = StrictCharField(required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=["Node"], required=False, default="Node")
    name = StrictCharField(max_length=253)


class BindingMetaSerializer(serializers.Serializer):
    """A Binding's metadata: name (the pod's, if given) and uid (a precondition on the pod's uid)."""

    name = StrictCharField(required=False, allow_blank=True)
    namespace = StrictCharField(required=False, allow_blank=True)
    uid = StrictCharField(required=False, allow_blank=True)


class BindingSerializer(serializers.Serializer):
    """kube's v1 Binding, as kubectl or a custom scheduler POSTs it to pods/<name>/binding."""

    apiVersion = StrictCharField(required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=["Binding"], required=False, default="Binding")
    metadata = BindingMetaSerializer(required=False)
    target = BindingTargetSerializer()


class BindingResultSerializer(serializers.Serializer):
    """A manual binding that was made: the node, the Filter plugins that reject it ({plugin: reason}), the
    ManualBinding event's text, and whether the database had stored it when the answer was sent."""

    pod = serializers.CharField()
    node = serializers.CharField()
    rejections = serializers.DictField(child=serializers.CharField())
    message = serializers.CharField()
    stored = serializers.BooleanField(allow_null=True, help_text="null for a dry run")


class WhatIfRunSerializer(ModelSerializer):
    """A what-if run: the question, its progress and, once done, the answer (traces by number, see ``traces/``)."""

    author = serializers.SlugRelatedField(slug_field="username", read_only=True)
    version = serializers.SerializerMethodField()
    compare_version = serializers.SerializerMethodField()
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = WhatIfRun
        fields = ["id", "kind", "params", "version", "compare_version", "author", "created", "state", "stage", "done",
                  "total", "percent", "seconds", "error", "result"]

    def _label(self, v) -> str | None:
        return f"{v.profile.name}:{v.number}" if v is not None else None

    def get_version(self, obj) -> str | None:
        return self._label(obj.version)

    def get_compare_version(self, obj) -> str | None:
        return self._label(obj.compare_version)


@extend_schema_field(OpenApiTypes.STR)
class VersionRefField(serializers.Field):
    """A saved profile version as ``NAME`` (its active version) or ``NAME:N``."""

    def to_internal_value(self, data):
        found = profile_svc.find_version(data)
        request = self.context.get("request")
        if found is not None and request is not None and \
                not profile_svc.visible_profiles(request.user).filter(pk=found.profile_id).exists():
            found = None   # a profile the asker may not know of is answered as one that does not exist
        if found is None:
            raise serializers.ValidationError(f"no saved profile version {data!r} (NAME or NAME:N)")
        return found

    def to_representation(self, value):
        return f"{value.profile.name}:{value.number}"


class WhatIfQuestionSerializer(serializers.Serializer):
    """A question: ``kind`` and its fields (capacity: ``manifest`` (object or YAML text) or ``like``
    (namespace/name), ``max_copies``, ``preemption``, ``compare_version``; drain: ``nodes``, ``selector``; add-nodes:
    ``manifest`` or ``like`` (a node name), ``count``, ``targets``), validated as the What if page validates them."""

    kind = serializers.ChoiceField(choices=[k for k, _ in WhatIfRun.KINDS])
    version = VersionRefField(required=False)
    compare_version = VersionRefField(required=False)
    manifest = serializers.JSONField(required=False, help_text="a manifest object, or YAML/JSON text")
    like = serializers.CharField(required=False)
    max_copies = serializers.IntegerField(required=False)
    preemption = serializers.BooleanField(required=False)
    nodes = serializers.ListField(child=serializers.CharField(), required=False)
    selector = serializers.CharField(required=False, allow_blank=True)
    count = serializers.IntegerField(required=False)
    targets = serializers.ListField(child=serializers.CharField(), required=False)

    def validate(self, attrs):
        from ..services import whatif
        try:
            attrs["params"] = whatif.question(self.context["cluster"], attrs["kind"], attrs)
        except whatif.QuestionError as err:
            raise serializers.ValidationError(err.errors) from None
        return attrs


class WhatIfTraceSerializer(ModelSerializer):
    class Meta:
        model = WhatIfTrace
        fields = ["number", "pod_namespace", "pod_name", "profile", "result", "node", "message", "num_nodes",
                  "num_feasible", "failing_plugins", "preemption", "suggestions", "matrix"]


class WindowField(serializers.CharField):
    """A time window as services.timewindow reads it ("90s", "15m", "1h", "7d"; a bare number is minutes)."""

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        try:
            return timewindow.parse_window(text)
        except ValueError as err:
            raise serializers.ValidationError(str(err)) from None


class TimelineQuerySerializer(serializers.Serializer):
    """The window and filters of the event timeline (as the events page takes them)."""

    window = WindowField(required=False, help_text='"90s", "15m", "1h", "7d" (a bare number: '
                                                                  "minutes); default 1h")
    until = serializers.DateTimeField(required=False, help_text="the window's end; default now (a live window)")
    pod = serializers.CharField(required=False, allow_blank=True, max_length=1000,
                                help_text="namespace/name prefix, or a name prefix")
    namespace = serializers.CharField(required=False, allow_blank=True, max_length=1000)
    node = serializers.CharField(required=False, allow_blank=True, max_length=1000,
                                 help_text="pods attempted on this node or with an event naming it")
    reason = serializers.CharField(required=False, allow_blank=True, max_length=1000,
                                   help_text="pods with an event of this reason in the window")
    lanes = serializers.IntegerField(required=False, min_value=1, max_value=timeline.MAX_LANES,
                                     help_text=f"pods shown; default {timeline.DEFAULT_LANES}")

    def validate(self, data):
        if data.get("until") is not None:
            try:
                timewindow.bounds(data.get("window") or timewindow.DEFAULT, data["until"], data["until"])
            except ValueError as err:
                raise serializers.ValidationError({"until": [str(err)]}) from None
        return data


class TimelineSegmentSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(timeline.WAITING), help_text="the queue the pod waited in")
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    open = serializers.BooleanField(help_text="it waits there now: the bar extends to the present")


class TimelineMarkSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["attempt", "bound", "deleted"],
                                   help_text="an attempt, the binding, or the deletion by preemption")
    time = serializers.DateTimeField()
    seq = serializers.IntegerField(required=False, help_text="attempt: the cycle's seq")
    attempt = serializers.IntegerField(required=False, help_text="attempt: the pod's attempt count")
    result = serializers.ChoiceField(choices=SchedulingCycle.RESULTS, required=False)
    ms = serializers.FloatField(required=False, help_text="attempt: how long the cycle took")
    reason = serializers.CharField(required=False, help_text="bound, deleted: the event's reason")
    node = serializers.CharField(allow_blank=True)
    message = serializers.CharField(allow_blank=True)


class TimelineLaneSerializer(serializers.Serializer):
    pod = serializers.CharField(help_text="namespace/name")
    namespace = serializers.CharField()
    name = serializers.CharField()
    state = serializers.CharField(help_text="its queue now, bound, or gone (deleted)")
    node = serializers.CharField(allow_blank=True)
    hidden_attempts = serializers.IntegerField(help_text="older attempts in the window not sent (zoom in)")
    segments = TimelineSegmentSerializer(many=True)
    marks = TimelineMarkSerializer(many=True)


class HistogramSerializer(serializers.Serializer):
    buckets = serializers.ListField(child=serializers.DateTimeField(), help_text="each bucket's start")
    reasons = serializers.ListField(child=serializers.CharField())
    series = serializers.DictField(child=serializers.ListField(child=serializers.IntegerField()),
                                   help_text="per reason, events per bucket")
    bucket_seconds = serializers.IntegerField()


class TimelineSerializer(serializers.Serializer):
    """Swimlanes of pods (services.timeline: what the bars mean) and the events histogram of one window."""

    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    window = serializers.CharField()
    live = serializers.BooleanField(help_text="the window ends now")
    bucket_seconds = serializers.IntegerField()
    histogram = HistogramSerializer()
    lanes = TimelineLaneSerializer(many=True)
    more = serializers.BooleanField(help_text="more pods matched than lanes were asked for")
