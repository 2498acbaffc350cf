"""Versions of SchedulerProfile documents, which version each cluster's scheduler runs, dry runs, audit."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from ..models import BackgroundRun, Cluster, SchedulerProfile


class ProfileVersion(models.Model):
    """One saved KubeSchedulerConfiguration document of a profile (every save makes one)."""

    profile = models.ForeignKey(SchedulerProfile, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    document = models.JSONField(default=dict, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(auto_now_add=True)
    comment = models.CharField(max_length=500, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "number"], name="profile_version_unique")]
        ordering = ["profile", "-number"]
        permissions = [("edit_profiles", "Can save, dry-run and apply scheduler profiles")]

    def __str__(self):
        return f"{self.profile.name} v{self.number}"


class ActiveVersion(models.Model):
    """The version whose document a profile's clusters run (SchedulerProfile.document is its copy)."""

    profile = models.OneToOneField(SchedulerProfile, on_delete=models.CASCADE, related_name="active")
    version = models.ForeignKey(ProfileVersion, on_delete=models.PROTECT, related_name="+")
    applied_at = models.DateTimeField(auto_now=True)


class VersionSpan(models.Model):
    """From cycle ``first_seq`` on, the cluster's cycles were made with ``version`` at Kubernetes ``kube_version``
    with ``feature_gates`` (until the next span)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="version_spans")
    version = models.ForeignKey(ProfileVersion, null=True, on_delete=models.SET_NULL, related_name="spans")
    kube_version = models.CharField(max_length=8, help_text="the Kubernetes version the scheduler ran")
    feature_gates = models.TextField(blank=True, help_text="its --feature-gates (blank: the version's defaults)")
    first_seq = models.BigIntegerField()
    started = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "-first_seq"], name="span_cluster_seq_idx")]
        ordering = ["cluster", "-first_seq", "-id"]


class DryRun(BackgroundRun):
    """A candidate version run against a cluster's state next to the cluster's current document."""

    PENDING, WINDOW = "pending", "window"
    SOURCES = [(PENDING, "current pending pods"), (WINDOW, "pods of the recent cycles, re-scheduled")]

    version = models.ForeignKey(ProfileVersion, on_delete=models.CASCADE, related_name="dry_runs")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=16, choices=SOURCES, default=PENDING)
    window = models.PositiveIntegerField(default=200, help_text="recent cycles (source window)")

    class Meta:
        ordering = ["-created"]


class AuditLog(models.Model):
    """Who applied (or rolled back, saved) which version, when, to which cluster."""

    time = models.DateTimeField(auto_now_add=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=32)
    profile = models.ForeignKey(SchedulerProfile, null=True, on_delete=models.SET_NULL, related_name="+")
    version = models.ForeignKey(ProfileVersion, null=True, on_delete=models.SET_NULL, related_name="+")
    cluster = models.ForeignKey(Cluster, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-time", "-id"]
