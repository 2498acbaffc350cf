"""Credentials at rest: real clusters' kubeconfig documents encrypted, simulated clusters' API tokens as digests.

DRF's authtoken kept API keys in plaintext; its table is dropped (knox stores digests): existing API tokens must be
created again (`manage.py apitoken USER`).
"""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0005_shadow"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="cluster",
            name="kubeconfig",
            field=models.CharField(blank=True, max_length=500,
                                   help_text="path of a kubeconfig file on the workers, e.g. a mounted secret "
                                             "(real clusters; or the stored kubeconfig document)"),
        ),
        migrations.AddField(
            model_name="cluster",
            name="kubeconfig_secret",
            field=models.TextField(blank=True, editable=False,
                                   help_text="the kubeconfig document, Fernet-encrypted (dashboard.crypto)"),
        ),
        migrations.AddField(
            model_name="cluster",
            name="kubeconfig_summary",
            field=models.CharField(blank=True, editable=False, max_length=600,
                                   help_text="server, context and user of the stored kubeconfig (no secrets)"),
        ),
        migrations.CreateModel(
            name="ClusterToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("digest", models.CharField(help_text="SHA-256 of the token, hex", max_length=64, unique=True)),
                ("prefix", models.CharField(help_text="the token's first characters, to tell tokens apart",
                                            max_length=8)),
                ("created", models.DateTimeField(auto_now_add=True)),
                ("last_used", models.DateTimeField(blank=True, null=True)),
                ("revoked", models.DateTimeField(blank=True, null=True)),
                ("cluster", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="tokens",
                                              to="dashboard.cluster")),
                ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["cluster", "-created", "-id"],
                "indexes": [models.Index(fields=["cluster", "prefix"], name="clustertoken_prefix_idx")],
            },
        ),
        migrations.RunSQL(
            ["DROP TABLE IF EXISTS authtoken_token", "DELETE FROM django_migrations WHERE app = 'authtoken'"],
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
