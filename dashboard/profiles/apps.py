from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "dashboard.profiles"
    label = "profiles"
    verbose_name = "Scheduler profiles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import tasks  # noqa: F401  (registers the Celery task in workers)
