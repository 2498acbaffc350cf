"""manage.py clustertoken CLUSTER: a new API token of a simulated cluster, printed as a kubeconfig (scripts, CI)."""
from django.core.management.base import BaseCommand, CommandError

from dashboard.models import Cluster
from dashboard.services import credentials


class Command(BaseCommand):
    help = ("Create an API token of a simulated cluster's Kubernetes API and print its kubeconfig (the token is "
            "shown only this once); --revoke NAME revokes that cluster's live tokens of that name.")

    def add_arguments(self, parser):
        parser.add_argument("cluster")
        parser.add_argument("--name", default="cli", help="what the token is for (default: cli)")
        parser.add_argument("--server", default="http://127.0.0.1:8000",
                            help="the dashboard's address as clients reach it (default: http://127.0.0.1:8000)")
        parser.add_argument("--revoke", metavar="NAME", help="revoke the cluster's tokens named NAME instead")

    def handle(self, *args, cluster, name, server, revoke, **opts):
        row = Cluster.objects.filter(name=cluster, kind=Cluster.SIMULATED).first()
        if row is None:
            raise CommandError(f"no simulated cluster named {cluster!r}")
        if revoke:
            tokens = list(row.tokens.filter(name=revoke, revoked__isnull=True))
            if not tokens:
                raise CommandError(f"cluster {cluster} has no live token named {revoke!r}")
            for token in tokens:
                credentials.revoke_token(token)
            self.stderr.write(f"revoked {len(tokens)} token(s) named {revoke!r} of cluster {cluster}")
            return
        _token, secret = credentials.create_token(row, name)
        self.stdout.write(credentials.kubeconfig_for_token(f"{server.rstrip('/')}/clusters/{row.name}/k8s",
                                                           row.name, secret), ending="")
