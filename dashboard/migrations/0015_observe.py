"""Observe mode: the other scheduler's FailedScheduling message on a pending pod; the mode's new label. SQLite adds
the column by building the pods table again, without the pod count's triggers: they are made again after it."""
import importlib

from django.db import migrations, models

fewer_indexes = importlib.import_module("dashboard.migrations.0013_fewer_indexes")


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0014_generated_password'),
    ]

    operations = [
        migrations.AddField(
            model_name='pod',
            name='kube_message',
            field=models.TextField(blank=True, help_text="observe mode: the other scheduler's latest FailedScheduling message, beside ``reason``"),
        ),
        migrations.AlterField(
            model_name='cluster',
            name='mode',
            field=models.CharField(choices=[('scheduler', 'Scheduler (binds pending pods)'), ('shadow', "Observe (read-only: explains another scheduler's pending pods and compares its bindings with the profile's choice)")], default='scheduler', max_length=16),
        ),
        migrations.RunPython(fewer_indexes.count_again, migrations.RunPython.noop),
    ]
