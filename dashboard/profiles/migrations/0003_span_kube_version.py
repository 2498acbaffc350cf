"""Version spans note the Kubernetes version and feature gates their cycles ran at (spans made before: v1.30)."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("profiles", "0002_editor_group")]
    operations = [
        migrations.AddField(
            model_name="versionspan", name="kube_version",
            field=models.CharField(default="1.30", help_text="the Kubernetes version the scheduler ran", max_length=8),
            preserve_default=False),
        migrations.AddField(
            model_name="versionspan", name="feature_gates",
            field=models.TextField(blank=True, help_text="its --feature-gates (blank: the version's defaults)")),
    ]
