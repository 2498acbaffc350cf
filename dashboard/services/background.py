"""Work that outlives a request: profile dry runs and what-if questions. In the full stack a Celery task on the
``questions`` queue, which a worker of its own serves (never the scheduler loops' worker and threads); in embedded
mode (no broker) a thread of a small pool of this process, each at the lowest CPU priority (Linux's SCHED_IDLE
and ``os.nice``, both a thread's own). Each task's body is ``execute(pk)``.

Questions are limited while they wait or run: QUESTIONS_PER_USER for one asker, QUESTIONS_PER_CLUSTER about one
cluster (``admit``), so that one team's questions cannot queue out another's."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from ..models import BackgroundRun
from .rowlock import lock_cluster

QUEUE = "questions"
_pool: ThreadPoolExecutor | None = None
_pool_guard = threading.Lock()


class Busy(Exception):
    """Too many questions of this asker, or about this cluster, are waiting or running."""


def admit(model: type[BackgroundRun], cluster, user=None, **fields) -> BackgroundRun:
    """A new run of ``model`` (a BackgroundRun) about ``cluster`` asked by ``user`` (None: the command line), or
    Busy when its asker or its cluster has reached its limit. The asker's and the cluster's rows are locked while
    counting, so that questions asked at once cannot all pass."""
    conf = settings.SCHEDSCOPE
    with transaction.atomic():
        if user is not None:
            list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk"))
        lock_cluster(cluster.pk)
        since = timezone.now() - timedelta(seconds=conf["QUESTION_STALE_SECONDS"])
        active = [m.objects.filter(state__in=(BackgroundRun.QUEUED, BackgroundRun.RUNNING), created__gte=since)
                  for m in BackgroundRun.__subclasses__()]
        if user is not None:
            mine = sum(q.filter(author=user).count() for q in active)
            if mine >= conf["QUESTIONS_PER_USER"]:
                raise Busy(f"{mine} questions of yours are running (at most {conf['QUESTIONS_PER_USER']} at a "
                           "time): ask again when one has finished")
        about = sum(q.filter(cluster=cluster).count() for q in active)
        if about >= conf["QUESTIONS_PER_CLUSTER"]:
            raise Busy(f"{about} questions about cluster {cluster.name} are running (at most "
                       f"{conf['QUESTIONS_PER_CLUSTER']} at a time): ask again when one has finished")
        return model.objects.create(cluster=cluster, author=user, **fields)


def start(task: str, execute, pk: int) -> None:
    """The Celery task named ``task`` with ``pk`` on the questions queue when there is a broker, else
    ``execute(pk)`` in the question pool (the task is sent by name: the modules that start work need not import
    the tasks')."""
    if settings.SCHEDULER_MODE == "celery":
        current_app.send_task(task, args=[pk], queue=QUEUE)
        return
    _question_pool().submit(_run_here, execute, pk)


def _run_here(execute, pk: int) -> None:
    try:
        execute(pk)
    finally:
        connection.close()


def _lower_priority() -> None:
    """Run this thread only when no other wants the CPU (the GIL still passes between it and the loops)."""
    os.nice(settings.SCHEDSCOPE["QUESTION_NICE"])
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def lowest_priority_process(group: bool = True) -> None:
    """This process (and those it starts later) runs only when nothing else wants the CPU (a worker of the
    questions queue alone): SCHED_IDLE, and with ``group`` its session's scheduling group at nice 19. Where Linux
    groups processes by session (autogroup), a session weighs as much as any other whatever its processes' policy: SCHED_IDLE alone
    then only yields to the session's own processes (measured: a SCHED_IDLE busy loop in a session of its own
    got as much CPU as a nice-0 one among 20 runnable processes; with the group at nice 19, 2% of that)."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    if not group:
        return
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:   # no autogroup (a kernel without it, or the process is in a cgroup of its own)
        pass


def _question_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_guard:
        if _pool is None:
            _pool = ThreadPoolExecutor(settings.SCHEDSCOPE["QUESTION_THREADS"], thread_name_prefix="question",
                                       initializer=_lower_priority)
        return _pool
