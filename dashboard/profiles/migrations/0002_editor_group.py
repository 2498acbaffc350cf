from django.db import migrations


def create_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name="editor")


class Migration(migrations.Migration):
    """The "editor" group: its members save, dry-run and apply scheduler profiles."""

    dependencies = [("profiles", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_group, migrations.RunPython.noop)]
