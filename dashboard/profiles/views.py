"""Pages of the profile editor: list, edit (form and YAML), versions and diff, dry runs, apply."""
from __future__ import annotations

import json
from functools import wraps

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from scheduler_core.documents import load_json

from ..access import EDITOR, get_cluster, visible_clusters
from ..models import SchedulerProfile
from ..queryforms import VersionQuery, query_form
from . import services
from .dryrun import start as start_dry_run
from .forms import ProfileEditorForm, dump_yaml, effective_plugins
from .models import AuditLog, DryRun, ProfileVersion

NEW_DOCUMENT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "default-scheduler"}]}


def editor_required(view):
    @wraps(view)
    def wrapper(request, *args, **kw):
        if not services.is_editor(request.user):
            raise PermissionDenied("only editors can change scheduler profiles")
        return view(request, *args, **kw)
    return wrapper


def profile_list(request):
    if request.method == "POST":
        if not services.is_editor(request.user):
            raise PermissionDenied("only editors can create scheduler profiles")
        name = (request.POST.get("name") or "").strip()
        if name and not SchedulerProfile.objects.filter(name=name).exists():
            profile = services.create(name, NEW_DOCUMENT, request.user)
            return redirect("profiles:edit", pk=profile.pk)
        messages.error(request, "a new profile needs a name that is not taken")
    rows = [{"profile": p, "active": services.active_version(p),
             "clusters": list(visible_clusters(request.user, p.cluster_set.all()))}
            for p in SchedulerProfile.objects.order_by("name")]
    return render(request, "profiles/list.html", {"rows": rows, "editor": services.is_editor(request.user)})


def _context(request, profile, form, saved=None):
    latest = profile.versions.order_by("-number").first()
    doc = form.document if form.is_bound and form.document is not None else form.base
    visible = visible_clusters(request.user)
    clusters = list(visible.order_by("name"))
    return {"profile": profile, "form": form, "sections": form.layout(effective_plugins(doc)),
            "versions": profile.versions.select_related("author").order_by("-number")[:50],
            "latest": latest, "active": services.active_version(profile), "editor": services.is_editor(request.user),
            "can_change": services.can_change(request.user, profile),
            "clusters": clusters, "spans": {c.name: services.spans(c, 5) for c in clusters if c.profile_id == profile.pk},
            "dry_runs": DryRun.objects.filter(version__profile=profile, cluster__in=visible)
                                      .select_related("version", "cluster")[:10],
            "audit": AuditLog.objects.filter(Q(cluster=None) | Q(cluster__in=visible), profile=profile)
                                     .select_related("user", "version", "cluster")[:10],
            "saved": saved}


def edit(request, pk):
    profile = get_object_or_404(SchedulerProfile, pk=pk)
    latest = services.ensure_versions(profile)
    if request.method == "POST":
        if not services.is_editor(request.user):
            raise PermissionDenied("only editors can save scheduler profiles")
        base = _base(profile, request.POST.get("base_version"), latest, request.POST.get("base_doc", ""))
        form = ProfileEditorForm(base.document, request.POST, base_version=base.number)
        refused = []   # who may save it (validate.permission_problems)
        if form.is_valid():
            try:
                version = services.save_version(profile, form.document, request.user, form.cleaned_data["comment"])
            except services.Invalid as err:
                refused = err.problems
            else:
                messages.success(request, f"saved as version {version.number}")
                return redirect("profiles:edit", pk=profile.pk)
        if form.cleaned_data.get("source") == "yaml" and form.document is not None:
            form = _rebound(form.document, request.POST.get("yaml", ""), base.number)
        for problem in refused:
            form.add_error(None, problem.message)
        return render(request, "profiles/edit.html", _context(request, profile, form), status=400)
    form = ProfileEditorForm(latest.document, base_version=latest.number)
    return render(request, "profiles/edit.html", _context(request, profile, form))


class _Base:
    """A document the editor started from that is not a version (the YAML view's last sync)."""

    def __init__(self, document, number):
        self.document, self.number = document, number


def _base(profile, number, latest, base_doc=""):
    if base_doc:
        try:
            doc = load_json(base_doc)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            return _Base(doc, _base(profile, number, latest).number)
    try:
        return profile.versions.get(number=int(number))
    except (TypeError, ValueError, ProfileVersion.DoesNotExist):
        return latest


def _rebound(doc, yaml_text, base_number):
    """A YAML edit that failed: the form shows the new document, with the errors at its fields."""
    probe = ProfileEditorForm(doc, base_version=base_number)
    data = {}
    for name, field in probe.fields.items():
        value = probe.initial.get(name)
        if value is None or value is False:
            continue
        data[name] = value
    data.update(source="form", yaml=yaml_text, base_version=base_number)
    form = ProfileEditorForm(doc, data, base_version=base_number)
    form.is_valid()
    return form


@require_POST
def convert(request, pk):
    """The JS editor's two-way sync: form fields -> YAML, or YAML -> the form fields (HTML)."""
    profile = get_object_or_404(SchedulerProfile, pk=pk)
    latest = services.ensure_versions(profile)
    base = _base(profile, request.POST.get("base_version"), latest, request.POST.get("base_doc", ""))
    form = ProfileEditorForm(base.document, request.POST, base_version=base.number)
    form.is_valid()
    if form.document is None:
        return JsonResponse({"errors": {k: [str(e) for e in v] for k, v in form.errors.items()}}, status=400)
    if request.POST.get("source") == "form":
        return JsonResponse({"yaml": dump_yaml(form.document), "valid": not form.problems})
    shown = _rebound(form.document, request.POST.get("yaml", ""), base.number)
    html = render_to_string("profiles/_fields.html",
                            {"sections": shown.layout(effective_plugins(form.document)), "form": shown}, request)
    return JsonResponse({"html": html, "base_doc": json.dumps(form.document), "valid": not form.problems})


@query_form(VersionQuery)
def version_view(request, pk, number, query):
    profile = get_object_or_404(SchedulerProfile, pk=pk)
    version = get_object_or_404(ProfileVersion, profile=profile, number=number)
    others = profile.versions.order_by("-number")
    a = query.get("against")
    against = others.filter(number=a).first() if a else others.filter(number__lt=number).first()
    return render(request, "profiles/version.html", {
        "profile": profile, "version": version, "yaml": dump_yaml(version.document), "against": against,
        "diff": services.diff(against, version) if against else "", "others": others,
        "editor": services.is_editor(request.user), "active": services.active_version(profile),
        "clusters": visible_clusters(request.user).order_by("name")})


@require_POST
@editor_required
def rollback(request, pk, number):
    version = get_object_or_404(ProfileVersion, profile_id=pk, number=number)
    new = services.rollback(version, request.user)
    messages.success(request, f"version {version.number} restored as version {new.number} (not applied yet)")
    return redirect("profiles:edit", pk=pk)


@require_POST
@editor_required
def apply(request, pk, number):
    version = get_object_or_404(ProfileVersion, profile_id=pk, number=number)
    name = request.POST.get("cluster") or ""
    cluster = get_cluster(request.user, name, EDITOR)[0] if name else None
    try:
        targets = services.apply(version, request.user, cluster)
    except services.Invalid as err:
        messages.error(request, f"not applied: {err}")
        return redirect("profiles:edit", pk=pk)
    messages.success(request, f"version {version.number} applied"
                     + (f" to {', '.join(c.name for c in targets)}" if targets else ""))
    return redirect("profiles:edit", pk=pk)


@require_POST
@editor_required
def dry_run(request, pk, number):
    version = get_object_or_404(ProfileVersion, profile_id=pk, number=number)
    cluster = get_cluster(request.user, request.POST.get("cluster") or "")[0]
    source = request.POST.get("source") if request.POST.get("source") in (DryRun.PENDING, DryRun.WINDOW) \
        else DryRun.PENDING
    try:
        window = max(1, min(100000, int(request.POST.get("window") or 200)))
    except ValueError:
        window = 200
    run = DryRun.objects.create(version=version, cluster=cluster, source=source, window=window,
                                author=request.user)
    start_dry_run(run)
    return redirect("profiles:dry_run", run_id=run.pk)


def dry_run_view(request, run_id):
    run = get_object_or_404(DryRun.objects.select_related("version__profile", "cluster")
                            .filter(cluster__in=visible_clusters(request.user)), pk=run_id)
    return render(request, "profiles/dryrun.html", {"run": run, "profile": run.version.profile,
                                                    "editor": services.is_editor(request.user)})


def dry_run_status(request, run_id):
    run = get_object_or_404(DryRun.objects.filter(cluster__in=visible_clusters(request.user)), pk=run_id)
    return JsonResponse({"state": run.state, "done": run.done, "total": run.total, "percent": run.percent,
                         "error": run.error})
