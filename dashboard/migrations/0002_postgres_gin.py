"""PostgreSQL only: a GIN index so that "cycles rejected by plugin X" (failing_plugins ? 'X') is indexed."""
from django.db import migrations


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE INDEX IF NOT EXISTS cycle_failing_plugins_gin "
                              "ON dashboard_schedulingcycle USING gin (failing_plugins)")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS cycle_failing_plugins_gin")


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
