"""StoreCounter.pods: each simulated cluster's number of pod rows, kept by triggers on the pods table (every
insert and delete, whoever makes it: the store's writers, scenario loads, cascades), counted once here."""
from django.db import migrations, models

POSTGRESQL = [
    """CREATE FUNCTION dashboard_pod_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO dashboard_storecounter AS c (cluster_id, resource_version, pods)
            SELECT cluster_id, 0, count(*) FROM added GROUP BY cluster_id
            ON CONFLICT (cluster_id) DO UPDATE SET pods = c.pods + EXCLUDED.pods;
        RETURN NULL;
    END $$""",
    # a counter deleted first (a cluster's deletion) stays deleted
    """CREATE FUNCTION dashboard_pod_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE dashboard_storecounter AS c SET pods = c.pods - r.n
            FROM (SELECT cluster_id, count(*) AS n FROM removed GROUP BY cluster_id) AS r
            WHERE c.cluster_id = r.cluster_id;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER dashboard_pod_count_added AFTER INSERT ON dashboard_pod REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION dashboard_pod_count_added()""",
    """CREATE TRIGGER dashboard_pod_count_removed AFTER DELETE ON dashboard_pod REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION dashboard_pod_count_removed()""",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS dashboard_pod_count_added ON dashboard_pod",
    "DROP TRIGGER IF EXISTS dashboard_pod_count_removed ON dashboard_pod",
    "DROP FUNCTION IF EXISTS dashboard_pod_count_added()",
    "DROP FUNCTION IF EXISTS dashboard_pod_count_removed()",
]
SQLITE = [
    """CREATE TRIGGER dashboard_pod_count_added AFTER INSERT ON dashboard_pod BEGIN
        INSERT INTO dashboard_storecounter (cluster_id, resource_version, pods) VALUES (NEW.cluster_id, 0, 1)
            ON CONFLICT (cluster_id) DO UPDATE SET pods = pods + 1;
    END""",
    """CREATE TRIGGER dashboard_pod_count_removed AFTER DELETE ON dashboard_pod BEGIN
        UPDATE dashboard_storecounter SET pods = pods - 1 WHERE cluster_id = OLD.cluster_id;
    END""",
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS dashboard_pod_count_added",
               "DROP TRIGGER IF EXISTS dashboard_pod_count_removed"]


def _run(schema_editor, statements: dict) -> None:
    for sql in statements.get(schema_editor.connection.vendor, ()):
        schema_editor.execute(sql)


def count_and_keep_counting(apps, schema_editor):
    Pod = apps.get_model("dashboard", "Pod")
    StoreCounter = apps.get_model("dashboard", "StoreCounter")
    for cluster_id, n in Pod.objects.values_list("cluster_id").annotate(n=models.Count("id")).order_by():
        StoreCounter.objects.update_or_create(cluster_id=cluster_id, defaults={"pods": n})
    _run(schema_editor, {"postgresql": POSTGRESQL, "sqlite": SQLITE})


def stop_counting(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP})


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0011_node_lists"),
    ]

    operations = [
        migrations.AddField(
            model_name="storecounter",
            name="pods",
            field=models.BigIntegerField(db_default=0, default=0, help_text=(
                "how many pod rows the cluster has: kept by the database itself, with triggers on the pods table "
                "(migration 0012), so that the size limit needs no count of them under the cluster's lock")),
        ),
        migrations.RunPython(count_and_keep_counting, stop_counting),
    ]
