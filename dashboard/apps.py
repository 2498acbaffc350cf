from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Schedscope"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import crypto  # noqa: F401  (registers the encryption-key system checks)
        from django.contrib.auth import get_user_model, user_logged_in
        from django.db.models.signals import post_delete, post_save

        from .services import credentials, memberships
        from .signin import flag_generated_password
        credentials.audit_api_tokens()
        user_model = get_user_model()
        post_save.connect(memberships.user_changed, sender=user_model, dispatch_uid="schedscope-user-saved")
        post_delete.connect(memberships.user_changed, sender=user_model, dispatch_uid="schedscope-user-deleted")
        user_logged_in.connect(flag_generated_password, dispatch_uid="schedscope-generated-password")
