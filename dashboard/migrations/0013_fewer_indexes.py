"""One index less per row written to the hot tables: the foreign key's own index on cluster_id (every index and
constraint of these tables leads with it) and, on the pods table, node_name's two and (cluster, node_name) (the
pending indexes lead with both). SQLite alters a field by building the table again, without the pod count's
triggers (migration 0012): they are made again after it."""
import importlib

import django.db.models.deletion
from django.db import migrations, models

pod_count = importlib.import_module("dashboard.migrations.0012_pod_count")


def count_again(apps, schema_editor):
    """The pod count's triggers, dropped with the old table on SQLite (PostgreSQL keeps them)."""
    if schema_editor.connection.vendor == "sqlite":
        for sql in pod_count.SQLITE_DROP + pod_count.SQLITE:
            schema_editor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0012_pod_count'),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, count_again),   # unapplied: after the tables' rebuilding
        migrations.RemoveIndex(
            model_name='pod',
            name='pod_node_idx',
        ),
        *[migrations.AlterField(
            model_name=model,
            name="cluster",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name=related, to="dashboard.cluster"),
        ) for model, related in (("pod", "pods"), ("schedulingcycle", "cycles"), ("schedulingevent", "events"),
                                 ("storechange", "store_changes"))],
        migrations.AlterField(
            model_name="pod",
            name="node_name",
            field=models.CharField(blank=True, max_length=253),
        ),
        migrations.RunPython(count_again, migrations.RunPython.noop),
    ]
