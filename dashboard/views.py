"""Server-rendered pages (thin: the data comes from services.queries and services.traceview)."""
from __future__ import annotations

from datetime import timezone as dt_timezone

import yaml

from django.conf import settings
from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpResponse, JsonResponse
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.contrib.auth.decorators import login_not_required
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_POST

from scheduler_core.scenario import ScenarioError
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .access import EDITOR, at_least, cluster_view, event_messages, visible_clusters
from .forms import FORMS, NODE_EXAMPLE, POD_EXAMPLE, KubeVersionForm, ManifestForm, ScenarioUploadForm
from .models import Cluster, Node, Pod, SchedulingEvent, WhatIfRun
from .queryforms import EventsQuery, NodesQuery, PendingQuery, PodQuery, ShadowQuery, query_form
from .services import clusters as svc
from .services.background import Busy
from .services import (binding, bindfit, kubeversions, metrics, pendingview, podview, queries, rejections, shadowview,
                       timewindow, traceview, whatif)


def index(request):
    clusters = list(visible_clusters(request.user).order_by("name"))
    if len(clusters) == 1:
        return redirect("overview", name=clusters[0].name)
    return render(request, "dashboard/index.html", {"clusters": clusters})


@cluster_view()
def overview(request, cluster):
    return render(request, "dashboard/overview.html", {
        "cluster": cluster, "live": queries.live_state(cluster),
        "kube": kubeversions.describe(cluster), "kube_form": KubeVersionForm(cluster),
        "plugins": queries.blocking_plugins(cluster), "groups": rejections.pending_groups(cluster),
        "nodes": queries.node_usage(cluster, limit=15),
        "events": event_messages(SchedulingEvent.objects.filter(cluster=cluster).order_by("-time", "-id")[:15],
                                 request.cluster_role),
        "snapshot_data": queries.queue_history(cluster),
    })


@require_POST
@cluster_view(EDITOR)
def control(request, cluster, op):
    states = {"start": Cluster.RUNNING, "pause": Cluster.PAUSED, "stop": Cluster.STOPPED}
    if op in states:
        svc.set_state(cluster, states[op])
    elif op == "step":
        svc.step(cluster, 1)
    else:
        raise Http404(op)
    nxt = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(nxt, {request.get_host()}, request.is_secure()):
        nxt = reverse("overview", args=[cluster.name])
    return redirect(nxt)


@require_POST
@cluster_view(EDITOR)
def kube_version(request, cluster):
    """Change the Kubernetes version and feature gates the cluster's scheduler runs (a running loop reloads)."""
    form = KubeVersionForm(cluster, request.POST)
    if form.is_valid():
        try:
            svc.set_kube_version(cluster, form.cleaned_data["kube_version"], form.cleaned_data["feature_gates"],
                                 request.user)
        except svc.ValidationFailed as err:
            for field, problems in err.errors.items():
                for problem in problems:
                    messages.error(request, f"{field}: {problem}")
        else:
            messages.success(request, f"the scheduler now runs {kubeversions.describe(cluster)['text']}")
    else:
        for field, problems in form.errors.items():
            for problem in problems:
                messages.error(request, f"{field}: {problem}")
    return redirect("overview", name=cluster.name)


AGES = [("60", "1 min"), ("600", "10 min"), ("3600", "1 h"), ("86400", "1 day")]


@cluster_view()
@query_form(PendingQuery)
def pending(request, cluster, query):
    params = request.GET.copy()
    params.pop("page", None)
    ctx = pendingview.page_context(cluster, query)
    return render(request, "dashboard/pending.html", dict(
        ctx, cluster=cluster, params=params.urlencode(), f=request.GET, queues=queries.PENDING_QUEUES, ages=AGES,
        filtered=bool(set(query) - {"sort", "page"})))


@cluster_view()
@query_form(PodQuery)
def pod(request, cluster, namespace, pod_name, query):
    ctx = podview.pod_context(cluster, namespace, pod_name, query)
    if ctx is None:
        raise Http404(f"{namespace}/{pod_name}")
    params = request.GET.copy()
    for k in ("fpage", "spage", "apage", "epage"):
        params.pop(k, None)
    bind_node = query.get("bind", "")
    ctx.update(cluster=cluster, params=params.urlencode(), bind_node=bind_node)
    if ctx["pod"] is not None and not ctx["pod"].node_name and cluster.kind == Cluster.SIMULATED:
        ctx["can_bind"] = at_least(request.cluster_role, EDITOR)
        if ctx["can_bind"] and set(query) & {"binding", "bind", "bq"}:
            ctx["bind_choices"] = bindfit.node_choices(cluster, ctx["pod"], q=query.get("bq", ""), chosen=bind_node)
            ctx["bind_confirm"] = bool(bind_node) and query.get("confirm") == "1"
    return render(request, "dashboard/pod.html", ctx)


@require_POST
@cluster_view(EDITOR)
def pod_bind(request, cluster, namespace, pod_name):
    """The pod page's "Bind manually" form: check (dry run) or bind, then back to the pod with the outcome."""
    pod_row = get_object_or_404(Pod, cluster=cluster, namespace=namespace, name=pod_name)
    node_name = request.POST.get("node", "")
    url = reverse("pod", args=[cluster.name, namespace, pod_name])
    check = "check" in request.POST
    uid = request.POST.get("uid", "")
    try:
        if check:
            answer = binding.bind_pod(cluster, pod_row, node_name, request.user, uid=uid, dry_run=True)
        else:
            answer = binding.bind_unless_rejected(cluster, pod_row, node_name, request.user, uid=uid,
                                                  confirmed=request.POST.get("confirmed") == "1")
    except binding.BindFailed as err:
        messages.error(request, err.message)
    else:
        (messages.warning if answer["rejections"] else messages.success)(request, answer["message"])
        if answer.get("asked"):
            return redirect(f"{url}?{urlencode({'bind': node_name, 'confirm': '1'})}#bind")
        if check:
            return redirect(f"{url}?{urlencode({'bind': node_name})}#bind")
    return redirect(url)


SIMULATED_EDITOR = dict(needed=EDITOR, kind=Cluster.SIMULATED)   # object editors: simulated clusters, editors


MANIFEST_ORDER = ("apiVersion", "kind", "metadata", "spec", "status")


def manifest_text(raw: dict, drop=()) -> str:
    """An object as the editor shows it: YAML, apiVersion, kind, metadata, spec and status first, without ``drop``."""
    keys = [k for k in MANIFEST_ORDER if k in raw] + [k for k in raw if k not in MANIFEST_ORDER]
    return yaml.safe_dump({k: raw[k] for k in keys if k not in drop}, sort_keys=False, default_flow_style=False)


def editor_page(request, cluster, title: str, initial: str, write, done, back: str, note: str = ""):
    """The Node and Pod editor: GET shows ``initial``; POST writes through ``write`` (a services.clusters writer)
    and redirects to ``done(row)``, or shows the validator's errors at their lines; Cancel goes to ``back``."""
    form = ManifestForm(request.POST or None, initial={"manifest": initial})
    if request.method == "POST" and form.is_valid():
        row = form.save(write)
        if row is not None:
            messages.success(request, f"{title}: saved")
            return redirect(done(row))
    return render(request, "dashboard/object_edit.html", {"cluster": cluster, "form": form, "title": title,
                                                          "note": note, "back": back})


@cluster_view(**SIMULATED_EDITOR)
def node_new(request, cluster):
    return editor_page(request, cluster, "New node", NODE_EXAMPLE, lambda doc: svc.add_node(cluster, doc, request.user),
                       lambda row: reverse("node", args=[cluster.name, row.name]),
                       reverse("nodes", args=[cluster.name]))


@cluster_view(**SIMULATED_EDITOR)
def node_edit(request, cluster, node_name):
    row = get_object_or_404(Node, cluster=cluster, name=node_name)
    return editor_page(request, cluster, f"Node {node_name}", manifest_text(row.raw),
                       lambda doc: svc.update_node(cluster, row, doc, request.user),
                       lambda saved: reverse("node", args=[cluster.name, node_name]),
                       reverse("node", args=[cluster.name, node_name]),
                       note="name, uid and creation time stay; the status is what the simulated kubelet reports")


@cluster_view(**SIMULATED_EDITOR)
def pod_new(request, cluster):
    return editor_page(request, cluster, "New pod", POD_EXAMPLE, lambda doc: svc.add_pod(cluster, doc, request.user),
                       lambda row: reverse("pod", args=[cluster.name, row.namespace, row.name]),
                       reverse("pending", args=[cluster.name]))


@cluster_view(**SIMULATED_EDITOR)
def pod_edit(request, cluster, namespace, pod_name):
    row = get_object_or_404(Pod, cluster=cluster, namespace=namespace, name=pod_name)
    return editor_page(request, cluster, f"Pod {row.key}", manifest_text(row.raw, drop=("status",)),
                       lambda doc: svc.update_pod(cluster, row, doc, request.user),
                       lambda saved: reverse("pod", args=[cluster.name, namespace, pod_name]),
                       reverse("pod", args=[cluster.name, namespace, pod_name]),
                       note="as kube allows a pod update: labels and annotations, added tolerations, removed "
                            "scheduling gates, images, deadlines (node selection too while the pod is gated); "
                            "for any other change delete the pod and create it anew")


@cluster_view(**SIMULATED_EDITOR)
def node_delete(request, cluster, node_name):
    """Confirmation (GET), then the node and the pods bound to it are deleted (POST)."""
    get_object_or_404(Node, cluster=cluster, name=node_name)
    if request.method == "POST":
        svc.delete_node(cluster, node_name, request.user)
        messages.success(request, f"node {node_name} deleted")
        return redirect("nodes", name=cluster.name)
    bound = Pod.objects.filter(cluster=cluster, node_name=node_name).count()
    return render(request, "dashboard/object_delete.html", {
        "cluster": cluster, "what": f"node {node_name}", "back": reverse("node", args=[cluster.name, node_name]),
        "consequence": f"The {bound} pod{'' if bound == 1 else 's'} bound to it are deleted with it, as the pod "
                       f"garbage collector does." if bound else "No pod is bound to it."})


@cluster_view(**SIMULATED_EDITOR)
def pod_delete(request, cluster, namespace, pod_name):
    """Confirmation (GET), then the pod is deleted (POST)."""
    row = get_object_or_404(Pod, cluster=cluster, namespace=namespace, name=pod_name)
    if request.method == "POST":
        svc.delete_pod(cluster, row, request.user)
        messages.success(request, f"pod {row.key} deleted")
        return redirect("pending", name=cluster.name)
    return render(request, "dashboard/object_delete.html", {
        "cluster": cluster, "what": f"pod {row.key}", "back": reverse("pod", args=[cluster.name, namespace, pod_name]),
        "consequence": f"It is bound to {row.node_name}; the node's resources are freed." if row.node_name
        else "It leaves the scheduling queue; its recorded cycles remain."})


@cluster_view(**SIMULATED_EDITOR)
def scenario_upload(request, cluster):
    """Replace the cluster's nodes, pods and objects with an uploaded scenario or List."""
    form = ScenarioUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            counts = svc.load_scenario(cluster, form.data_loaded, upload.name, user=request.user)
        except (ScenarioError, svc.ValidationFailed) as err:
            form.add_error("file", str(err))
        else:
            messages.success(request, f"{upload.name}: {counts['nodes']} nodes, {counts['bound']} bound and "
                                      f"{counts['pending']} pending pods loaded")
            return redirect("overview", name=cluster.name)
    return render(request, "dashboard/scenario_upload.html", {"cluster": cluster, "form": form})


@cluster_view()
@query_form(ShadowQuery)
def shadow(request, cluster, query):
    ctx = shadowview.page_context(cluster, query)
    return render(request, "dashboard/shadow.html", dict(ctx, cluster=cluster))


NODES_PAGE = 25


@cluster_view()
@query_form(NodesQuery)
def nodes(request, cluster, query):
    page = queries.node_page(cluster, query.get("sort", "util"), query.get("q", ""), query.get("page", 1), NODES_PAGE)
    params = request.GET.copy()
    params.pop("page", None)
    return render(request, "dashboard/nodes.html", {"cluster": cluster, "page": page, "f": request.GET,
                                                    "params": params.urlencode()})


@cluster_view()
def node(request, cluster, node_name):
    node_row = get_object_or_404(Node, cluster=cluster, name=node_name)
    usage = next(r for r in queries.node_usage(cluster, q=node_name) if r["pk"] == node_row.pk)
    pods = Pod.objects.filter(cluster=cluster, node_name=node_name).order_by("namespace", "name")[:500]
    rej = queries.node_rejections(cluster, node_name)
    return render(request, "dashboard/node.html", {
        "cluster": cluster, "n": node_row, "usage": usage, "pods": pods, "rejected": rej["rows"][:50],
        "by_plugin": rej["by_plugin"], "checked": rej["checked"]})


@cluster_view()
@query_form(EventsQuery)
def events(request, cluster, query):
    """The event timeline: swimlanes of pods (drawn from the timeline API) over the histogram and the events."""
    data = queries.events_page(cluster, query)
    data["page"].object_list = event_messages(data["page"].object_list, request.cluster_role)
    params = request.GET.copy()
    params.pop("page", None)
    filtered = bool(set(query) & {"pod", "node", "namespace", "reason", "until"})
    windows = list(timewindow.CHOICES)
    if data["window"] not in dict(windows):
        windows.append((data["window"], data["window"]))
    until = query.get("until")
    ctx = dict(data, cluster=cluster, f=request.GET, params=params.urlencode(), windows=windows, filtered=filtered,
               until_value=until.astimezone(dt_timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") if until else "",
               timeline_url=reverse("cluster-timeline", args=[cluster.name]))
    return render(request, "dashboard/events.html", ctx)


WHATIF_RUNS_SHOWN = 20


@cluster_view()
def whatif_page(request, cluster):
    """The three questions (editors ask; everyone reads the answers) and the cluster's recent runs."""
    forms_by_kind = {k: cls(cluster, user=request.user) for k, cls in FORMS.items()}
    kind = request.POST.get("kind") if request.method == "POST" else None
    if kind is not None:
        if not at_least(request.cluster_role, EDITOR):
            raise PermissionDenied(f"asking needs the editor role on cluster {cluster.name}")
        form_class = FORMS.get(kind)
        if form_class is None:
            raise Http404(kind)
        form = forms_by_kind[kind] = form_class(cluster, request.POST, user=request.user)
        if form.is_valid():
            d = form.cleaned_data
            try:
                run = whatif.create(cluster, kind, d["params"], request.user, d.get("version"),
                                    d.get("compare_version"))
            except Busy as err:
                form.add_error(None, str(err))
            else:
                whatif.start(run)
                return redirect("whatif-run", name=cluster.name, run_id=run.pk)
    active = kind or (request.GET.get("q") if request.GET.get("q") in FORMS else WhatIfRun.CAPACITY)
    return render(request, "dashboard/whatif.html", {
        "cluster": cluster, "form": forms_by_kind[active], "active": active,
        "runs": cluster.whatif_runs.select_related("author")[:WHATIF_RUNS_SHOWN], "limits": whatif.limits(),
        "can_ask": at_least(request.cluster_role, EDITOR)})


@cluster_view()
def whatif_run(request, cluster, run_id):
    run = get_object_or_404(WhatIfRun.objects.select_related("version__profile", "compare_version__profile"),
                            cluster=cluster, pk=run_id)
    return render(request, "dashboard/whatif_run.html", dict(whatif.result_context(run), cluster=cluster, run=run))


@cluster_view()
def whatif_drain_pods(request, cluster, run_id, section):
    """Every pod of one section of a drain's answer, or of one group of it (``?key=``), paged."""
    run = get_object_or_404(WhatIfRun, cluster=cluster, pk=run_id)
    found = whatif.drain_pods(run, section, request.GET.get("key"), request.GET.get("page", 1))
    if found is None:
        raise Http404("no such section or group in this run's answer")
    params = request.GET.copy()
    params.pop("page", None)
    return render(request, "dashboard/whatif_drain_pods.html", dict(
        found, cluster=cluster, run=run, section=section, key=request.GET.get("key"), params=params.urlencode()))


@cluster_view()
def whatif_status(request, cluster, run_id):
    run = get_object_or_404(WhatIfRun, cluster=cluster, pk=run_id)
    return JsonResponse({"state": run.state, "stage": run.stage, "done": run.done, "total": run.total,
                         "percent": run.percent, "error": run.error})


@cluster_view()
def whatif_trace(request, cluster, run_id, number):
    """One decision trace of a run, rendered with the pod page's matrices."""
    run = get_object_or_404(WhatIfRun, cluster=cluster, pk=run_id)
    trace = get_object_or_404(run.traces, number=number)
    p = request.GET
    params = p.copy()
    for k in ("fpage", "spage"):
        params.pop(k, None)
    return render(request, "dashboard/whatif_trace.html", {
        "cluster": cluster, "run": run, "t": trace, "params": params.urlencode(),
        "filter": traceview.filter_matrix(trace.matrix, group=p.get("group", "1") != "0", page=p.get("fpage", 1)),
        "score": traceview.score_table(trace.matrix, trace.node, page=p.get("spage", 1)),
        "prefilter": (trace.matrix.get("prefilter") or {}).get("plugins") or {}, "suggestions": trace.suggestions})


@login_not_required
def metrics_view(request):
    """Prometheus text format: kube-scheduler's metrics of this process, plus pending pods from the database, of
    the clusters the user sees (an API token, as Prometheus' ``authorization`` sends it, sees what its owner
    sees). ``SCHEDSCOPE_METRICS_PUBLIC=1`` opens it to anonymous scrapers, who see the unrestricted clusters."""
    if request.user.is_authenticated:
        clusters = visible_clusters(request.user)
    elif settings.SCHEDSCOPE["METRICS_PUBLIC"]:
        clusters = Cluster.objects.filter(restricted=False)
    else:
        return HttpResponse("sign in or send an API token\n", status=401, content_type="text/plain",
                            headers={"WWW-Authenticate": "Token"})
    names = []
    for cluster in clusters:
        names.append(cluster.name)
        counts = {r["queue"]: r["n"] for r in Pod.objects.filter(cluster=cluster, node_name="")
                  .values("queue").annotate(n=Count("id"))}
        for q in queries.PENDING_QUEUES:
            metrics.PENDING_PODS.labels(cluster.name, q).set(counts.get(q, 0))
    return HttpResponse(metrics.exposition(names), content_type=CONTENT_TYPE_LATEST)
