"""The store of simulated clusters: one resourceVersion sequence per cluster, objects other than nodes and pods
moved out of ClusterState.resources into StoredObject rows, and the change log."""

import django.db.models.deletion
from django.db import migrations, models

ARRAY_KINDS = {"namespaces": "Namespace", "persistentvolumes": "PersistentVolume",
               "persistentvolumeclaims": "PersistentVolumeClaim", "storageclasses": "StorageClass",
               "csinodes": "CSINode", "csidrivers": "CSIDriver", "services": "Service", "replicasets": "ReplicaSet",
               "statefulsets": "StatefulSet", "replicationcontrollers": "ReplicationController",
               "poddisruptionbudgets": "PodDisruptionBudget"}
CLUSTER_SCOPED = {"Namespace", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver"}


def into_store(apps, schema_editor):
    """Every existing cluster's rows get resourceVersions 1, 2, ... and its objects move into StoredObject."""
    Cluster, ClusterState = apps.get_model("dashboard", "Cluster"), apps.get_model("dashboard", "ClusterState")
    Node, Pod = apps.get_model("dashboard", "Node"), apps.get_model("dashboard", "Pod")
    StoredObject = apps.get_model("dashboard", "StoredObject")
    for cluster in Cluster.objects.all():
        rv = 0
        for model in (Node, Pod):
            for pk in model.objects.filter(cluster=cluster).order_by("id").values_list("pk", flat=True):
                rv += 1
                model.objects.filter(pk=pk).update(rv=rv)
        state = ClusterState.objects.filter(cluster=cluster).first()
        rows = {}
        for array, items in ((state.resources or {}) if state else {}).items():
            kind = ARRAY_KINDS.get(array)
            for raw in items if kind else ():
                meta = raw.get("metadata") or {}
                key = meta.get("name", "") if kind in CLUSTER_SCOPED else \
                    f'{meta.get("namespace") or "default"}/{meta.get("name", "")}'
                rv += 1
                rows[(kind, key)] = StoredObject(cluster=cluster, kind=kind, key=key, rv=rv, raw=raw)
        StoredObject.objects.bulk_create(rows.values())
        Cluster.objects.filter(pk=cluster.pk).update(resource_version=rv)


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0008_whatif'),
    ]

    operations = [
        migrations.AddField(
            model_name='cluster',
            name='kubelet',
            field=models.BooleanField(default=True, help_text='simulated kubelet: bound pods run and report Ready'),
        ),
        migrations.AddField(
            model_name='cluster',
            name='compacted_rv',
            field=models.BigIntegerField(default=0, help_text='the newest change pruned from the change log'),
        ),
        migrations.AddField(
            model_name='cluster',
            name='resource_version',
            field=models.BigIntegerField(default=0, help_text="the store's newest resourceVersion (simulated)"),
        ),
        migrations.AddField(
            model_name='node',
            name='rv',
            field=models.BigIntegerField(default=0, help_text='resourceVersion of its last change'),
        ),
        migrations.AddField(
            model_name='pod',
            name='rv',
            field=models.BigIntegerField(default=0, help_text='resourceVersion of its last change'),
        ),
        migrations.AddField(
            model_name='schedulingevent',
            name='raw',
            field=models.JSONField(blank=True, help_text='the v1 Event as the Kubernetes API serves it', null=True),
        ),
        migrations.AddField(
            model_name='schedulingevent',
            name='rv',
            field=models.BigIntegerField(default=0, help_text='resourceVersion (0: recorded before the store)'),
        ),
        migrations.CreateModel(
            name='StoreChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('rv', models.BigIntegerField()),
                ('kind', models.CharField(max_length=64)),
                ('type', models.CharField(max_length=8)),
                ('key', models.CharField(max_length=600)),
                ('raw', models.JSONField()),
                ('writer', models.CharField(blank=True, help_text='the scheduler loop that wrote it (its lock token), so that it skips its own changes', max_length=200)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='store_changes', to='dashboard.cluster')),
            ],
            options={
                'ordering': ['cluster', 'rv'],
                'constraints': [models.UniqueConstraint(fields=('cluster', 'rv'), name='store_change_unique_rv')],
            },
        ),
        migrations.CreateModel(
            name='StoredObject',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=64)),
                ('key', models.CharField(help_text='namespace/name, or name for cluster-scoped kinds', max_length=600)),
                ('rv', models.BigIntegerField(default=0)),
                ('raw', models.JSONField()),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='stored_objects', to='dashboard.cluster')),
            ],
            options={
                'ordering': ['cluster', 'id'],
                'constraints': [models.UniqueConstraint(fields=('cluster', 'kind', 'key'), name='stored_object_unique_key')],
            },
        ),
        migrations.RunPython(into_store, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='clusterstate',
            name='resources',
        ),
    ]
