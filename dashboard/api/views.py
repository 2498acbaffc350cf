"""The REST API: clusters (with control actions), nodes, pods, cycles, events, profiles."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from scheduler_core.scenario import ScenarioError, load_documents

from ..models import Cluster, Node, Pod, SchedulerProfile, SchedulingCycle, SchedulingEvent
from ..services import clusters as svc
from ..services import fullmatrix
from ..services.queries import filter_cycles
from . import serializers as s


def _raise_400(err):
    if isinstance(err, svc.ValidationFailed):
        raise ValidationError(err.errors)
    raise ValidationError({"scenario": [str(err)]})


class ProfileViewSet(viewsets.ModelViewSet):
    queryset = SchedulerProfile.objects.order_by("name")
    serializer_class = s.ProfileSerializer
    lookup_field = "name"


class ClusterViewSet(viewsets.ModelViewSet):
    """Clusters; POST start/pause/stop/step/scenario drive the scheduler loop (editors); creating, changing
    and deleting clusters is for admins."""

    queryset = Cluster.objects.select_related("profile").order_by("name")
    serializer_class = s.ClusterSerializer
    lookup_field = "name"
    admin_actions = ("create", "update", "partial_update", "destroy")

    def perform_destroy(self, instance):
        svc.set_state(instance, Cluster.STOPPED)
        instance.delete()

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

    @extend_schema(request=s.StepSerializer)
    @action(detail=True, methods=["post"])
    def step(self, request, name=None):
        ser = s.StepSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        svc.step(self.get_object(), ser.validated_data["n"])
        return Response({"queued_steps": ser.validated_data["n"]}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=s.ScenarioSerializer)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, MultiPartParser, FormParser])
    def scenario(self, request, name=None):
        """Replace the cluster's nodes and pods with a scenario; nothing is written if it is invalid."""
        ser = s.ScenarioSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        cluster = self.get_object()
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
            counts = svc.load_scenario(cluster, data, label)
        except (ScenarioError, svc.ValidationFailed) as err:
            _raise_400(err)
        return Response(counts, status=status.HTTP_201_CREATED)


class ClusterChildMixin:
    def cluster(self):
        if not hasattr(self, "_cluster"):
            self._cluster = get_object_or_404(Cluster, name=self.kwargs["cluster_name"])
        return self._cluster


class NodeViewSet(ClusterChildMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                  viewsets.GenericViewSet):
    """Nodes of a cluster; POST a v1.Node manifest to add one."""

    serializer_class = s.NodeSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        qs = Node.objects.filter(cluster=self.cluster()).order_by("id")
        if self.request.query_params.get("zone"):
            qs = qs.filter(zone=self.request.query_params["zone"])
        return qs

    @extend_schema(request=s.ObjectSerializer, responses=s.NodeSerializer)
    def create(self, request, cluster_name=None):
        ser = s.ObjectSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        try:
            row = svc.add_node(self.cluster(), ser.validated_data["manifest"])
        except svc.ValidationFailed as err:
            _raise_400(err)
        return Response(s.NodeSerializer(row).data, status=status.HTTP_201_CREATED)

    def destroy(self, request, cluster_name=None, name=None):
        if not svc.delete_node(self.cluster(), name):
            return Response(status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PodViewSet(ClusterChildMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Pods with their queue state; filters: queue, node, namespace, q (name search), plugin."""

    serializer_class = s.PodSerializer
    lookup_value_regex = "[^/]+/[^/]+"
    lookup_url_kwarg = "key"

    @extend_schema(parameters=[OpenApiParameter("queue", str), OpenApiParameter("node", str),
                               OpenApiParameter("namespace", str), OpenApiParameter("q", str),
                               OpenApiParameter("plugin", str)])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        qs = Pod.objects.filter(cluster=self.cluster()).order_by("id")
        p = self.request.query_params
        if p.get("queue"):
            qs = qs.filter(queue=p["queue"])
        if p.get("node"):
            qs = qs.filter(node_name=p["node"])
        if p.get("namespace"):
            qs = qs.filter(namespace=p["namespace"])
        if p.get("q"):
            qs = qs.filter(name__icontains=p["q"])
        if p.get("plugin"):
            qs = qs.filter(plugins__contains=f",{p['plugin']},")
        return qs

    def get_object(self):
        ns, _, name = self.kwargs["key"].partition("/")
        return get_object_or_404(Pod, cluster=self.cluster(), namespace=ns, name=name)

    @extend_schema(request=s.ObjectSerializer, responses=s.PodSerializer)
    def create(self, request, cluster_name=None):
        ser = s.ObjectSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        try:
            row = svc.add_pod(self.cluster(), ser.validated_data["manifest"])
        except svc.ValidationFailed as err:
            _raise_400(err)
        return Response(s.PodSerializer(row).data, status=status.HTTP_201_CREATED)

    def destroy(self, request, cluster_name=None, key=None):
        svc.delete_pod(self.cluster(), self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


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
            f = s.CycleFilterSerializer(data=self.request.query_params)
            f.is_valid(raise_exception=True)
            qs = filter_cycles(qs.defer("matrix", "durations", "preemption"), f.validated_data)
        return qs


class EventViewSet(ClusterChildMixin, viewsets.ReadOnlyModelViewSet):
    """Scheduler events, newest first; filters: pod (namespace/name), reason, node, type."""

    serializer_class = s.EventSerializer
    queryset = SchedulingEvent.objects.none()  # for the schema; get_queryset scopes it

    @extend_schema(parameters=[OpenApiParameter("pod", str), OpenApiParameter("reason", str),
                               OpenApiParameter("node", str), OpenApiParameter("type", str)])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        qs = SchedulingEvent.objects.filter(cluster=self.cluster()).order_by("-time", "-id")
        p = self.request.query_params
        if p.get("pod"):
            ns, _, name = p["pod"].partition("/")
            qs = qs.filter(pod_namespace=ns, pod_name=name)
        for field in ("reason", "node", "type"):
            if p.get(field):
                qs = qs.filter(**{field: p[field]})
        return qs
