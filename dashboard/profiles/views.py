"""Pages of the profile editor: the list (the built-in default included), edit (form and YAML), copy, versions and
diff, dry runs, apply. Profiles are addressed by name; the old numeric addresses redirect."""
from __future__ import annotations

import json
from functools import wraps
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST

from scheduler_core import versions
from scheduler_core.documents import load_json
from scheduler_core.versions import LATEST_VERSION, SUPPORTED_VERSIONS

from ..access import EDITOR, get_cluster, visible_clusters
from ..models import SchedulerProfile
from ..queryforms import VersionQuery, query_form
from ..services import kubeversions
from . import services
from ..services.background import Busy
from . import dryrun
from .forms import ProfileEditorForm, dump_yaml
from .models import AuditLog, DryRun, ProfileVersion


class HttpResponsePermanentRedirectKeepingMethod(HttpResponsePermanentRedirect):
    """308: the client sends the same method and body to the new address."""

    status_code = 308


def editor_required(view):
    @wraps(view)
    def wrapper(request, *args, **kw):
        if not services.is_editor(request.user):
            raise PermissionDenied("only editors can change scheduler profiles")
        return view(request, *args, **kw)
    return wrapper


def by_name(view):
    """The view gets the profile named in the URL; an old numeric address (/profiles/<id>/...) of a profile
    redirects to its name (308 for writes, so a form posted there still arrives)."""
    @wraps(view)
    def wrapper(request, name, *args, **kw):
        visible = services.visible_profiles(request.user)
        profile = visible.filter(name=name).first()
        if profile is not None:
            return view(request, profile, *args, **kw)
        old = visible.filter(pk=int(name)).first() if name.isdigit() and len(name) < 19 else None
        if old is None:
            raise Http404(f"no profile named {name!r}")
        match = request.resolver_match
        target = reverse(f"{match.namespace}:{match.url_name}", kwargs={**match.kwargs, "name": old.name})
        if request.META.get("QUERY_STRING"):
            target += "?" + request.META["QUERY_STRING"]
        if request.method in ("GET", "HEAD"):
            return HttpResponsePermanentRedirect(target)
        return HttpResponsePermanentRedirectKeepingMethod(target)
    return wrapper


def _schedulers(doc) -> list:
    profiles = doc.get("profiles") if isinstance(doc, dict) and isinstance(doc.get("profiles"), list) else []
    names = [p.get("schedulerName") for p in profiles if isinstance(p, dict)]
    return [n for n in names if isinstance(n, str)] or ["default-scheduler"]


def _on_builtin(request, kube_version: str) -> list:
    """The clusters the user sees that run ``kube_version``'s built-in profile (no profile of their own)."""
    return [c for c in visible_clusters(request.user).filter(profile=None).order_by("name")
            if kubeversions.cluster_version(c) == kube_version]


def profile_list(request):
    if request.method == "POST":
        version = request.POST.get("kube_version") or LATEST_VERSION
        if version not in SUPPORTED_VERSIONS:
            raise Http404(f"no built-in profile of Kubernetes {version}")
        return _copy(request, services.BUILTIN_DOCUMENT, services.builtin_label(version), version)
    visible = visible_clusters(request.user)
    rows = [{"name": services.builtin_label(v), "kube_version": v, "builtin": True,
             "schedulers": _schedulers(services.BUILTIN_DOCUMENT), "clusters": _on_builtin(request, v)}
            for v in reversed(SUPPORTED_VERSIONS)]
    for p in services.visible_profiles(request.user).order_by("name"):
        rows.append({"name": p.name, "url_name": p.name, "profile": p, "active": services.active_version(p),
                     "kube_version": p.kube_version,
                     "schedulers": _schedulers(p.document),
                     "clusters": list(visible.filter(profile=p).order_by("name"))})
    return render(request, "profiles/list.html", {"rows": rows, "editor": services.is_editor(request.user),
                                                  "versions": list(reversed(SUPPORTED_VERSIONS))})


def _copy(request, document, source, kube_version):
    """A new profile for Kubernetes ``kube_version`` named by the form, starting from ``document``."""
    if not services.is_editor(request.user):
        raise PermissionDenied("only editors can create scheduler profiles")
    name = (request.POST.get("name") or "").strip()
    if SchedulerProfile.objects.filter(name=name).exists():
        messages.error(request, f"there is a profile named {name} already")
        return redirect("profiles:list")
    try:
        profile = services.create(name, document, request.user, f"copied from {source}", kube_version)
    except services.Invalid as err:
        messages.error(request, "; ".join(p.message for p in err.problems))
        return redirect("profiles:list")
    messages.success(request, f"{name} created from {source}")
    return redirect("profiles:edit", name=profile.name)


def builtin(request, kube_version):
    """kube-scheduler's built-in configuration at a version, read-only: the starting point one copies."""
    form = ProfileEditorForm(services.BUILTIN_DOCUMENT, read_only=True, features=kube_version)
    return render(request, "profiles/edit.html", {
        "builtin": True, "title": services.builtin_label(kube_version), "form": form, "layout": form.layout(),
        "kube_version": kube_version, "release": versions.kube_version(kube_version).release,
        "editor": services.is_editor(request.user), "can_change": False,
        "using": _on_builtin(request, kube_version)})


def _context(request, profile, form):
    visible = visible_clusters(request.user)
    clusters = list(visible.order_by("name"))
    using = [c for c in clusters if c.profile_id == profile.pk]
    return {"profile": profile, "title": profile.name, "form": form, "layout": form.layout(),
            "kube_version": profile.kube_version,
            "versions": profile.versions.select_related("author").order_by("-number")[:50],
            "latest": profile.versions.order_by("-number").first(), "active": services.active_version(profile),
            "editor": services.is_editor(request.user), "can_change": services.can_change(request.user, profile),
            "clusters": clusters, "using": using, "spans": {c.name: services.spans(c, 5) for c in using},
            "dry_runs": DryRun.objects.filter(version__profile=profile, cluster__in=visible)
                                      .select_related("version", "cluster")[:10],
            "audit": AuditLog.objects.filter(Q(cluster=None) | Q(cluster__in=visible), profile=profile)
                                     .select_related("user", "version", "cluster")[:10]}


@by_name
def edit(request, profile):
    latest = services.ensure_versions(profile)
    if request.method == "POST":
        if not services.is_editor(request.user):
            raise PermissionDenied("only editors can save scheduler profiles")
        base = _base(profile, request.POST.get("base_version"), latest, request.POST.get("base_doc", ""))
        form = ProfileEditorForm(base.document, request.POST, base_version=base.number,
                                 features=profile.kube_version)
        refused = []   # who may save it (validate.permission_problems)
        if form.is_valid() and form.document == latest.document:
            messages.info(request, f"nothing changed: version {latest.number} stays the latest")
            return redirect("profiles:edit", name=profile.name)
        if form.is_valid():
            try:
                version = services.save_version(profile, form.document, request.user, form.cleaned_data["comment"])
            except services.Invalid as err:
                refused = err.problems
            else:
                messages.success(request, f"saved as version {version.number}")
                return redirect("profiles:edit", name=profile.name)
        source = form.cleaned_data.get("source")
        if form.document is not None and (source == "yaml" or form.cleaned_data.get("new_profile")):
            # the form of the document sent (a YAML edit, a profile added), so that kube's errors are at its fields
            yaml_text = request.POST.get("yaml", "") if source == "yaml" else dump_yaml(form.document)
            form = _rebound(form.document, yaml_text, base.number, profile.kube_version, source)
        for problem in refused:
            form.add_error(None, problem.message)
        return render(request, "profiles/edit.html", _context(request, profile, form), status=400)
    form = ProfileEditorForm(latest.document, base_version=latest.number,
                             read_only=not services.can_change(request.user, profile), features=profile.kube_version)
    return render(request, "profiles/edit.html", _context(request, profile, form))


@require_POST
@by_name
def copy(request, profile):
    """A new profile starting from this one's latest version."""
    latest = services.ensure_versions(profile)
    return _copy(request, latest.document, f"{profile.name} v{latest.number}", profile.kube_version)


class _Base:
    """A document the editor started from that is not a version (the form's last sync with the YAML)."""

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


def _rebound(doc, yaml_text, base_number, kube_version, source="form"):
    """The form of ``doc`` (a YAML edit) at ``kube_version``, bound to its own values so that kube's errors show at
    their fields; ``source``: the tab it shows."""
    probe = ProfileEditorForm(doc, base_version=base_number, features=kube_version)
    data = probe.data_of_initial()
    data.update(source=source, yaml=yaml_text, base_version=base_number, base_doc=json.dumps(doc))
    form = ProfileEditorForm(doc, data, base_version=base_number, features=kube_version)
    form.is_valid()
    if form.load_error:
        form.add_error("yaml", form.load_error)
    return form


@require_POST
@by_name
def convert(request, profile):
    """The page's two-way sync: the form's fields -> the document (its YAML, and the form of it: a plugin or a
    profile added gets its row), or the YAML -> the form; and kube's objections to the document (``problems``, in
    kube's words), which the YAML tab shows as one types. Always 200: a document kube refuses is an answer."""
    latest = services.ensure_versions(profile)
    base = _base(profile, request.POST.get("base_version"), latest, request.POST.get("base_doc", ""))
    form = ProfileEditorForm(base.document, request.POST, base_version=base.number, features=profile.kube_version)
    form.is_valid()
    if form.document is None:   # the YAML does not parse: what is wrong, and nothing to show instead
        return JsonResponse({"valid": False, "problems": [e["message"] for e in form.error_list()]})
    shown = _rebound(form.document, dump_yaml(form.document), base.number, profile.kube_version)
    html = render_to_string("profiles/_fields.html", {"layout": shown.layout(), "form": shown}, request)
    return JsonResponse({"yaml": dump_yaml(form.document), "html": html, "base_doc": json.dumps(form.document),
                         "valid": not form.problems, "problems": [p.shown() for p in form.problems]})


@query_form(VersionQuery)
@by_name
def version_view(request, profile, number, query):
    version = get_object_or_404(ProfileVersion, profile=profile, number=number)
    others = profile.versions.order_by("-number")
    a = query.get("against")
    against = others.filter(number=a).first() if a else others.filter(number__lt=number).first()
    return render(request, "profiles/version.html", {
        "profile": profile, "version": version, "yaml": dump_yaml(version.document), "against": against,
        "diff_lines": _diff_lines(services.diff(against, version)) if against else [], "others": others,
        "editor": services.is_editor(request.user), "active": services.active_version(profile),
        "clusters": visible_clusters(request.user).order_by("name")})


def _diff_lines(text: str) -> list:
    """A unified diff's lines with their kind (add, del, head) for colouring."""
    def kind(line):
        if line.startswith(("---", "+++", "@@")):
            return "head"
        return {"+": "add", "-": "del"}.get(line[:1], "")
    return [{"kind": kind(line), "text": line} for line in text.splitlines()]


@require_POST
@editor_required
@by_name
def rollback(request, profile, number):
    version = get_object_or_404(ProfileVersion, profile=profile, number=number)
    try:
        new = services.rollback(version, request.user)
    except services.Invalid as err:
        messages.error(request, f"not restored: {err}")
        return redirect("profiles:edit", name=profile.name)
    messages.success(request, f"version {version.number} restored as version {new.number} (not applied yet)")
    return redirect("profiles:edit", name=profile.name)


@require_POST
@editor_required
@by_name
def apply(request, profile, number):
    version = get_object_or_404(ProfileVersion, profile=profile, number=number)
    name = request.POST.get("cluster") or ""
    cluster = get_cluster(request.user, name, EDITOR)[0] if name else None
    try:
        targets = services.apply(version, request.user, cluster)
    except services.Invalid as err:
        messages.error(request, f"not applied: {err}")
        return redirect("profiles:edit", name=profile.name)
    messages.success(request, f"version {version.number} applied"
                     + (f" to {', '.join(c.name for c in targets)}" if targets else ""))
    return redirect("profiles:edit", name=profile.name)


@require_POST
@editor_required
@by_name
def dry_run(request, profile, number):
    version = get_object_or_404(ProfileVersion, profile=profile, number=number)
    cluster = get_cluster(request.user, request.POST.get("cluster") or "")[0]
    source = request.POST.get("source") if request.POST.get("source") in (DryRun.PENDING, DryRun.WINDOW) \
        else DryRun.PENDING
    try:
        window = max(1, min(100000, int(request.POST.get("window") or 200)))
    except ValueError:
        window = 200
    try:
        run = dryrun.create(version, cluster, source, window, request.user)
    except Busy as err:
        messages.error(request, str(err))
        return redirect("profiles:edit", name=profile.name)
    dryrun.start(run)
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
