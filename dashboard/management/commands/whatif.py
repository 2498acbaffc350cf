"""manage.py whatif capacity|drain|add-nodes --cluster NAME ...: a what-if question answered on a copy of the
cluster's current state (as the What if page asks it), printed; the first figure is the answer."""
import json
import os

from django.core.management.base import BaseCommand, CommandError

from dashboard.models import Cluster, WhatIfRun
from dashboard.profiles import services as profiles
from dashboard.services import whatif
from dashboard.services.background import Busy
from scheduler_core.whatif import summary


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as err:
        raise CommandError(f"{os.path.basename(path)}: {err.strerror}") from None


def _version(ref: str | None):
    """NAME (its active version) or NAME:N (version N) of a saved profile; None: the cluster's own."""
    if not ref:
        return None
    found = profiles.find_version(ref)
    if found is None:
        raise CommandError(f"no saved profile version {ref!r} (NAME or NAME:N)")
    return found


class Command(BaseCommand):
    help = "Ask a what-if question of a cluster: capacity POD.yaml, drain NODE..., add-nodes NODE.yaml --count N."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="question", required=True)
        cap = sub.add_parser("capacity", help="how many more copies of a pod (or a workload's template) fit")
        cap.add_argument("manifest", help="a Pod, Deployment, ReplicaSet, StatefulSet or Job (YAML or JSON)")
        cap.add_argument("--max-copies", type=int)
        cap.add_argument("--preemption", action="store_true", help="let the copies preempt lower-priority pods")
        cap.add_argument("--compare", help="a second profile (NAME or NAME:N), side by side")
        drain = sub.add_parser("drain", help="cordon and drain nodes: where their pods go")
        drain.add_argument("nodes", nargs="*")
        drain.add_argument("--selector", help="drain the nodes with these labels (k=v,k2!=v2, ...)")
        add = sub.add_parser("add-nodes", help="add copies of a node: which pending pods fit")
        add.add_argument("manifest", help="a Node (YAML or JSON) to copy")
        add.add_argument("--count", type=int, required=True)
        add.add_argument("--targets", nargs="*", help="namespace/name of pending pods that must fit (default: all)")
        for p in (cap, drain, add):
            p.add_argument("--cluster", required=True)
            p.add_argument("--profile", help="a saved profile (NAME or NAME:N); default: the cluster's own")
            p.add_argument("--json", action="store_true", help="the whole answer as JSON")

    def handle(self, *args, **opts):
        cluster = Cluster.objects.filter(name=opts["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster named {opts['cluster']!r}")
        kind = opts["question"]
        if kind == WhatIfRun.CAPACITY:
            data = {"manifest": _read(opts["manifest"]), "max_copies": opts["max_copies"],
                    "preemption": opts["preemption"]}
        elif kind == WhatIfRun.DRAIN:
            data = {"nodes": opts["nodes"], "selector": opts["selector"] or ""}
        else:
            data = {"manifest": _read(opts["manifest"]), "count": opts["count"], "targets": opts["targets"]}
        try:
            params = whatif.question(cluster, kind, data)
        except whatif.QuestionError as err:
            raise CommandError(str(err)) from None
        try:
            run = whatif.create(cluster, kind, params, version=_version(opts["profile"]),
                                compare_version=_version(opts.get("compare")))
        except Busy as err:
            raise CommandError(str(err)) from None
        whatif.execute(run.pk)
        run.refresh_from_db()
        if run.state != WhatIfRun.DONE:
            raise CommandError(run.error)
        if opts["json"]:
            self.stdout.write(json.dumps(dict(run.result, run=run.pk), indent=1, sort_keys=True))
            return
        for line in summary(kind, run.result):
            self.stdout.write(line)
        if run.result.get("compare"):
            self.stdout.write(f"with {run.result['compare']['profile']}:")
            for line in summary(kind, run.result["compare"]):
                self.stdout.write("  " + line)
        self.stdout.write(f"(what-if run {run.pk}: /clusters/{cluster.name}/whatif/{run.pk}/)")
