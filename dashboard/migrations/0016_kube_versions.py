"""Kubernetes versions of clusters and profiles: rows made before ran kube-scheduler v1.30's rules and keep them;
new clusters and profiles default to the latest supported version."""
from django.db import migrations, models

CLUSTER_HELP = ("the Kubernetes version whose scheduler rules run (blank: a real cluster's own, from its /version, "
                "the nearest supported)")
PROFILE_HELP = "the Kubernetes version the document is written for and checked at"


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0015_observe'),
    ]

    operations = [
        migrations.AddField(
            model_name='cluster',
            name='feature_gates',
            field=models.TextField(blank=True, help_text='kube-scheduler\'s --feature-gates, e.g. "NodeDeclaredFeatures=false" (blank: the version\'s defaults)'),
        ),
        migrations.AddField(
            model_name='cluster',
            name='kube_version',
            field=models.CharField(blank=True, default='1.30', help_text=CLUSTER_HELP, max_length=8),
        ),
        migrations.AlterField(
            model_name='cluster',
            name='kube_version',
            field=models.CharField(blank=True, default='1.36', help_text=CLUSTER_HELP, max_length=8),
        ),
        migrations.AddField(
            model_name='cluster',
            name='server_version',
            field=models.CharField(blank=True, editable=False, help_text="gitVersion of a real cluster's /version, read when it connects", max_length=64),
        ),
        migrations.AddField(
            model_name='schedulerprofile',
            name='kube_version',
            field=models.CharField(default='1.30', help_text=PROFILE_HELP, max_length=8),
        ),
        migrations.AlterField(
            model_name='schedulerprofile',
            name='kube_version',
            field=models.CharField(default='1.36', help_text=PROFILE_HELP, max_length=8),
        ),
    ]
