from django.contrib import admin

from ..admin import ReadOnlyAdmin
from .models import AuditLog, DryRun, ProfileVersion


@admin.register(ProfileVersion)
class ProfileVersionAdmin(ReadOnlyAdmin):
    list_display = ("profile", "number", "author", "created", "comment")
    list_filter = ("profile",)


@admin.register(DryRun)
class DryRunAdmin(admin.ModelAdmin):
    list_display = ("id", "version", "cluster", "source", "state", "done", "total", "seconds", "created")


@admin.register(AuditLog)
class AuditLogAdmin(ReadOnlyAdmin):
    list_display = ("time", "user", "action", "profile", "version", "cluster")
    list_filter = ("action",)
    readonly_fields = ("time", "user", "action", "profile", "version", "cluster", "detail")
