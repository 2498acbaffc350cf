from django.contrib import admin

from .models import AuditLog, DryRun, ProfileVersion


@admin.register(ProfileVersion)
class ProfileVersionAdmin(admin.ModelAdmin):
    list_display = ("profile", "number", "author", "created", "comment")
    list_filter = ("profile",)


@admin.register(DryRun)
class DryRunAdmin(admin.ModelAdmin):
    list_display = ("id", "version", "cluster", "source", "state", "done", "total", "seconds", "created")


@admin.register(AuditLog)
class AuditLogAdmin(admin.ModelAdmin):
    list_display = ("time", "user", "action", "profile", "version", "cluster")
    list_filter = ("action",)
    readonly_fields = ("time", "user", "action", "profile", "version", "cluster", "detail")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
