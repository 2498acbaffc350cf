"""Embedded mode: the web process itself runs the scheduler loops of the clusters that should run."""
from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import connection
from django.db.utils import DatabaseError

log = logging.getLogger("dashboard.embedded")


def autostart() -> None:
    """Start a loop thread per running or paused cluster (embedded mode, when SCHEDSCOPE AUTOSTART is on)."""
    if settings.SCHEDULER_MODE != "thread" or not settings.SCHEDSCOPE["AUTOSTART"]:
        return

    def start():
        from ..models import Cluster
        from . import loops
        try:
            ids = list(Cluster.objects.exclude(desired_state=Cluster.STOPPED).values_list("id", flat=True))
        except DatabaseError as err:
            log.warning("embedded scheduler not started: %s", err)
            return
        finally:
            connection.close()
        for cid in ids:
            loops.ensure_runner(cid)

    threading.Thread(target=start, name="autostart", daemon=True).start()
