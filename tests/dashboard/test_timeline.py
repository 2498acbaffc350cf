"""The event timeline: window parsing (services.timewindow), the swimlane segments derived from attempts by kube's
queue rules (services.timeline), the lanes and histogram of a window from stored rows, and the API and page that
serve them."""
from __future__ import annotations

import re

from datetime import datetime, timedelta, timezone

import pytest

from dashboard.models import Cluster, Pod, SchedulingCycle, SchedulingEvent
from dashboard.services import timeline, timewindow
from dashboard.services.timeline import Attempt, Backoff, Segment, clip, pod_segments

T0 = datetime(2030, 5, 1, 10, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def attempt(start: float, number: int, result: str, ms: float = 10) -> Attempt:
    return Attempt(at(start), at(start + ms / 1000), number, result)


def spans(segments) -> list:
    return [(s.kind, round((s.start - T0).total_seconds(), 3), round((s.end - T0).total_seconds(), 3), s.open)
            for s in segments]


# -- windows ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, seconds", [
    ("15m", 900), ("15", 900), ("90s", 90), ("1h", 3600), ("7d", 604800), (" 2h ", 7200), ("1s", 1),
    ("5256000m", 10 * 366 * 86400 - 1440 * 60 * 10)])
def test_window_parses_units_and_bare_minutes(text, seconds):
    assert timewindow.parse_window(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "0s", "0", "15x", "-5m", "1.5h", "1h30m", "٣m", "3661d", "m", "9" * 13])
def test_window_refuses_what_it_cannot_read(text):
    with pytest.raises(ValueError):
        timewindow.parse_window(text)


@pytest.mark.parametrize("seconds, text", [(3600, "1h"), (90, "90s"), (604800, "7d"), (150, "150s"), (120, "2m"),
                                           (0.4, "1s"), (5400, "90m")])
def test_window_formats_back_to_the_shortest_text(seconds, text):
    assert timewindow.format_window(timedelta(seconds=seconds)) == text
    assert timewindow.parse_window(text) == timedelta(seconds=max(1, round(seconds)))


@pytest.mark.parametrize("window, width", [(timedelta(seconds=10), 1), (timedelta(minutes=2), 1),
                                           (timedelta(minutes=15), 10), (timedelta(hours=1), 30),
                                           (timedelta(hours=6), 300), (timedelta(days=7), 7200)])
def test_buckets_refine_as_the_window_narrows(window, width):
    assert timewindow.bucket_seconds(window) == width
    assert window.total_seconds() / width <= timewindow.MAX_BUCKETS


def test_window_bounds_end_now_or_at_until():
    assert timewindow.bounds(timedelta(minutes=15), None, T0) == (T0 - timedelta(minutes=15), T0)
    assert timewindow.bounds(timedelta(hours=1), at(60), T0) == (at(60 - 3600), at(60))
    with pytest.raises(ValueError, match="before year 1"):
        timewindow.bounds(timedelta(days=2), datetime(1, 1, 1, 12, tzinfo=timezone.utc), T0)


# -- segments -------------------------------------------------------------------------------------------
BACKOFF = Backoff()


def test_active_until_the_first_attempt_then_unschedulable_until_the_next():
    segs = pod_segments([attempt(2, 1, "unschedulable"), attempt(60, 2, "scheduled")], at(100), BACKOFF,
                        created=at(0))
    assert spans(segs) == [("active", 0, 2, False), ("unschedulable", 2.01, 60, False)]


def test_an_error_waits_its_backoff_in_backoffq_then_activeq():
    segs = pod_segments([attempt(0, 1, "error"), attempt(5, 2, "scheduled")], at(100), BACKOFF)
    assert spans(segs) == [("backoff", 0.01, 1.01, False), ("active", 1.01, 5, False)]


def test_a_retry_within_the_backoff_means_the_pod_was_moved_at_once():
    # third attempt: backoff 4 s; the next attempt 4.49 s later (within backoff + the 1 s flush)
    segs = pod_segments([attempt(0, 3, "unschedulable"), attempt(4.5, 4, "unschedulable")], at(100), BACKOFF)
    assert spans(segs) == [("backoff", 0.01, 4.01, False), ("active", 4.01, 4.5, False)]
    # 6 s later: it waited in unschedulablePods for a cluster event
    segs = pod_segments([attempt(0, 3, "unschedulable"), attempt(6, 4, "unschedulable")], at(100), BACKOFF)
    assert spans(segs) == [("unschedulable", 0.01, 6, False)]


def test_the_profiles_backoff_is_used():
    short = Backoff(initial=2, maximum=3)
    segs = pod_segments([attempt(0, 5, "error"), attempt(9, 6, "error")], at(9), short)
    assert spans(segs) == [("backoff", 0.01, 3.01, False), ("active", 3.01, 9, False)]


def test_a_pod_waiting_now_ends_in_its_current_queue_and_grows():
    tried = [attempt(1, 1, "unschedulable")]
    assert spans(pod_segments(tried, at(50), BACKOFF, created=at(0), queue_now="unschedulable")) == [
        ("active", 0, 1, False), ("unschedulable", 1.01, 50, True)]
    assert spans(pod_segments(tried, at(1.5), BACKOFF, queue_now="backoff")) == [("backoff", 1.01, 1.5, True)]
    # moved to activeQ by a cluster event just now, long after its backoff: it waited in unschedulablePods
    assert spans(pod_segments(tried, at(50), BACKOFF, queue_now="active")) == [
        ("unschedulable", 1.01, 50, False), ("active", 50, 50, True)]
    # never attempted: gated by PreEnqueue since its creation
    assert spans(pod_segments([], at(30), BACKOFF, created=at(0), queue_now="gated")) == [("gated", 0, 30, True)]


def test_no_wait_after_the_binding_and_a_manual_binding_ends_the_wait():
    assert spans(pod_segments([attempt(1, 1, "scheduled")], at(50), BACKOFF, created=at(0))) == [
        ("active", 0, 1, False)]
    segs = pod_segments([attempt(1, 1, "unschedulable")], at(50), BACKOFF, left=at(30))
    assert spans(segs) == [("unschedulable", 1.01, 30, False)]
    # bound or deleted at a time that was not recorded: the last wait is left out rather than guessed
    assert spans(pod_segments([attempt(1, 1, "unschedulable")], at(50), BACKOFF)) == []


def test_clip_keeps_the_window_and_closes_what_it_cuts():
    segs = [Segment("active", at(0), at(10)), Segment("unschedulable", at(10), at(100), open=True),
            Segment("backoff", at(200), at(300))]
    assert spans(clip(segs, at(5), at(50))) == [("active", 5, 10, False), ("unschedulable", 10, 50, False)]
    assert spans(clip(segs, at(5), at(150))) == [("active", 5, 10, False), ("unschedulable", 10, 100, True)]


# -- from the database --------------------------------------------------------------------------------------
def _pod(cluster, name, created, queue=Pod.UNSCHEDULABLE, node="", bound_at=None, uid=None):
    pod = Pod.objects.create(cluster=cluster, uid=uid or f"uid-{name}", namespace="shop", name=name, raw={},
                             queue=queue, node_name=node, bound_at=bound_at)
    Pod.objects.filter(pk=pod.pk).update(created=created)
    return pod


def _cycle(cluster, seq, name, started, result, attempt_no, node="", uid=None):
    SchedulingCycle.objects.create(cluster=cluster, seq=seq, pod_uid=uid or f"uid-{name}", pod_namespace="shop",
                                   pod_name=name, profile="default-scheduler", attempt=attempt_no, started=started,
                                   result=result, node=node, duration_ms=10,
                                   message="0/3 nodes are available: 3 Insufficient cpu." if result != "scheduled"
                                   else "")


def _event(cluster, reason, name, time, node="", uid=None):
    SchedulingEvent.objects.create(cluster=cluster, time=time, reason=reason, pod_uid=uid or f"uid-{name}",
                                   pod_namespace="shop", pod_name=name, node=node,
                                   type="Warning" if reason == "FailedScheduling" else "Normal")


@pytest.fixture
def history(db):
    """Pods of a cluster over one hour before NOW: web-a waits (unschedulable), web-b was bound after a retry,
    web-c was preempted (its row is gone), web-old was only active long before the window."""
    cluster = Cluster.objects.create(name="tl")
    now = T0 + timedelta(hours=1)
    _pod(cluster, "web-a", at(60))
    _cycle(cluster, 1, "web-a", at(70), "unschedulable", 1)
    _event(cluster, "FailedScheduling", "web-a", at(70))
    _cycle(cluster, 2, "web-a", at(900), "unschedulable", 2)
    _event(cluster, "FailedScheduling", "web-a", at(900))
    _pod(cluster, "web-b", at(1000), queue=Pod.BOUND, node="n1", bound_at=at(1200.02))
    _cycle(cluster, 3, "web-b", at(1001), "unschedulable", 1)
    _cycle(cluster, 4, "web-b", at(1200), "scheduled", 2, node="n1")
    _event(cluster, "Scheduled", "web-b", at(1200.02), node="n1")
    _cycle(cluster, 5, "web-c", at(1300), "scheduled", 1, node="n2")
    _event(cluster, "Preempted", "web-c", at(3000), node="n2")
    _pod(cluster, "web-old", T0 - timedelta(days=2), queue=Pod.BOUND, node="n1", bound_at=T0 - timedelta(days=2))
    return cluster, now


def test_lanes_of_a_window_from_stored_rows(history):
    cluster, now = history
    data = timeline.timeline(cluster, {"window": timedelta(hours=1)}, now=now)
    assert data["live"] and data["window"] == "1h" and data["bucket_seconds"] == 30
    lanes = {lane["pod"]: lane for lane in data["lanes"]}
    assert set(lanes) == {"shop/web-a", "shop/web-b", "shop/web-c"}   # web-old did nothing in the window
    # pending at the window's end first, then the most recently active
    assert [lane["pod"] for lane in data["lanes"]] == ["shop/web-a", "shop/web-c", "shop/web-b"]
    a = lanes["shop/web-a"]
    assert a["state"] == "unschedulable"
    assert [(s["kind"], s["open"]) for s in a["segments"]] == [("active", False), ("unschedulable", False),
                                                                ("unschedulable", True)]
    assert a["segments"][0]["start"] == "2030-05-01T10:01:00.000Z" and a["segments"][-1]["end"] == "2030-05-01T11:00:00.000Z"
    assert [(m["kind"], m["attempt"], m["result"]) for m in a["marks"]] == [("attempt", 1, "unschedulable"),
                                                                            ("attempt", 2, "unschedulable")]
    b = lanes["shop/web-b"]
    assert [s["kind"] for s in b["segments"]] == ["active", "unschedulable"]
    assert [m["kind"] for m in b["marks"]] == ["attempt", "attempt", "bound"] and b["marks"][-1]["node"] == "n1"
    c = lanes["shop/web-c"]
    assert c["state"] == "gone" and [m["kind"] for m in c["marks"]] == ["attempt", "deleted"]


def test_the_histogram_has_every_bucket_of_the_window(history):
    cluster, now = history
    data = timeline.timeline(cluster, {"window": timedelta(hours=1)}, now=now)
    h = data["histogram"]
    assert len(h["buckets"]) == 121 and h["buckets"][0] == "2030-05-01T10:00:00Z"
    assert h["reasons"] == ["FailedScheduling", "Preempted", "Scheduled"]
    assert sum(h["series"]["FailedScheduling"]) == 2 and h["series"]["FailedScheduling"][2] == 1   # 10:01:10
    narrow = timeline.timeline(cluster, {"window": timedelta(minutes=2), "until": at(1260)}, now=now)
    assert narrow["bucket_seconds"] == 1 and len(narrow["histogram"]["buckets"]) == 121
    assert [lane["pod"] for lane in narrow["lanes"]] == ["shop/web-a", "shop/web-b"]
    assert narrow["live"] is False


def test_filters_choose_the_lanes(history):
    cluster, now = history
    hour = timedelta(hours=1)

    def pods(**f):
        return [lane["pod"] for lane in timeline.timeline(cluster, dict(f, window=hour), now=now)["lanes"]]
    assert pods(node="n1") == ["shop/web-b"]
    assert pods(reason="Preempted") == ["shop/web-c"]
    assert pods(pod="shop/web-a") == ["shop/web-a"]
    assert sorted(pods(pod="web-")) == ["shop/web-a", "shop/web-b", "shop/web-c"]
    assert pods(lanes=1) == ["shop/web-a"]
    assert timeline.timeline(cluster, {"window": hour, "lanes": 1}, now=now)["more"] is True


def test_a_pod_waiting_through_the_window_has_a_lane(history):
    cluster, now = history
    data = timeline.timeline(cluster, {"window": timedelta(minutes=5), "until": at(600)}, now=now)
    (lane,) = data["lanes"]
    assert lane["pod"] == "shop/web-a" and lane["marks"] == []
    assert [(s["kind"], s["start"], s["end"], s["open"]) for s in lane["segments"]] == [
        ("unschedulable", "2030-05-01T10:05:00.000Z", "2030-05-01T10:10:00.000Z", False)]


def test_api_and_page_take_the_window(history, api, client):
    cluster, _now = history
    r = api.get("/api/clusters/tl/timeline/?window=15m&until=2030-05-01T10:20:00Z")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["window"] == "15m" and body["start"] == "2030-05-01T10:05:00.000Z" and body["bucket_seconds"] == 10
    assert [lane["pod"] for lane in body["lanes"]] == ["shop/web-a", "shop/web-b"]   # both pending at 10:20
    for bad in ("window=15x", "window=0s", "lanes=0", "until=0001-01-01T00:10:00Z"):
        assert api.get(f"/api/clusters/tl/timeline/?{bad}").status_code == 400, bad
    page = client.get("/clusters/tl/events/?window=15m&until=2030-05-01T10:20:00")
    assert page.status_code == 200
    html = page.content.decode()
    assert re.search(r'from <time class="clock" datetime="2030-05-01T10:05:00\.000\+00:00"[^>]*>2030-05-01 10:05:00</time> '
                     r'to <time class="clock" datetime="2030-05-01T10:20:00\.000\+00:00"[^>]*>2030-05-01 10:20:00</time>', html)
    assert '<option value="15m" selected>' in html and 'value="2030-05-01T10:20:00"' in html
    custom = client.get("/clusters/tl/events/?window=150s").content.decode()
    assert '<option value="150s" selected>last 150s</option>' in custom
    assert client.get("/clusters/tl/events/?window=15x").status_code == 400


def test_a_young_clusters_default_window_holds_its_history(db):
    """With no window asked, a cluster whose first event is two minutes old opens on 5 minutes, one of ten minutes
    on 15, an older one (or one without events) on the hour."""
    from dashboard.services import queries
    cluster = Cluster.objects.create(name="young")
    now = datetime.now(timezone.utc)
    assert timeline.timeline(cluster, {}, now=now)["window"] == "1h"
    _event(cluster, "Scheduled", "web-a", now - timedelta(minutes=2), node="n1")
    assert timeline.timeline(cluster, {}, now=now)["window"] == "5m"
    assert queries.events_page(cluster, {})["window"] == "5m"
    _event(cluster, "Scheduled", "web-b", now - timedelta(minutes=10), node="n1")
    assert timeline.timeline(cluster, {}, now=now)["window"] == "15m"
    _event(cluster, "Scheduled", "web-c", now - timedelta(minutes=50), node="n1")
    assert timeline.timeline(cluster, {}, now=now)["window"] == "1h"
    assert timeline.timeline(cluster, {"window": timedelta(minutes=15)}, now=now)["window"] == "15m"
