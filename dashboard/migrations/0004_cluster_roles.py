"""Roles per cluster: Cluster.restricted and ClusterMembership (dashboard.access.cluster_role)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0003_pending_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="restricted",
            field=models.BooleanField(default=False, help_text="only its members (and admins) see the cluster"),
        ),
        migrations.CreateModel(
            name="ClusterMembership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("viewer", "Viewer"), ("editor", "Editor")], default="viewer",
                                          max_length=16)),
                ("created", models.DateTimeField(auto_now_add=True)),
                ("cluster", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships",
                                              to="dashboard.cluster")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                           related_name="cluster_memberships", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["cluster", "user"],
                "constraints": [models.UniqueConstraint(fields=("cluster", "user"), name="membership_unique_user")],
            },
        ),
    ]
