"""Work that outlives a request: a Celery task in the full stack, a thread of this process in embedded mode
(no broker there). Profile dry runs and what-if runs start this way; each task's body is ``execute(pk)``."""
from __future__ import annotations

import threading

from celery import current_app
from django.conf import settings
from django.db import connection


def start(task: str, execute, pk: int, name: str) -> None:
    """The Celery task named ``task`` with ``pk`` when there is a broker, else ``execute(pk)`` in a daemon thread
    named ``name`` (the task is sent by name: the modules that start work need not import the tasks')."""
    if settings.SCHEDULER_MODE == "celery":
        current_app.send_task(task, args=[pk])
        return

    def target():
        try:
            execute(pk)
        finally:
            connection.close()
    threading.Thread(target=target, name=name, daemon=True).start()
