"""manage.py explain NAMESPACE/POD: why the pod is where it is (its latest cycle), like the core CLI."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services.traceview import explain_text


class Command(BaseCommand):
    help = "Print the latest scheduling cycle of a pod: the chosen node or the FitError, and every node's verdict."

    def add_arguments(self, parser):
        parser.add_argument("pod", help="NAMESPACE/NAME")
        parser.add_argument("--cluster", help="cluster name (default: the only cluster)")
        parser.add_argument("--cycle", type=int, help="a given cycle seq instead of the latest")

    def handle(self, *args, **opts):
        ns, _, name = opts["pod"].partition("/")
        if not name:
            raise CommandError("expected NAMESPACE/POD")
        if opts["cluster"]:
            cluster = Cluster.objects.filter(name=opts["cluster"]).first()
            if cluster is None:
                raise CommandError(f"no cluster {opts['cluster']!r}")
        else:
            clusters = list(Cluster.objects.all()[:2])
            if len(clusters) != 1:
                raise CommandError("several clusters exist: name one with --cluster")
            cluster = clusters[0]
        qs = SchedulingCycle.objects.filter(cluster=cluster, pod_namespace=ns, pod_name=name)
        if opts["cycle"]:
            qs = qs.filter(seq=opts["cycle"])
        cycle = qs.order_by("-seq").first()
        if cycle is None:
            raise CommandError(f"no recorded cycle for {ns}/{name} in cluster {cluster.name!r}")
        pod = Pod.objects.filter(cluster=cluster, namespace=ns, name=name).first()
        self.stdout.write(explain_text(cycle, pod.priority if pod else None), ending="")
