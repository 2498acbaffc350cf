"""The Celery app: ``celery -A dashboard worker``. Broker: REDIS_URL."""
import logging
import os
import threading
import time

from celery import Celery
from celery.signals import celeryd_init, worker_process_init, worker_ready, worker_shutting_down
from celery.utils.text import str_to_list

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

app = Celery("schedscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["dashboard"])


_questions_only = False   # this worker serves the questions queue alone (its pool's processes inherit it)


@celeryd_init.connect
def note_questions_only(sender=None, options=None, **_kw):
    global _questions_only
    from dashboard.services import background
    _questions_only = set(str_to_list((options or {}).get("queues") or [])) == {background.QUEUE}


@worker_process_init.connect
def question_process_at_the_lowest_priority(**_kw):
    """A pool process of a questions-only worker runs what-ifs and dry runs at SCHED_IDLE."""
    if _questions_only:
        from dashboard.services import background
        background.lowest_priority_process(group=False)


@worker_ready.connect
def questions_worker_at_the_lowest_priority(sender=None, **_kw):
    """A questions-only worker, once ready (it starts at the priority it was given, so that a busy machine cannot
    keep it from starting), goes down to the lowest priority, its session's scheduling group with it
    (``background.lowest_priority_process``): one team's heavy question never slows another's loop."""
    if _questions_only:
        from dashboard.services import background
        background.lowest_priority_process()


@worker_ready.connect
def resume_clusters(sender=None, **_kw):
    """A (re)started worker picks up every cluster that should be running."""
    from dashboard.tasks import resume_all
    resume_all.delay()
    threading.Thread(target=_watchdog, name="cluster-watchdog", daemon=True).start()


def _watchdog():
    """Every lock TTL: a cluster that should run but whose lock nobody holds and whose loop has not marked it
    driven (``Cluster.heartbeat``) for a lock TTL (its worker died, and its task died with it) gets a new loop
    task, which any worker may pick up. A live loop whose lock vanished with a Redis restarted empty takes it
    again itself (``Runner._renew``) and goes on marking the cluster meanwhile: no second loop races it for it."""
    from datetime import datetime, timedelta, timezone

    from django.conf import settings
    from django.db import connection

    from dashboard.models import Cluster
    from dashboard.services import control, loops
    log = logging.getLogger("dashboard.watchdog")
    interval = settings.SCHEDSCOPE["LOCK_TTL_SECONDS"]
    while True:
        time.sleep(interval)
        try:
            alive_since = datetime.now(timezone.utc) - timedelta(seconds=interval)
            for cid, heartbeat in Cluster.objects.exclude(desired_state=Cluster.STOPPED).values_list("id",
                                                                                                      "heartbeat"):
                if not control.is_driven(cid) and (heartbeat is None or heartbeat < alive_since):
                    loops.ensure_runner(cid)
        except Exception as err:  # database or Redis away: try again next time
            log.warning("watchdog: %s", err)
        finally:
            connection.close()


@worker_shutting_down.connect
def stop_loops(**_kw):
    """A warm shutdown stops this worker's loops (their clusters stay running for the next worker)."""
    from dashboard.services.runner import stop_all
    stop_all()
