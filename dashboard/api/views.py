"""The REST API: clusters (with control actions and members), nodes, pods, cycles, events, profiles, what-if runs."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, Throttled, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from scheduler_core.scenario import ScenarioError, load_documents

from ..access import EDITOR, at_least, get_cluster, visible_clusters
from ..models import (Cluster, ClusterMembership, ClusterToken, Node, Pod, SchedulerProfile, SchedulingCycle,
                      SchedulingEvent, WhatIfRun)
from ..profiles import services as profiles
from ..profiles.models import ProfileVersion
from ..services import admitted, binding
from ..services import clusters as svc
from ..services import credentials, fullmatrix, memberships, timeline, whatif
from ..services.background import Busy
from ..services.queries import filter_cycles
from . import serializers as s
from .parsers import JSONParser
from .permissions import ClusterRolePermission
from .schema import object_request


class Refused(APIException):
    """A write the one admission path refuses other than as invalid: its status (403 Forbidden, 413 too large)
    and kube-apiserver's message."""

    def __init__(self, err: admitted.Refused):
        self.status_code = err.code
        super().__init__(err.message)


def _refuse(err):
    """Bad input as the API answers it: field errors (400), or a refusal's own status."""
    if isinstance(err, admitted.Refused) and err.code != 422:
        raise Refused(err) from None
    if isinstance(err, svc.ValidationFailed):
        raise ValidationError(err.errors) from None
    raise ValidationError({"scenario": [str(err)]}) from None


class ProfileViewSet(mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                     mixins.DestroyModelMixin, viewsets.GenericViewSet):
    """Scheduler profiles. No update: a document changes through ``versions/`` (a new version, then applied);
    deleting one needs the editor role on every cluster that uses it (they fall back to kube's defaults). Every
    write is audited (dashboard.profiles.services)."""

    queryset = SchedulerProfile.objects.order_by("name")
    serializer_class = s.ProfileSerializer
    lookup_field = "name"

    def get_queryset(self):
        return profiles.visible_profiles(self.request.user, super().get_queryset())

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:
            serializer.instance = profiles.create(data["name"], data.get("document") or {}, self.request.user)
        except profiles.Invalid as err:
            raise ValidationError(s.document_errors(err)) from None

    def perform_destroy(self, instance):
        profiles.delete(instance, self.request.user)


class VersionViewSet(mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                     viewsets.GenericViewSet):
    """Versions of a profile, newest first. POST saves a new one (not applied); ``apply`` makes a version the
    profile's running document, ``rollback`` saves an older one as the newest. Writes need the editor role on
    every cluster that uses the profile, as on the profile pages (dashboard.profiles.services)."""

    serializer_class = s.VersionSerializer
    lookup_field = "number"
    queryset = ProfileVersion.objects.none()  # for the schema; get_queryset scopes it

    def profile(self) -> SchedulerProfile:
        if not hasattr(self, "_profile"):
            self._profile = get_object_or_404(profiles.visible_profiles(self.request.user),
                                              name=self.kwargs["profile_name"])
            profiles.ensure_versions(self._profile)
        return self._profile

    def get_queryset(self):
        return ProfileVersion.objects.filter(profile=self.profile()).select_related("author").order_by("-number")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if "profile_name" in self.kwargs:
            active = profiles.active_version(self.profile())
            context["active_pk"] = active.pk if active is not None else None
        return context

    def perform_create(self, serializer):
        data = serializer.validated_data
        try:
            serializer.instance = profiles.save_version(self.profile(), data["document"], self.request.user,
                                                        data.get("comment", ""))
        except profiles.Invalid as err:
            raise ValidationError(s.document_errors(err)) from None

    @extend_schema(request=s.ApplySerializer, responses=s.AppliedSerializer)
    @action(detail=True, methods=["post"])
    def apply(self, request, profile_name=None, number=None):
        """Make the version the profile's running document (every cluster on it reloads); with ``cluster``,
        that cluster moves to the profile. 403 unless the user edits every cluster concerned."""
        version = self.get_object()
        ser = s.ApplySerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        name = ser.validated_data.get("cluster") or ""
        cluster = get_cluster(request.user, name, EDITOR)[0] if name else None
        try:
            targets = profiles.apply(version, request.user, cluster)
        except profiles.Invalid as err:
            raise ValidationError(s.document_errors(err)) from None
        return Response(s.AppliedSerializer({"version": version.number, "clusters": [c.name for c in targets]}).data)

    @extend_schema(request=None, responses={201: s.VersionSerializer})
    @action(detail=True, methods=["post"])
    def rollback(self, request, profile_name=None, number=None):
        """Save the version's document as the newest version (not applied)."""
        try:
            new = profiles.rollback(self.get_object(), request.user)
        except profiles.Invalid as err:
            raise ValidationError(s.document_errors(err)) from None
        return Response(self.get_serializer(new).data, status=status.HTTP_201_CREATED)


class ClusterViewSet(viewsets.ModelViewSet):
    """Clusters the user may see; POST start/pause/stop/step/scenario drive the scheduler loop (editors of the
    cluster); creating, changing (``restricted`` too) and deleting clusters is for admins."""

    queryset = Cluster.objects.select_related("profile").order_by("name")
    serializer_class = s.ClusterSerializer
    permission_classes = [ClusterRolePermission]
    lookup_field = "name"
    admin_actions = ("create", "update", "partial_update", "destroy")

    def get_queryset(self):
        return visible_clusters(self.request.user, super().get_queryset())

    def perform_create(self, serializer):
        cluster = serializer.save()
        if cluster.restricted:
            memberships.record_restricted(cluster, self.request.user)

    def perform_update(self, serializer):
        old = serializer.instance
        was, workload = old.restricted, old.workload
        rules = (old.kube_version, old.feature_gates, old.profile_id)
        cluster = serializer.save()
        if cluster.restricted != was:
            memberships.record_restricted(cluster, self.request.user)
        if cluster.workload != workload:
            svc.notify(cluster, "workload")   # the loop that drives the cluster starts or stops its generator
        if (cluster.kube_version, cluster.feature_gates, cluster.profile_id) != rules:
            svc.notify(cluster, "reload")

    def perform_destroy(self, instance):
        svc.delete_cluster(instance)

    def _state(self, request, name, state):
        cluster = self.get_object()
        svc.set_state(cluster, state)
        return Response(self.get_serializer(cluster).data)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def start(self, request, name=None):
        return self._state(request, name, Cluster.RUNNING)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def pause(self, request, name=None):
        return self._state(request, name, Cluster.PAUSED)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def stop(self, request, name=None):
        return self._state(request, name, Cluster.STOPPED)

    @extend_schema(request=s.StepSerializer, responses={202: s.QueuedStepsSerializer})
    @action(detail=True, methods=["post"])
    def step(self, request, name=None):
        cluster = self.get_object()
        ser = s.StepSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        svc.step(cluster, ser.validated_data["n"])
        return Response({"queued_steps": ser.validated_data["n"]}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=s.ScenarioSerializer, responses={201: s.ScenarioCountsSerializer})
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, MultiPartParser, FormParser])
    def scenario(self, request, name=None):
        """Replace the cluster's nodes and pods with a scenario; nothing is written if it is invalid."""
        cluster = self.get_object()
        ser = s.ScenarioSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        data, label = ser.validated_data.get("scenario"), "scenario"
        try:
            if data is None:
                upload = ser.validated_data["file"]
                label = upload.name
                try:
                    text = upload.read().decode("utf-8")
                except UnicodeDecodeError:
                    raise ValidationError({"file": ["not UTF-8 text"]}) from None
                docs = load_documents(text, label)
                data = docs[0] if len(docs) == 1 else docs
            counts = svc.load_scenario(cluster, data, label, user=request.user)
        except (ScenarioError, svc.ValidationFailed) as err:
            _refuse(err)
        return Response(counts, status=status.HTTP_201_CREATED)


class ClusterChildMixin:
    """Views below api/clusters/<cluster_name>/: the cluster, 404 unless the user may see it."""

    permission_classes = [ClusterRolePermission]

    def filters(self, serializer_class) -> dict:
        """The list's query filters, validated by ``serializer_class`` (400 for a bad one), without the empty ones;
        none for other actions."""
        if self.action != "list":
            return {}
        f = serializer_class(data=self.request.query_params.dict())  # a dict: an empty date is an error
        f.is_valid(raise_exception=True)
        return {k: v for k, v in f.validated_data.items() if v not in ("", None)}

    def cluster(self) -> Cluster:
        if not hasattr(self, "_cluster"):
            self._cluster, self._role = get_cluster(self.request.user, self.kwargs["cluster_name"])
        return self._cluster

    def cluster_role(self) -> str:
        """The user's role on the cluster (dashboard.access.cluster_role)."""
        self.cluster()
        return self._role


class MembershipViewSet(ClusterChildMixin, viewsets.ModelViewSet):
    """Who has a role on the cluster (by username); admins only. Changes are recorded in the audit log."""

    serializer_class = s.MembershipSerializer
    lookup_field = "user__username"
    lookup_url_kwarg = "username"
    lookup_value_regex = "[^/]+"
    queryset = ClusterMembership.objects.none()  # for the schema; get_queryset scopes it
    admin_actions = ("list", "retrieve", "create", "update", "partial_update", "destroy")

    def get_queryset(self):
        return (ClusterMembership.objects.filter(cluster=self.cluster()).select_related("user")
                .order_by("user__username"))

    def perform_create(self, serializer):
        serializer.instance = memberships.save(ClusterMembership(cluster=self.cluster(), **serializer.validated_data),
                                               self.request.user)

    def perform_update(self, serializer):
        for field, value in serializer.validated_data.items():
            setattr(serializer.instance, field, value)
        memberships.save(serializer.instance, self.request.user)

    def perform_destroy(self, instance):
        memberships.delete(instance, self.request.user)


class ClusterTokenViewSet(ClusterChildMixin, mixins.ListModelMixin, mixins.DestroyModelMixin,
                          viewsets.GenericViewSet):
    """API tokens of a simulated cluster's Kubernetes API (editors): listed masked; POST ``{"name": ...}`` makes
    one and answers its token and kubeconfig, the only time they are shown; DELETE revokes one."""

    serializer_class = s.ClusterTokenSerializer
    queryset = ClusterToken.objects.none()  # for the schema; get_queryset scopes it

    def get_queryset(self):
        cluster = self.cluster()
        if cluster.kind != Cluster.SIMULATED:
            raise NotFound("only simulated clusters have API tokens")
        if not at_least(self.cluster_role(), EDITOR):
            raise PermissionDenied("only editors can see a cluster's tokens")
        return ClusterToken.objects.filter(cluster=cluster).select_related("created_by")

    @extend_schema(responses={201: s.NewClusterTokenSerializer})
    def create(self, request, cluster_name=None):
        self.get_queryset()
        ser = self.get_serializer(data=request.data)
        ser.is_valid(raise_exception=True)
        cluster = self.cluster()
        row, token = credentials.create_token(cluster, ser.validated_data["name"], request.user)
        base = request.build_absolute_uri(f"/clusters/{cluster.name}/k8s")
        row.token, row.kubeconfig = token, credentials.kubeconfig_for_token(base, cluster.name, token)
        response = Response(s.NewClusterTokenSerializer(row).data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response

    def perform_destroy(self, instance):
        credentials.revoke_token(instance, self.request.user)


class NodeViewSet(ClusterChildMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                  viewsets.GenericViewSet):
    """Nodes of a cluster; POST a v1.Node (bare or in ``{"manifest": ...}``) to add one."""

    serializer_class = s.NodeSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    @extend_schema(parameters=[s.NodeFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        return Node.objects.filter(cluster=self.cluster(), **self.filters(s.NodeFilterSerializer)).order_by("id")

    @extend_schema(request=object_request("Node"), responses=s.NodeSerializer)
    def create(self, request, cluster_name=None):
        ser = s.ObjectSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        try:
            row = svc.add_node(self.cluster(), ser.validated_data["manifest"], request.user)
        except svc.ValidationFailed as err:
            _refuse(err)
        return Response(s.NodeSerializer(row).data, status=status.HTTP_201_CREATED)

    def destroy(self, request, cluster_name=None, name=None):
        try:
            deleted = svc.delete_node(self.cluster(), name, user=request.user)
        except svc.ValidationFailed as err:
            _refuse(err)
        if not deleted:
            raise NotFound(f'no node named "{name}"')
        return Response(status=status.HTTP_204_NO_CONTENT)


class PodViewSet(ClusterChildMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Pods with their queue state; filters: queue, node, namespace, q (name search), plugin. POST a v1.Pod (bare or
    in ``{"manifest": ...}``) to add one."""

    serializer_class = s.PodSerializer
    # pods/<namespace>/<name>/: two path parameters (dashboard.api.urls.ChildRouter), as a path parameter holding
    # a "/" is ambiguous in OpenAPI
    lookup_pattern = "(?P<namespace>[^/]+)/(?P<name>[^/]+)"

    @extend_schema(parameters=[s.PodFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        qs = Pod.objects.filter(cluster=self.cluster()).order_by("id")
        f = self.filters(s.PodFilterSerializer)
        if f.get("queue"):
            qs = qs.filter(queue=f["queue"])
        if f.get("node"):
            qs = qs.filter(node_name=f["node"])
        if f.get("namespace"):
            qs = qs.filter(namespace=f["namespace"])
        if f.get("q"):
            qs = qs.filter(name__icontains=f["q"])
        if f.get("plugin"):
            qs = qs.filter(plugins__contains=f",{f['plugin']},")
        return qs

    def get_object(self):
        return get_object_or_404(Pod, cluster=self.cluster(), namespace=self.kwargs["namespace"],
                                 name=self.kwargs["name"])

    @extend_schema(request=object_request("Pod"), responses=s.PodSerializer)
    def create(self, request, cluster_name=None):
        ser = s.ObjectSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        try:
            row = svc.add_pod(self.cluster(), ser.validated_data["manifest"], request.user)
        except svc.ValidationFailed as err:
            _refuse(err)
        return Response(s.PodSerializer(row).data, status=status.HTTP_201_CREATED)

    def destroy(self, request, cluster_name=None, namespace=None, name=None):
        try:
            svc.delete_pod(self.cluster(), self.get_object(), user=request.user)
        except svc.ValidationFailed as err:
            _refuse(err)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=s.BindingSerializer,
                   responses={201: s.BindingResultSerializer, 409: s.DetailSerializer, 503: s.DetailSerializer},
                   parameters=[OpenApiParameter("dryRun", str, enum=["All"],
                                                description="check only: nothing is bound (as kube's dryRun)")])
    @action(detail=True, methods=["post"])
    def binding(self, request, cluster_name=None, namespace=None, name=None):
        """Bind the pending pod to a node, as a Binding does (no Filter plugin runs; editors): 409 when it is
        bound already, 400 for a node that does not exist; ``rejections`` names the Filter plugins that reject
        the node. Audit-logged; see dashboard.services.binding."""
        pod = self.get_object()
        ser = s.BindingSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        meta = ser.validated_data.get("metadata") or {}
        if meta.get("name") and meta["name"] != pod.name:
            raise ValidationError({"metadata.name": [f'must be the name of the pod, "{pod.name}"']})
        dry_run = request.query_params.get("dryRun", "")
        if dry_run not in ("", "All"):
            raise ValidationError({"dryRun": [f'Unsupported value: "{dry_run}": supported values: "All"']})
        try:
            answer = binding.bind_pod(self.cluster(), pod, ser.validated_data["target"]["name"], request.user,
                                      uid=meta.get("uid", ""), dry_run=dry_run == "All")
        except binding.BindFailed as err:
            if err.status == status.HTTP_400_BAD_REQUEST and err.field:
                raise ValidationError({err.field: [err.message]}) from None
            body = {"detail": err.message}
            if err.field:
                body["field"] = err.field
            return Response(body, status=err.status)
        return Response(s.BindingResultSerializer(dict(answer, pod=pod.key)).data, status=status.HTTP_201_CREATED)


class CycleViewSet(ClusterChildMixin, viewsets.ReadOnlyModelViewSet):
    """Recorded scheduling cycles, newest first; the detail has the full filter/score matrices."""

    lookup_field = "seq"
    queryset = SchedulingCycle.objects.none()  # for the schema; get_queryset scopes it

    def get_serializer_class(self):
        return s.CycleDetailSerializer if self.action == "retrieve" else s.CycleSerializer

    @extend_schema(parameters=[s.CycleFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={200: s.FullMatrixSerializer, 409: s.DetailSerializer})
    @action(detail=True, methods=["get"], url_path="full-matrix")
    def full_matrix(self, request, *args, **kwargs):
        """The cycle's Filter and Score matrices recomputed over every node (dashboard.services.fullmatrix);
        409 when the cycle cannot be recomputed (its pod was deleted, or its profile no longer loads)."""
        cycle = self.get_object()
        try:
            out = fullmatrix.recompute(cycle)
        except fullmatrix.FullMatrixError as err:
            return Response({"detail": str(err)}, status=status.HTTP_409_CONFLICT)
        return Response(s.FullMatrixSerializer(dict(out, seq=cycle.seq)).data)

    def get_queryset(self):
        qs = SchedulingCycle.objects.filter(cluster=self.cluster()).order_by("-seq")
        if self.action == "list":
            qs = filter_cycles(qs.defer("matrix", "durations", "preemption"), self.filters(s.CycleFilterSerializer))
        return qs


class EventViewSet(ClusterChildMixin, viewsets.ReadOnlyModelViewSet):
    """Scheduler events, newest first; filters: pod (namespace/name), reason, node, type."""

    serializer_class = s.EventSerializer
    queryset = SchedulingEvent.objects.none()  # for the schema; get_queryset scopes it

    @extend_schema(parameters=[s.EventFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_serializer_context(self):
        if getattr(self, "swagger_fake_view", False):   # the schema's generation: no cluster
            return super().get_serializer_context()
        return dict(super().get_serializer_context(), editor=at_least(self.cluster_role(), EDITOR))

    def get_queryset(self):
        qs = SchedulingEvent.objects.filter(cluster=self.cluster()).order_by("-time", "-id")
        f = dict(self.filters(s.EventFilterSerializer))
        if "pod" in f:
            f["pod_namespace"], _, f["pod_name"] = f.pop("pod").partition("/")
        return qs.filter(**f)


class WhatIfViewSet(ClusterChildMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """What-if questions about the cluster, newest first (dashboard.services.whatif). POST asks one (editors): it
    answers 202 with the run, whose ``state``, ``percent`` and ``stage`` show the progress until ``result`` is set;
    ``traces/<number>/`` is a decision trace the result refers to."""

    queryset = WhatIfRun.objects.none()  # for the schema; get_queryset scopes it

    def get_serializer_class(self):
        return s.WhatIfQuestionSerializer if self.action == "create" else s.WhatIfRunSerializer

    def get_serializer_context(self):
        return dict(super().get_serializer_context(), cluster=self.cluster())

    def get_queryset(self):
        qs = WhatIfRun.objects.filter(cluster=self.cluster()).select_related("author", "version__profile",
                                                                             "compare_version__profile")
        return qs.defer("result") if self.action == "list" else qs

    @extend_schema(request=s.WhatIfQuestionSerializer, responses={202: s.WhatIfRunSerializer})
    def create(self, request, *args, **kwargs):
        ser = self.get_serializer(data=request.data)
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        try:
            run = whatif.create(self.cluster(), d["kind"], d["params"], request.user, d.get("version"),
                                d.get("compare_version"))
        except Busy as err:
            raise Throttled(detail=str(err)) from None
        whatif.start(run)
        return Response(s.WhatIfRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses={200: s.WhatIfTraceSerializer})
    @action(detail=True, methods=["get"], url_path=r"traces/(?P<number>[0-9]+)")
    def decision_trace(self, request, number, *args, **kwargs):
        trace = get_object_or_404(self.get_object().traces, number=number)
        return Response(s.WhatIfTraceSerializer(trace).data)


class TimelineView(ClusterChildMixin, APIView):
    """The event timeline of a window: swimlanes of the most recently active pods (bars where they waited,
    derived from their attempts by kube's queue rules; marks for attempts, bindings and deletions by preemption)
    and the events per bucket by reason, the bucket width following the window."""

    @extend_schema(parameters=[s.TimelineQuerySerializer], responses=s.TimelineSerializer)
    def get(self, request, cluster_name):
        q = s.TimelineQuerySerializer(data=request.query_params.dict())
        q.is_valid(raise_exception=True)
        params = {k: v for k, v in q.validated_data.items() if v not in ("", None)}
        return Response(timeline.timeline(self.cluster(), params))
