"""The broadcaster when the channel layer fails: scheduling's side never sees the error, the log says so once
per outage, and the updates lost meanwhile leave a gap in seq that tells clients to refetch."""
from __future__ import annotations

import logging

from dashboard.services import broadcast


def test_failed_publishes_are_logged_once_and_leave_a_gap(monkeypatch, caplog):
    sent, failing = [], [True]

    def publish(group, msg):
        if failing[0]:
            raise ConnectionError("Error 111 connecting to redis")
        sent.append(msg)
    monkeypatch.setattr(broadcast, "publish", publish)
    b = broadcast.Broadcaster(7, interval=3600)
    try:
        with caplog.at_level(logging.WARNING, logger="dashboard.broadcast"):
            for active in (3, 2, 1):
                b.queue_state({"active": active}, rate=1.0)
                b.send_now()
            failing[0] = False
            b.queue_state({"active": 0}, rate=1.0)
            b.send_now()
    finally:
        b.close()
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "broadcast to cluster-7 failed", "broadcast to cluster-7 works again"]
    assert [(m["seq"], m["queue"]["active"]) for m in sent] == [(4, 0)]
