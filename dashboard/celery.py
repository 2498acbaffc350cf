"""The Celery app: ``celery -A dashboard worker``. Broker: REDIS_URL."""
import os

from celery import Celery
from celery.signals import worker_ready, worker_shutting_down

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

app = Celery("schedscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["dashboard"])


@worker_ready.connect
def resume_clusters(sender=None, **_kw):
    """A (re)started worker picks up every cluster that should be running."""
    from dashboard.tasks import resume_all
    resume_all.delay()


@worker_shutting_down.connect
def stop_loops(**_kw):
    """A warm shutdown stops this worker's loops (their clusters stay running for the next worker)."""
    from dashboard.services.runner import stop_all
    stop_all()
