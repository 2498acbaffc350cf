"""A simulated cluster's newest resourceVersion moves from its row into a StoreCounter row of its own (see the
model: the cluster's row no longer gets a new version per write)."""
import django.db.models.deletion
from django.db import migrations, models


def move_counters(apps, schema_editor):
    Cluster = apps.get_model("dashboard", "Cluster")
    StoreCounter = apps.get_model("dashboard", "StoreCounter")
    StoreCounter.objects.bulk_create([StoreCounter(cluster_id=pk, resource_version=rv) for pk, rv in
                                      Cluster.objects.filter(resource_version__gt=0)
                                      .values_list("pk", "resource_version")])


def move_counters_back(apps, schema_editor):
    Cluster = apps.get_model("dashboard", "Cluster")
    StoreCounter = apps.get_model("dashboard", "StoreCounter")
    for pk, rv in StoreCounter.objects.values_list("cluster_id", "resource_version"):
        Cluster.objects.filter(pk=pk).update(resource_version=rv)


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0009_store"),
    ]

    operations = [
        migrations.CreateModel(
            name="StoreCounter",
            fields=[
                ("cluster", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                                 related_name="store_counter", serialize=False,
                                                 to="dashboard.cluster")),
                ("resource_version", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(move_counters, move_counters_back),
        migrations.RemoveField(model_name="cluster", name="resource_version"),
    ]
