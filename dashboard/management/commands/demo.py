"""manage.py demo: the demo cluster (53 nodes, three zones, tainted GPU nodes, DRA GPUs) with a live workload, created once;
``--reset`` replaces whatever it holds by the bundled scenario again."""
from django.core.management.base import BaseCommand

from dashboard.models import Cluster, Node, Pod
from dashboard.services import clusters as svc
from dashboard.services.demo import DEMO_WORKLOAD, demo_scenario


class Command(BaseCommand):
    help = ("Create the demo cluster from the bundled scenario and mark it running, unless it exists (then it is "
            "kept as it is, with every object users made); --reset loads the bundled scenario again.")

    def add_arguments(self, parser):
        parser.add_argument("--name", default="demo")
        parser.add_argument("--reset", action="store_true",
                            help="replace the cluster's nodes, pods and objects by the bundled scenario")
        parser.add_argument("--no-workload", action="store_true", help="only the bundled pods, no generator")
        parser.add_argument("--stopped", action="store_true", help="leave the scheduler stopped")

    def handle(self, *args, **opts):
        cluster, created = Cluster.objects.get_or_create(name=opts["name"])
        if not (created or opts["reset"]):
            nodes, pods = Node.objects.filter(cluster=cluster).count(), Pod.objects.filter(cluster=cluster).count()
            self.stdout.write(f"demo cluster {cluster.name!r} kept as it was: {nodes} nodes, {pods} pods; scheduler "
                              f"{cluster.desired_state} (`make demo-reset` loads the bundled scenario again)")
            return
        cluster.workload = None if opts["no_workload"] else DEMO_WORKLOAD
        cluster.desired_state = Cluster.STOPPED if opts["stopped"] else Cluster.RUNNING
        cluster.save()
        counts = svc.load_scenario(cluster, demo_scenario(), "demo")
        verb = "created" if created else "reset"
        self.stdout.write(f"demo cluster {cluster.name!r} {verb}: {counts['nodes']} nodes, {counts['bound']} bound "
                          f"and {counts['pending']} pending pods; scheduler {cluster.desired_state}")
