"""StoreCounter.bytes: the size of every pod, node and other object (StoredObject) a simulated cluster holds, its
JSON as the database renders it, kept by triggers on those tables (every insert, update and delete, whoever makes
it), counted once here: the bytes quota of the dashboard's writers (``services.admitted.check_quota``) reads it
under the cluster's lock instead of summing the rows. Events are left out: their count quota and their retention
bound them. SQLite adds the column by building the counter's table again, which its pod count triggers name:
they are dropped before and made again after."""
import importlib

from django.db import migrations, models

pod_count = importlib.import_module("dashboard.migrations.0012_pod_count")

TABLES = ("dashboard_pod", "dashboard_node", "dashboard_storedobject")


def _postgresql(table: str) -> list:
    size = "octet_length(raw::text)"
    return [
        f"""CREATE FUNCTION {table}_bytes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO dashboard_storecounter AS c (cluster_id, resource_version, bytes)
                    SELECT cluster_id, 0, sum({size}) FROM added GROUP BY cluster_id
                    ON CONFLICT (cluster_id) DO UPDATE SET bytes = c.bytes + EXCLUDED.bytes;
            ELSIF TG_OP = 'DELETE' THEN
                UPDATE dashboard_storecounter AS c SET bytes = c.bytes - r.n
                    FROM (SELECT cluster_id, sum({size}) AS n FROM removed GROUP BY cluster_id) AS r
                    WHERE c.cluster_id = r.cluster_id;
            ELSE   -- only rows whose object changed: updates of other columns leave the counter's row alone
                UPDATE dashboard_storecounter AS c SET bytes = c.bytes + r.n
                    FROM (SELECT a.cluster_id, sum(octet_length(a.raw::text) - octet_length(o.raw::text)) AS n
                          FROM added AS a JOIN removed AS o ON a.id = o.id WHERE a.raw IS DISTINCT FROM o.raw
                          GROUP BY a.cluster_id) AS r
                    WHERE c.cluster_id = r.cluster_id AND r.n <> 0;
            END IF;
            RETURN NULL;
        END $$""",
        f"""CREATE TRIGGER {table}_bytes_added AFTER INSERT ON {table} REFERENCING NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION {table}_bytes_changed()""",
        f"""CREATE TRIGGER {table}_bytes_removed AFTER DELETE ON {table} REFERENCING OLD TABLE AS removed
            FOR EACH STATEMENT EXECUTE FUNCTION {table}_bytes_changed()""",
        f"""CREATE TRIGGER {table}_bytes_updated AFTER UPDATE ON {table}
            REFERENCING OLD TABLE AS removed NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION {table}_bytes_changed()""",
    ]


def _postgresql_drop(table: str) -> list:
    return [f"DROP TRIGGER IF EXISTS {table}_bytes_{op} ON {table}" for op in ("added", "removed", "updated")] + \
           [f"DROP FUNCTION IF EXISTS {table}_bytes_changed()"]


def _sqlite(table: str) -> list:
    size = "length(CAST({}.raw AS BLOB))"
    return [
        f"""CREATE TRIGGER {table}_bytes_added AFTER INSERT ON {table} BEGIN
            INSERT INTO dashboard_storecounter (cluster_id, resource_version, bytes)
                VALUES (NEW.cluster_id, 0, {size.format('NEW')})
                ON CONFLICT (cluster_id) DO UPDATE SET bytes = bytes + {size.format('NEW')};
        END""",
        f"""CREATE TRIGGER {table}_bytes_removed AFTER DELETE ON {table} BEGIN
            UPDATE dashboard_storecounter SET bytes = bytes - {size.format('OLD')} WHERE cluster_id = OLD.cluster_id;
        END""",
        f"""CREATE TRIGGER {table}_bytes_updated AFTER UPDATE OF raw ON {table} WHEN NEW.raw IS NOT OLD.raw BEGIN
            UPDATE dashboard_storecounter SET bytes = bytes + {size.format('NEW')} - {size.format('OLD')}
                WHERE cluster_id = NEW.cluster_id;
        END""",
    ]


def _sqlite_drop(table: str) -> list:
    return [f"DROP TRIGGER IF EXISTS {table}_bytes_{op}" for op in ("added", "removed", "updated")]


POSTGRESQL = [sql for table in TABLES for sql in _postgresql(table)]
POSTGRESQL_DROP = [sql for table in TABLES for sql in _postgresql_drop(table)]
SQLITE = [sql for table in TABLES for sql in _sqlite(table)]
SQLITE_DROP = [sql for table in TABLES for sql in _sqlite_drop(table)]


def _run(schema_editor, statements: dict) -> None:
    for sql in statements.get(schema_editor.connection.vendor, ()):
        schema_editor.execute(sql)


def count_and_keep_counting(apps, schema_editor):
    StoreCounter = apps.get_model("dashboard", "StoreCounter")
    size = "octet_length(raw::text)" if schema_editor.connection.vendor == "postgresql" else \
        "length(CAST(raw AS BLOB))"
    totals = {}
    with schema_editor.connection.cursor() as cur:
        for table in TABLES:
            cur.execute(f"SELECT cluster_id, sum({size}) FROM {table} GROUP BY cluster_id")
            for cluster_id, n in cur.fetchall():
                totals[cluster_id] = totals.get(cluster_id, 0) + int(n or 0)
    for cluster_id, n in totals.items():
        StoreCounter.objects.update_or_create(cluster_id=cluster_id, defaults={"bytes": n})
    _run(schema_editor, {"postgresql": POSTGRESQL, "sqlite": SQLITE})


def stop_counting(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP})


def drop_pod_count(apps, schema_editor):
    _run(schema_editor, {"sqlite": pod_count.SQLITE_DROP})


def make_pod_count(apps, schema_editor):
    _run(schema_editor, {"sqlite": pod_count.SQLITE_DROP + pod_count.SQLITE})


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0016_kube_versions"),
    ]

    operations = [
        migrations.RunPython(drop_pod_count, make_pod_count),
        migrations.AddField(
            model_name="storecounter",
            name="bytes",
            field=models.BigIntegerField(db_default=0, default=0, help_text=(
                "the size of the cluster's pods, nodes and other objects (their JSON as the database renders it): "
                "kept by the database itself, with triggers on those tables (migration 0017), for the bytes quota")),
        ),
        migrations.RunPython(make_pod_count, drop_pod_count),
        migrations.RunPython(count_and_keep_counting, stop_counting),
    ]
