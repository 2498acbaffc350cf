"""SchedulingCycle.matrix stored as compressed JSON bytes (dashboard.fields.PackedJSONField), rows converted."""

from django.db import migrations

import dashboard.fields


def _copy_matrices(apps, schema_editor, source: str, target: str) -> None:
    """Every stored matrix copied from one column to the other, 500 rows at a time."""
    cycle = apps.get_model("dashboard", "SchedulingCycle")
    rows = cycle.objects.using(schema_editor.connection.alias).only("id", source)
    batch = []
    for row in rows.iterator(chunk_size=500):
        setattr(row, target, getattr(row, source))
        batch.append(row)
        if len(batch) == 500:
            cycle.objects.bulk_update(batch, [target])
            batch.clear()
    if batch:
        cycle.objects.bulk_update(batch, [target])


def pack_matrices(apps, schema_editor):
    _copy_matrices(apps, schema_editor, "matrix_json", "matrix")


def unpack_matrices(apps, schema_editor):
    _copy_matrices(apps, schema_editor, "matrix", "matrix_json")


def external_storage(apps, schema_editor):
    """PostgreSQL: the packed bytes are compressed already; do not try to compress them again."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE dashboard_schedulingcycle ALTER COLUMN matrix SET STORAGE EXTERNAL")


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0006_credentials"),
    ]

    operations = [
        migrations.RenameField("schedulingcycle", "matrix", "matrix_json"),
        migrations.AddField(
            model_name="schedulingcycle",
            name="matrix",
            field=dashboard.fields.PackedJSONField(blank=True, default=dict,
                                                   help_text="compact filter and score matrices (tracecodec)"),
        ),
        migrations.RunPython(pack_matrices, unpack_matrices),
        migrations.RemoveField("schedulingcycle", "matrix_json"),
        migrations.RunPython(external_storage, migrations.RunPython.noop),
    ]
