"""Starting a cluster's scheduler loop where it belongs, and the requests that need one: the top of the control
plane (``control`` carries the commands, ``runner`` is the loop).

Embedded mode: the loop is a thread of this process. Celery mode: the task ``run_cluster`` on a worker, sent by
name (the task module imports this one).
"""
from __future__ import annotations

import atexit
import threading

from celery import current_app
from django.conf import settings

from . import control
from .runner import Runner, stop_all

RUN_CLUSTER_TASK = "dashboard.tasks.run_cluster"
_threads = {}
_guard = threading.Lock()


def ensure_runner(cluster_id: int) -> None:
    """Make sure a loop drives the cluster (no-op if one does)."""
    if settings.SCHEDULER_MODE == "celery":
        current_app.send_task(RUN_CLUSTER_TASK, args=[cluster_id])
        return
    with _guard:
        t = _threads.get(cluster_id)
        if t is not None and t.is_alive():
            return
        t = threading.Thread(target=Runner(cluster_id).run, name=f"scheduler-{cluster_id}", daemon=True)
        if not _threads:
            atexit.register(stop_all)  # at exit the loops stop and their recorders flush
        _threads[cluster_id] = t
        t.start()


def request(cluster_id: int, op: str, timeout: float, **args) -> dict:
    """``control.request``, starting a loop when none drives the cluster."""
    return control.request(cluster_id, op, timeout, start=ensure_runner, **args)
