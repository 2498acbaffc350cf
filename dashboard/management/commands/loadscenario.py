"""manage.py loadscenario FILE: load a scenario (golden format or a kubectl List) into a cluster."""
import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dashboard.models import Cluster
from dashboard.services import clusters as svc
from scheduler_core.scenario import ScenarioError, load_documents


class Command(BaseCommand):
    help = "Load a scenario file (JSON or YAML) into a cluster, replacing its nodes and pods."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--cluster", help="cluster name (default: the file's base name)")
        parser.add_argument("--start", action="store_true", help="start the scheduler afterwards")
        parser.add_argument("--tie-break", choices=("name", "random"), default=None)

    def handle(self, *args, **opts):
        path = opts["file"]
        label = os.path.basename(path)
        try:
            with open(path, encoding="utf-8") as f:
                docs = load_documents(f.read(), label)
        except OSError as err:
            raise CommandError(f"{label}: {err.strerror}") from None
        except ScenarioError as err:
            raise CommandError(str(err)) from None
        if not docs:
            raise CommandError(f"{label}: empty document")
        name = opts["cluster"] or label.split(".")[0].lower().replace("_", "-")[:100]
        cluster, _ = Cluster.objects.get_or_create(name=name)
        if opts["tie_break"]:
            cluster.tie_break = opts["tie_break"]
            cluster.save(update_fields=["tie_break"])
        try:
            counts = svc.load_scenario(cluster, docs[0] if len(docs) == 1 else docs, label)
        except (ScenarioError, svc.ValidationFailed) as err:
            raise CommandError(str(err)) from None
        self.stdout.write(f"{label} -> cluster {cluster.name!r}: {counts['nodes']} nodes, {counts['bound']} bound, "
                          f"{counts['pending']} pending")
        if opts["start"]:
            if settings.SCHEDULER_MODE == "celery":
                svc.set_state(cluster, Cluster.RUNNING)
            else:  # embedded mode: the web process runs the loops; it starts this one when it (re)starts
                Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
                self.stdout.write("marked running: the embedded server picks it up when it starts "
                                  "(or press Start on the overview page)")
