"""Swimlanes of the event timeline: one lane per pod, bars for where it waited (activeQ, backoffQ,
unschedulablePods, gated) and marks for its attempts, its binding and its deletion by preemption.

What is stored is each attempt (when it started, how long it took, its result, the pod's attempt count), the
pod's creation, binding and current queue, and the scheduler's events; not the moments kube moved a pod
between its queues. The bars between two attempts are derived from kube v1.30's queue rules, assuming the
pod was popped as soon as those rules allowed (the loop keeps activeQ short):

- from creation to the first attempt: activeQ;
- after an error (no plugin rejected the pod): backoffQ for its backoff (podInitialBackoffSeconds doubling
  per attempt up to podMaxBackoffSeconds), then activeQ until the next attempt;
- after an unschedulable attempt: if the next attempt came within the backoff plus kube's one-second backoffQ
  flush, the pod was moved at once (a cluster event during or right after the attempt): backoffQ, then
  activeQ; otherwise it waited in unschedulablePods until a cluster event or the 5-minute flush let it go,
  shortly before that next attempt;
- a pod waiting now ends in the queue the loop reports for it now (the bar grows live).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, F, Max, Q, Value
from django.db.models.functions import Least, RowNumber
from django.db.models.expressions import Window
from django.utils import timezone

from ..models import Pod, SchedulingCycle, SchedulingEvent
from . import queries, timewindow
from .traceview import BACKOFF_INITIAL_S, BACKOFF_MAX_S, backoff_seconds

WAITING = (Pod.ACTIVE, Pod.BACKOFF, Pod.UNSCHEDULABLE, Pod.GATED)
FLUSH = timedelta(seconds=1)   # kube moves pods whose backoff completed from backoffQ to activeQ every second
DEFAULT_LANES, MAX_LANES = 40, 200
ATTEMPTS_PER_LANE = 200        # the newest attempts of a lane in the window; zooming in shows the others
BINDINGS = ("Scheduled", "ManualBinding")
PREEMPTED = "Preempted"


@dataclass
class Attempt:
    started: datetime
    ended: datetime
    number: int          # the pod's attempt count (kube's PodInfo.Attempts), which sets its backoff
    result: str          # SchedulingCycle.result


@dataclass
class Segment:
    kind: str            # Pod.ACTIVE, BACKOFF, UNSCHEDULABLE or GATED
    start: datetime
    end: datetime
    open: bool = False   # still waiting there now: the page extends it to the present


@dataclass
class Backoff:
    """A profile's podInitialBackoffSeconds and podMaxBackoffSeconds."""

    initial: int = BACKOFF_INITIAL_S
    maximum: int = BACKOFF_MAX_S

    def after(self, attempts: int) -> timedelta:
        return timedelta(seconds=backoff_seconds(attempts, self.initial, self.maximum))


def wait_after(failed: Attempt, until: datetime, backoff: Backoff) -> list:
    """Where a pod waited from the end of a failed attempt to ``until`` (its next attempt), by the rules above."""
    begin = failed.ended
    if until <= begin:
        return []
    expiry = begin + backoff.after(failed.number)
    if failed.result == SchedulingCycle.ERROR or until <= expiry + FLUSH:
        out = [Segment(Pod.BACKOFF, begin, min(expiry, until))]
        if until > expiry:
            out.append(Segment(Pod.ACTIVE, expiry, until))
        return out
    return [Segment(Pod.UNSCHEDULABLE, begin, until)]


def pod_segments(attempts: list, now: datetime, backoff: Backoff, created: datetime | None = None,
                 queue_now: str | None = None, left: datetime | None = None) -> list:
    """The waits of one pod (one uid), oldest first. ``attempts``: its attempts oldest first; ``created``: when
    it entered the queue (None: not known); ``queue_now``: the queue it waits in now if it is pending (None:
    bound or gone); ``left``: when it left the queue without an attempt deciding it (a manual binding, a
    deletion), if known."""
    out = []
    first = attempts[0].started if attempts else None
    if created is not None:
        if first is not None and created < first:
            out.append(Segment(Pod.ACTIVE, created, first))
        elif first is None and queue_now in WAITING:
            out.append(Segment(queue_now, created, now, open=True))
        elif first is None and left is not None and created < left:
            out.append(Segment(Pod.ACTIVE, created, left))
    for prev, nxt in zip(attempts, attempts[1:]):
        if prev.result != SchedulingCycle.SCHEDULED:
            out += wait_after(prev, nxt.started, backoff)
    last = attempts[-1] if attempts else None
    if last is None or last.result == SchedulingCycle.SCHEDULED:
        return out
    if queue_now in WAITING:
        if queue_now == Pod.ACTIVE:
            tail = wait_after(last, now, backoff)
            if not tail or tail[-1].kind != Pod.ACTIVE:
                tail.append(Segment(Pod.ACTIVE, max(now, last.ended), max(now, last.ended)))
        else:
            tail = [Segment(queue_now, last.ended, max(now, last.ended))]
        tail[-1].open = True
        out += tail
    elif left is not None:
        out += wait_after(last, left, backoff)
    return out


def clip(segments: list, start: datetime, end: datetime) -> list:
    """The parts of ``segments`` inside [start, end]; a segment cut at ``end`` is no longer open."""
    out = []
    for s in segments:
        a, b = max(s.start, start), min(s.end, end)
        if b > a or (s.open and s.start <= end and s.end >= start):
            out.append(Segment(s.kind, a, max(a, b), s.open and s.end <= end))
    return out


# -- from the database ----------------------------------------------------------------------------------
def _pod_q(params, ns: str, name: str) -> Q:
    """The page's pod filters (``pod``: namespace/name prefix or name prefix; ``namespace``) on two fields."""
    q = Q()
    pod = params.get("pod", "")
    if pod:
        pns, _, pname = pod.partition("/")
        q &= Q(**{ns: pns, f"{name}__startswith": pname}) if pname else Q(**{f"{name}__startswith": pod})
    if params.get("namespace"):
        q &= Q(**{ns: params["namespace"]})
    return q


def _keys_q(keys, ns: str, name: str) -> Q:
    q = Q()
    for k_ns, k_name in keys:
        q |= Q(**{ns: k_ns, name: k_name})
    return q


def choose_pods(cluster, params, start: datetime, end: datetime, limit: int) -> list:
    """The (namespace, name) of at most ``limit`` pods the window shows, the most recently present ones: by their
    latest attempt, event or binding in the window, pods still pending at its end first. Filters: pod, namespace,
    node (pods attempted on it or with an event naming it), reason (pods with such an event); without node and
    reason filters, pods that waited through the window without an attempt in it are shown too."""
    latest = {}

    def note(rows):
        for ns, name, t in rows:
            key = (ns, name)
            if key not in latest or t > latest[key]:
                latest[key] = t

    events = (SchedulingEvent.objects.filter(cluster=cluster, time__gte=start, time__lte=end)
              .exclude(pod_name="").filter(_pod_q(params, "pod_namespace", "pod_name")))
    if params.get("node"):
        events = events.filter(node=params["node"])
    if params.get("reason"):
        events = events.filter(reason=params["reason"])
    note(events.values("pod_namespace", "pod_name").annotate(t=Max("time")).order_by("-t")
         .values_list("pod_namespace", "pod_name", "t")[:limit])
    if not params.get("reason"):
        cycles = (SchedulingCycle.objects.filter(cluster=cluster, started__gte=start, started__lte=end)
                  .filter(_pod_q(params, "pod_namespace", "pod_name")))
        if params.get("node"):
            cycles = cycles.filter(node=params["node"])
        note(cycles.values("pod_namespace", "pod_name").annotate(t=Max("started")).order_by("-t")
             .values_list("pod_namespace", "pod_name", "t")[:limit])
    if not (params.get("reason") or params.get("node")):
        waiting = Pod.objects.filter(cluster=cluster, created__lte=end).filter(_pod_q(params, "namespace", "name"))
        note((ns, name, end) for ns, name in waiting.filter(node_name="").order_by("-created")
             .values_list("namespace", "name")[:limit])
        note(waiting.filter(bound_at__gte=start).annotate(t=Least("bound_at", Value(end)))
             .order_by("-t").values_list("namespace", "name", "t")[:limit])
    return sorted(latest, key=lambda k: (-latest[k].timestamp(), k))[:limit]


def _attempt(row) -> Attempt:
    return Attempt(row["started"], row["started"] + timedelta(milliseconds=row["duration_ms"] or 0),
                   row["attempt"], row["result"])


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Lane:
    key: tuple
    before: dict | None = None               # the last attempt before the window
    inside: list = field(default_factory=list)
    hidden: int = 0                          # attempts in the window left out (ATTEMPTS_PER_LANE)
    after: dict | None = None                # the first attempt after the window
    events: list = field(default_factory=list)


def _cycles(cluster, keys, **where):
    fields = ("pod_namespace", "pod_name", "pod_uid", "seq", "attempt", "started", "duration_ms", "result",
              "node", "message")
    return (SchedulingCycle.objects.filter(cluster=cluster).filter(_keys_q(keys, "pod_namespace", "pod_name"))
            .filter(**where).values(*fields))


def _ranked(qs, order, limit: int):
    """``qs``'s first ``limit`` rows per pod in ``order``, each with ``n``: how many rows the pod has in ``qs``."""
    part = [F("pod_namespace"), F("pod_name")]
    return (qs.annotate(rank=Window(RowNumber(), partition_by=part, order_by=order),
                        n=Window(Count("id"), partition_by=part))
            .filter(rank__lte=limit))


def _backoff(cluster) -> Backoff:
    doc = (cluster.profile.document if cluster.profile_id else None) or {}
    initial, maximum = doc.get("podInitialBackoffSeconds", BACKOFF_INITIAL_S), doc.get("podMaxBackoffSeconds",
                                                                                      BACKOFF_MAX_S)
    ok = isinstance(initial, int) and isinstance(maximum, int) and 0 < initial <= maximum
    return Backoff(initial, maximum) if ok else Backoff()


def lanes(cluster, params, start: datetime, end: datetime, now: datetime | None = None) -> dict:
    """The swimlanes of [start, end]: {"lanes": [...], "more": whether more pods matched than shown}.
    ``params``: pod, namespace, node, reason, lanes (how many; DEFAULT_LANES)."""
    now = now or timezone.now()
    limit = min(params.get("lanes") or DEFAULT_LANES, MAX_LANES)
    keys = choose_pods(cluster, params, start, end, limit + 1)
    more = len(keys) > limit
    keys = keys[:limit]
    if not keys:
        return {"lanes": [], "more": False}
    by_key = {k: _Lane(k) for k in keys}
    for row in _ranked(_cycles(cluster, keys, started__gte=start, started__lte=end), F("seq").desc(),
                       ATTEMPTS_PER_LANE):
        lane = by_key[(row["pod_namespace"], row["pod_name"])]
        lane.inside.append(row)
        lane.hidden = row["n"] - ATTEMPTS_PER_LANE if row["n"] > ATTEMPTS_PER_LANE else 0
    for row in _ranked(_cycles(cluster, keys, started__lt=start), F("seq").desc(), 1):
        by_key[(row["pod_namespace"], row["pod_name"])].before = row
    for row in _ranked(_cycles(cluster, keys, started__gt=end), F("seq").asc(), 1):
        by_key[(row["pod_namespace"], row["pod_name"])].after = row
    for ev in (SchedulingEvent.objects.filter(cluster=cluster, reason__in=BINDINGS + (PREEMPTED,),
                                              time__gte=start, time__lte=max(end, now))
               .filter(_keys_q(keys, "pod_namespace", "pod_name"))
               .values("pod_namespace", "pod_name", "pod_uid", "time", "reason", "node", "message")
               .order_by("time")):
        by_key[(ev["pod_namespace"], ev["pod_name"])].events.append(ev)
    pods = {(p["namespace"], p["name"]): p for p in Pod.objects.filter(cluster=cluster)
            .filter(_keys_q(keys, "namespace", "name"))
            .values("namespace", "name", "uid", "created", "bound_at", "node_name", "queue")}
    backoff = _backoff(cluster)
    return {"lanes": [_lane_json(by_key[k], pods.get(k), start, end, now, backoff) for k in keys], "more": more}


def _lane_json(lane: _Lane, pod: dict | None, start, end, now, backoff: Backoff) -> dict:
    inside = sorted(lane.inside, key=lambda r: r["seq"])
    rows = ([] if lane.hidden or lane.before is None else [lane.before]) + inside + \
           ([lane.after] if lane.after else [])
    segments, uids = [], []
    for row in rows:   # one run of attempts per pod uid: a pod deleted and created again under its name
        if not uids or uids[-1][0] != row["pod_uid"]:
            uids.append((row["pod_uid"], []))
        uids[-1][1].append(_attempt(row))
    if pod is not None and (not uids or uids[-1][0] != pod["uid"]) and not lane.hidden:
        uids.append((pod["uid"], []))
    for i, (uid, attempts) in enumerate(uids):
        mine = pod is not None and uid == pod["uid"]
        left = None
        if mine and pod["node_name"] and pod["bound_at"]:
            left = pod["bound_at"]
        for ev in lane.events:
            if ev["pod_uid"] == uid and ev["reason"] == PREEMPTED:
                left = ev["time"]
        created = pod["created"] if mine and not (lane.hidden and i == 0) else None
        queue_now = pod["queue"] if mine and not pod["node_name"] else None
        segments += pod_segments(attempts, now, backoff, created=created, queue_now=queue_now, left=left)
    marks = [{"kind": "attempt", "time": _iso(r["started"]), "seq": r["seq"], "attempt": r["attempt"],
              "result": r["result"], "node": r["node"], "message": r["message"][:300],
              "ms": r["duration_ms"]} for r in inside]
    for ev in lane.events:
        if ev["time"] <= end:
            kind = "deleted" if ev["reason"] == PREEMPTED else "bound"
            marks.append({"kind": kind, "time": _iso(ev["time"]), "reason": ev["reason"], "node": ev["node"],
                          "message": ev["message"][:300]})
    if (pod is not None and pod["bound_at"] and start <= pod["bound_at"] <= end
            and not any(m["kind"] == "bound" for m in marks)):
        marks.append({"kind": "bound", "time": _iso(pod["bound_at"]), "reason": "", "node": pod["node_name"],
                      "message": ""})
    ns, name = lane.key
    return {"pod": f"{ns}/{name}", "namespace": ns, "name": name,
            "state": ("gone" if pod is None else "bound" if pod["node_name"] else pod["queue"]),
            "node": pod["node_name"] if pod else "", "hidden_attempts": lane.hidden,
            "segments": [{"kind": s.kind, "start": _iso(s.start), "end": _iso(s.end), "open": s.open}
                         for s in clip(segments, start, end)],
            "marks": marks}


def timeline(cluster, params, now: datetime | None = None) -> dict:
    """What the events page's swimlanes and histogram draw for a window: ``params`` are checked values (window
    as a timedelta, until, pod, namespace, node, reason, lanes)."""
    now = now or timezone.now()
    window = params.get("window") or queries.default_window(cluster, now)
    start, end = timewindow.bounds(window, params.get("until"), now)
    width = timewindow.bucket_seconds(window)
    out = {"start": _iso(start), "end": _iso(end), "window": timewindow.format_window(window),
           "live": params.get("until") is None, "bucket_seconds": width,
           "histogram": queries.event_histogram(queries.filter_events(cluster, params, start, end), start, end,
                                                width)}
    out.update(lanes(cluster, params, start, end, now))
    return out
