"""Celery task of the profiles app: dry runs."""
from __future__ import annotations

from celery import shared_task


@shared_task
def dry_run(run_id: int):
    """Run a DryRun (its row shows the progress and, at the end, the diff)."""
    from .dryrun import execute
    execute(run_id)
    return run_id
