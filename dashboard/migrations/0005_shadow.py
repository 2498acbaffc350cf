"""Shadow mode: Cluster.mode and the ShadowDecision records."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0004_cluster_roles"),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="mode",
            field=models.CharField(
                choices=[("scheduler", "Scheduler (binds pending pods)"),
                         ("shadow", "Shadow (read-only: compares other schedulers' bindings with the profile's choice)")],
                default="scheduler", max_length=16),
        ),
        migrations.CreateModel(
            name="ShadowDecision",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("time", models.DateTimeField()),
                ("pod_uid", models.CharField(max_length=300)),
                ("pod_namespace", models.CharField(max_length=253)),
                ("pod_name", models.CharField(max_length=253)),
                ("scheduler", models.CharField(help_text="schedulerName of the pod (who bound it)", max_length=200)),
                ("profile", models.CharField(help_text="the profile compared", max_length=200)),
                ("actual_node", models.CharField(help_text="where the other scheduler bound it", max_length=253)),
                ("shadow_node", models.CharField(blank=True, help_text="the profile's choice (blank: none)",
                                                 max_length=253)),
                ("agree", models.BooleanField()),
                ("within_ties", models.BooleanField(help_text="the actual node had the profile's best score too")),
                ("actual_feasible", models.BooleanField(
                    help_text="the actual node passes the profile's Filter plugins")),
                ("actual_score", models.BigIntegerField(blank=True, null=True)),
                ("shadow_score", models.BigIntegerField(blank=True, null=True)),
                ("actual_reasons", models.JSONField(blank=True, default=list,
                                                    help_text="why the profile rejects the actual node")),
                ("message", models.TextField(blank=True,
                                             help_text="the profile's FitError or error, if it found no node")),
                ("num_feasible", models.IntegerField(default=0)),
                ("cycle_seq", models.BigIntegerField(blank=True, help_text="seq of the shadow's recorded cycle",
                                                     null=True)),
                ("cluster", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                              related_name="shadow_decisions", to="dashboard.cluster")),
            ],
            options={
                "ordering": ["-time", "-id"],
                "indexes": [models.Index(fields=["cluster", "-time"], name="shadow_time_idx"),
                            models.Index(fields=["cluster", "agree", "-time"], name="shadow_agree_idx")],
            },
        ),
    ]
