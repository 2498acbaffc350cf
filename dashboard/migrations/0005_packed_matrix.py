"""SchedulingCycle.matrix stored as compressed JSON bytes (dashboard.fields.PackedJSONField), rows converted."""

from django.db import migrations

import dashboard.fields


def pack_matrices(apps, schema_editor):
    """Copy every stored matrix from the old jsonb column into the packed column."""
    cycle = apps.get_model("dashboard", "SchedulingCycle")
    rows = cycle.objects.using(schema_editor.connection.alias).exclude(matrix_json={}).only("id", "matrix_json")
    batch = []
    for row in rows.iterator(chunk_size=500):
        row.matrix = row.matrix_json
        batch.append(row)
        if len(batch) == 500:
            cycle.objects.bulk_update(batch, ["matrix"])
            batch.clear()
    if batch:
        cycle.objects.bulk_update(batch, ["matrix"])


def unpack_matrices(apps, schema_editor):
    cycle = apps.get_model("dashboard", "SchedulingCycle")
    batch = []
    for row in cycle.objects.using(schema_editor.connection.alias).only("id", "matrix").iterator(chunk_size=500):
        row.matrix_json = row.matrix
        batch.append(row)
        if len(batch) == 500:
            cycle.objects.bulk_update(batch, ["matrix_json"])
            batch.clear()
    if batch:
        cycle.objects.bulk_update(batch, ["matrix_json"])


def external_storage(apps, schema_editor):
    """PostgreSQL: the packed bytes are compressed already; do not try to compress them again."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE dashboard_schedulingcycle ALTER COLUMN matrix SET STORAGE EXTERNAL")


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0003_pending_indexes"),
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
