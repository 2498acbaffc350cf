"""Schedscope's Django project and app: recorded scheduling cycles, live queue state, API and pages."""

from .celery import app as celery_app

__all__ = ("celery_app",)
