"""What-if runs: a question about a cluster (how many more copies of a pod fit, what a drain does, which pending
pods fit with more nodes), validated here for every path that asks it (the page's forms, the REST API, the
``whatif`` command), then answered by ``scheduler_core.whatif`` on a copy of the cluster's stored state, never
touching the live cluster: a Celery task in the full stack, a thread of the web process in embedded mode.

The run's row shows its progress while it works (written at most every half second) and, at the end, the
answer; the decision traces the answer refers to (failures, and the placements it lists) are stored as
``WhatIfTrace`` rows in the pod page's format, so the same components render them.
"""
from __future__ import annotations

import time

from django.conf import settings
from django.core.paginator import Paginator

from scheduler_core import whatif as core
from scheduler_core.objects import Node as CoreNode
from scheduler_core.objects import ParseError
from scheduler_core.objects import Pod as CorePod
from scheduler_core.scenario import ScenarioError, load_documents

from ..k8sapi.errors import ApiError
from ..k8sapi.selectors import LabelSelector
from ..models import Node, Pod, WhatIfRun, WhatIfTrace
from . import background, extenders, kubeversions, state
from .recorder import store_node_lists
from .tracecodec import NodeLists, trace_fields

PROGRESS_SECONDS = 0.5
DRAIN_PODS_LISTED = 50     # pods named per group of a drain's page (placed on a node, stranded for a reason)
DRAIN_GROUPS_LISTED = 50   # groups shown (nodes, reasons); the rest are counted
DRAIN_PODS_PER_PAGE = 200  # pods per page of the full list of a drain's section or group
# a drain's sections as their full list's page names them: (title, what groups them)
DRAIN_SECTIONS = {"blocked": ("Blocked evictions", "budget"), "placed": ("Placed", "node"),
                  "stranded": ("Stranded: left Pending", "why (kube's FitError)"),
                  "already_pending": ("Pods that were pending already", "kube's reason"),
                  "lost": ("Stranded: lost (no controller)", None), "skipped": ("Left in place", None)}
TRACE_FIELDS = ("result", "node", "message", "num_nodes", "num_feasible", "failing_plugins", "matrix", "preemption")


class QuestionError(ValueError):
    """A question that cannot be asked; ``errors`` maps each field to its messages."""

    def __init__(self, errors: dict):
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def limits() -> dict:
    return {"max_copies": settings.SCHEDSCOPE["WHATIF_MAX_COPIES"],
            "max_nodes_added": settings.SCHEDSCOPE["WHATIF_MAX_NODES_ADDED"]}


def _manifest(value, field: str) -> dict:
    """One object from a dict or from YAML/JSON text."""
    if isinstance(value, str):
        try:
            docs = load_documents(value, field)
        except ScenarioError as err:
            raise QuestionError({field: [str(err)]}) from None
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise QuestionError({field: ["expected one object"]})
        return docs[0]
    if not isinstance(value, dict):
        raise QuestionError({field: ["expected an object, or YAML/JSON text of one"]})
    return value


def _int(data: dict, field: str, default: int, low: int, high: int) -> int:
    value = data.get(field)
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise QuestionError({field: ["a whole number is required"]}) from None
    if not low <= number <= high:
        raise QuestionError({field: [f"must be between {low} and {high}"]})
    return number


def _pod_template(cluster, data: dict) -> dict:
    """capacity: the pasted manifest, or the manifest of a pod of this cluster (``like``: namespace/name)."""
    if data.get("like"):
        ns, _, name = str(data["like"]).partition("/")
        raw = Pod.objects.filter(cluster=cluster, namespace=ns, name=name).values_list("raw", flat=True).first()
        if raw is None:
            raise QuestionError({"like": [f"no pod {data['like']} in cluster {cluster.name}"]})
        return raw
    if not data.get("manifest"):
        raise QuestionError({"manifest": ["give a Pod or workload manifest, or a pod of the cluster to copy"]})
    try:
        template = core.template_from_manifest(_manifest(data["manifest"], "manifest"))
        CorePod(core.pod_copy(template, "probe"))
    except core.WhatIfError as err:
        raise QuestionError({"manifest": [str(err).removeprefix("pod: ")]}) from None
    except ParseError as err:
        raise QuestionError({"manifest": [str(err)]}) from None
    return template


def _node_template(cluster, data: dict) -> dict:
    """add-nodes: the pasted Node manifest, or a copy of a node of this cluster (``like``: its name)."""
    if data.get("like"):
        raw = Node.objects.filter(cluster=cluster, name=data["like"]).values_list("raw", flat=True).first()
        if raw is None:
            raise QuestionError({"like": [f"no node {data['like']} in cluster {cluster.name}"]})
        return raw
    if not data.get("manifest"):
        raise QuestionError({"manifest": ["give a Node manifest, or a node of the cluster to copy"]})
    raw = _manifest(data["manifest"], "manifest")
    if (raw.get("kind") or "Node") != "Node":
        raise QuestionError({"manifest": [f"kind {raw.get('kind')}: expected a Node"]})
    try:
        CoreNode(core.node_copies(raw, 1, set())[0])
    except ParseError as err:
        raise QuestionError({"manifest": [str(err)]}) from None
    return raw


def _selector(text: str) -> str:
    try:
        LabelSelector(text)
    except ApiError as err:
        raise QuestionError({"selector": [err.message]}) from None
    return text


def question(cluster, kind: str, data: dict) -> dict:
    """The run's ``params`` for a question asked with ``data`` (form or JSON fields), or QuestionError."""
    lim = limits()
    if kind == WhatIfRun.CAPACITY:
        return {"template": _pod_template(cluster, data),
                "max_copies": _int(data, "max_copies", lim["max_copies"], 1, lim["max_copies"]),
                "preemption": str(data.get("preemption", "")).lower() in ("1", "true", "on", "yes")}
    if kind == WhatIfRun.DRAIN:
        names = data.get("nodes") or []
        names = [n for n in (names.replace(",", " ").split() if isinstance(names, str) else names) if n]
        selector = _selector(data["selector"]) if data.get("selector") else ""
        if not names and not selector:
            raise QuestionError({"nodes": ["name the nodes to drain, or give a label selector"]})
        known = set(Node.objects.filter(cluster=cluster, name__in=names).values_list("name", flat=True))
        missing = [n for n in names if n not in known]
        if missing:
            raise QuestionError({"nodes": [f"no node {', '.join(missing[:5])} in cluster {cluster.name}"]})
        return {"nodes": names, "selector": selector}
    if kind == WhatIfRun.ADD_NODES:
        targets = data.get("targets") or []
        targets = [t for t in (targets.replace(",", " ").split() if isinstance(targets, str) else targets) if t]
        return {"template": _node_template(cluster, data),
                "count": _int(data, "count", 1, 0, lim["max_nodes_added"]), "targets": targets or None}
    raise QuestionError({"kind": [f"unknown question {kind!r}: capacity, drain or add-nodes"]})


def create(cluster, kind: str, params: dict, user=None, version=None, compare_version=None) -> WhatIfRun:
    """The run's row; background.Busy when its asker or the cluster has too many questions running."""
    return background.admit(WhatIfRun, cluster, user, kind=kind, params=params, version=version,
                            compare_version=compare_version)


def start(run: WhatIfRun) -> None:
    background.start("dashboard.tasks.whatif_run", execute, run.pk)


class _Progress:
    """Writes a run's progress to its row, at most every PROGRESS_SECONDS (and the last step): the count done and
    what is being done now (building the copy of the cluster, scheduling attempts)."""

    def __init__(self, run_id: int, label: str):
        self.run_id, self.label, self.last = run_id, label, 0.0

    def _due(self, last_step: bool) -> bool:
        now = time.monotonic()
        if now - self.last < PROGRESS_SECONDS and not last_step:
            return False
        self.last = now
        return True

    @staticmethod
    def _fitted(text: str) -> str:
        """``text`` cut to the stage column's length (a pod's name alone may be 253 characters)."""
        limit = WhatIfRun._meta.get_field("stage").max_length
        return text if len(text) <= limit else text[:limit - 1] + "…"

    def stage(self, text: str, now: bool = False) -> None:
        """What is done outside the counted steps (reading the cluster's state, storing the answer); ``now``
        writes it at once, as a new stage begins."""
        if self._due(now):
            WhatIfRun.objects.filter(pk=self.run_id).update(stage=self._fitted(text))

    def reading(self, text: str) -> None:
        self.stage(f"reading the cluster's state: {text}")

    def __call__(self, done: int, total: int | None, doing: str = "") -> None:
        if self._due(done == total):
            stage = f"{self.label} {done}" + (f" of {total}" if total else "") + (f"; {doing}" if doing else "")
            WhatIfRun.objects.filter(pk=self.run_id).update(done=done, total=total or 0, stage=self._fitted(stage))


def _profile_document(run: WhatIfRun, version) -> tuple[dict | None, str]:
    """(document, label) of the version asked with, or of the cluster's active profile."""
    if version is not None:
        return version.document or None, f"{version.profile.name} v{version.number}"
    profile = run.cluster.profile
    if profile is None:
        return None, "kube's default profile"
    return profile.document or None, f"{profile.name} (active)"


class _TraceStore:
    """Turns the CycleTraces in a core result into WhatIfTrace rows; the result keeps their numbers."""

    def __init__(self, run: WhatIfRun, progress):
        self.run, self.rows, self.progress = run, [], progress
        self.node_lists = NodeLists()
        self.used_lists = {}

    def take(self, entry: dict) -> None:
        tr = entry.pop("trace", None)
        suggestions = entry.get("suggestions")
        if tr is None:
            return
        self.progress.stage(f"storing the answer: {len(self.rows)} decision traces encoded")
        fields = trace_fields(tr, self.node_lists)
        self.used_lists.update(self.node_lists.take_used())
        self.rows.append(WhatIfTrace(run=self.run, number=len(self.rows) + 1, pod_namespace=fields["pod_namespace"],
                                     pod_name=fields["pod_name"], profile=fields["profile"],
                                     node_list=fields["matrix"].get("node_list", ""),
                                     suggestions=suggestions or [], **{k: fields[k] for k in TRACE_FIELDS}))
        entry["trace"] = len(self.rows)

    def save(self) -> None:
        self.progress.stage(f"storing the answer: {len(self.rows)} decision traces", now=True)
        store_node_lists(self.used_lists)
        WhatIfTrace.objects.bulk_create(self.rows, batch_size=100)


def _answer(run: WhatIfRun, scenario, doc, progress) -> dict:
    """The core's answer, with the loops' limits on extenders, and every Filter plugin's verdict on every node
    in the traces of the answering run."""
    p = run.params
    full = {"trace_all_filters": True, "extender_policy": extenders.policy(),
            "kube_version": kubeversions.cluster_features(run.cluster)}
    if run.kind == WhatIfRun.CAPACITY:
        return core.capacity(scenario, p["template"], doc, max_copies=p["max_copies"], preemption=p["preemption"],
                             progress=progress, **full)
    if run.kind == WhatIfRun.DRAIN:
        labels_match = LabelSelector(p["selector"]).matches if p.get("selector") else None
        accept = (lambda node: labels_match(node.labels)) if labels_match else None
        return core.drain(scenario, p["nodes"], accept, doc, progress=progress, **full)
    return core.add_nodes(scenario, p["template"], p["count"], doc, targets=p.get("targets"),
                          max_search=settings.SCHEDSCOPE["WHATIF_MAX_NODES_ADDED"], progress=progress, **full)


def _store(run: WhatIfRun, kind: str, result: dict, traces: _TraceStore) -> dict:
    if kind == WhatIfRun.CAPACITY:
        for entry in result["placements"]:
            traces.take(entry)
        if result["stop"]:
            traces.take(result["stop"])
    elif kind == WhatIfRun.DRAIN:
        for entry in result["evicted"] + result["pending"]:
            traces.take(entry)
    else:
        for entry in result["now_fit"] + result["still_pending"]:
            traces.take(entry)
    return result


def execute(run_id: int) -> None:
    """Answer a WhatIfRun: progress as it goes, the answer or the error at the end; the worker goes on."""
    run = WhatIfRun.objects.select_related("cluster__profile", "version__profile",
                                           "compare_version__profile").get(pk=run_id)
    started = time.monotonic()
    WhatIfRun.objects.filter(pk=run_id).update(state=WhatIfRun.RUNNING, stage="reading the cluster's state")
    labels = {WhatIfRun.CAPACITY: "copy", WhatIfRun.DRAIN: "eviction", WhatIfRun.ADD_NODES: "probe run"}
    progress = _Progress(run_id, labels[run.kind])
    try:
        scenario = state.cluster_scenario(run.cluster, progress=progress.reading)
        traces = _TraceStore(run, progress)
        doc, label = _profile_document(run, run.version)
        result = _store(run, run.kind, _answer(run, scenario, doc, progress), traces)
        result.update(profile=label, cluster_nodes=len(scenario.nodes), cluster_bound=len(scenario.bound_pods),
                      cluster_pending=len(scenario.pending_pods),
                      kube_version=kubeversions.cluster_version(run.cluster))
        if run.kind == WhatIfRun.CAPACITY and run.compare_version is not None:
            doc_b, label_b = _profile_document(run, run.compare_version)
            other = _store(run, run.kind, _answer(run, scenario, doc_b, _Progress(run_id, "copy (second profile)")),
                           traces)
            result["compare"] = dict(other, profile=label_b)
        result["headline"] = core.summary(run.kind, result)[0]
        traces.save()
    except (core.WhatIfError, ScenarioError, ValueError) as err:
        WhatIfRun.objects.filter(pk=run_id).update(state=WhatIfRun.FAILED, error=str(err), stage="",
                                                   seconds=round(time.monotonic() - started, 3))
        return
    except Exception as err:  # shown to the user; the worker goes on
        WhatIfRun.objects.filter(pk=run_id).update(state=WhatIfRun.FAILED, error=f"{type(err).__name__}: {err}",
                                                   stage="", seconds=round(time.monotonic() - started, 3))
        return
    WhatIfRun.objects.filter(pk=run_id).update(state=WhatIfRun.DONE, result=result, stage="",
                                               seconds=round(time.monotonic() - started, 3))


def result_context(run: WhatIfRun) -> dict:
    """What the run's page shows beyond the stored answer: capacity's sides (the version asked with, then the one
    compared), its placements that kept a trace, and for a drain the remaining nodes whose load changed."""
    r = run.result or {}
    ctx = {"r": r}
    if run.kind == WhatIfRun.CAPACITY and r:
        sides = [r] + ([r["compare"]] if r.get("compare") else [])
        for side in sides:
            side["traced"] = [p for p in side["placements"] if p.get("trace")]
        ctx["sides"] = sides
    elif run.kind == WhatIfRun.DRAIN and r:
        before, after = r["utilisation_before"], r["utilisation_after"]
        changed = sorted((n for n in after if after[n] != before.get(n)),
                         key=lambda n: (before[n]["cpu_pct"] - after[n]["cpu_pct"], n))   # cpu grown most first
        ctx["utilisation"] = [{"node": n, "before": before[n], "after": after[n]}
                              for n in changed[:DRAIN_GROUPS_LISTED]]
        ctx["utilisation_more"] = max(0, len(changed) - DRAIN_GROUPS_LISTED)
        ctx.update(_drain_groups(r))
    return ctx


def _grouped(entries, key, limit: int) -> list:
    """``entries`` grouped by ``key(entry)``, largest group first: {key, count, entries (the first ``limit``),
    more (how many are not listed)}."""
    groups = {}
    for entry in entries:
        groups.setdefault(key(entry), []).append(entry)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [{"key": k, "count": len(v), "entries": v[:limit], "more": max(0, len(v) - limit)} for k, v in ordered]


def _drain_sections(r: dict) -> dict:
    """A drain's pods by section: {name: (entries, the key that groups them, or None for a plain list)}: the
    evictions blocked (per budget), the evicted pods placed (per node), stranded (left Pending, per reason) and
    lost, the pods that were pending already (per reason), the pods left in place."""
    pending = {p["pod"]: p for p in r["pending"]}
    placed = [e for e in r["evicted"] if e.get("node")]
    stranded = [dict(e, trace=(pending.get(e["replacement"]) or {}).get("trace"))
                for e in r["evicted"] if e["replacement"] and not e.get("node")]
    already = [p for p in r["pending"] if not p["displaced"]]
    return {"blocked": (r["blocked"], lambda b: ", ".join(b["budgets"])),
            "placed": (placed, lambda e: e["node"]),
            "stranded": (stranded, lambda e: e.get("why") or ""),
            "already_pending": (already, lambda p: p["message"]),
            "lost": (r["lost"], None), "skipped": (r["skipped"], None)}


def _drain_groups(r: dict) -> dict:
    """A drain's sections (``_drain_sections``) as groups that stay short however many pods there are. A group
    of pending pods links the first decision trace kept for one of them (the fixes are there); groups past
    DRAIN_GROUPS_LISTED, and pods past DRAIN_PODS_LISTED in a group or list, are counted (``drain_pods`` lists
    them all)."""
    sections = _drain_sections(r)
    out = {"placed_count": len(sections["placed"][0]), "left_pending": len(sections["stranded"][0]),
           "already_count": len(sections["already_pending"][0]),
           "stranded_count": len(sections["stranded"][0]) + len(r["lost"])}
    for name, (entries, key) in sections.items():
        if key is None:
            out[name] = entries[:DRAIN_PODS_LISTED]
            out[f"{name}_more"] = max(0, len(entries) - DRAIN_PODS_LISTED)
            continue
        groups = _grouped(entries, key, DRAIN_PODS_LISTED)
        for group in groups[:DRAIN_GROUPS_LISTED]:
            group["trace"] = next((e["trace"] for e in group["entries"] if e.get("trace")), None)
        out[name], out[f"{name}_groups"] = groups[:DRAIN_GROUPS_LISTED], len(groups)
        out[f"{name}_more"] = max(0, len(groups) - DRAIN_GROUPS_LISTED)
    return out


def drain_pods(run: WhatIfRun, section: str, key: str | None, page) -> dict | None:
    """Every pod of one section of a drain's answer (see ``_drain_sections``), or of one of its groups when
    ``key`` is given, a page of DRAIN_PODS_PER_PAGE; None when the run has no such section or group."""
    r = run.result or {}
    if run.kind != WhatIfRun.DRAIN or not r:
        return None
    entries, group_key = _drain_sections(r).get(section, (None, None))
    if entries is None or (key is not None and group_key is None):
        return None
    if key is not None:
        entries = [e for e in entries if group_key(e) == key]
        if not entries:
            return None
    if key is None and group_key is not None:
        entries = [dict(e, group=group_key(e)) for e in entries]
    title, grouped_by = DRAIN_SECTIONS[section]
    return {"page": Paginator(entries, DRAIN_PODS_PER_PAGE).get_page(page), "count": len(entries),
            "title": title, "grouped_by": grouped_by if key is None else None}
