from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Schedscope"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import crypto  # noqa: F401  (registers the encryption-key system checks)
        from .services import credentials
        credentials.audit_api_tokens()
