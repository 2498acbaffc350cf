"""A crawler: every GET route of the project (pages, the REST API, the admin, the simulated clusters' Kubernetes
API), found by walking Django's URL resolver and filled with the stored objects' names, is requested as each role
(anonymous, viewer, editor, admin, and a viewer who is a member of a restricted cluster) with query parameters
that hypothesis draws (huge and negative integers, Unicode digits, dates out of range, floats, NUL characters,
garbage, and real values), on a world of random but valid extreme objects. No response may be a 500.

Runs on this database, and (``test_crawl_on_sqlite``) on SQLite in a subprocess. Run with ``-s`` for the counts:
requests, routes, server errors (each with its first request and where it failed) and the time taken."""
from __future__ import annotations

import itertools
import json
import logging
import random
import re
import sys
import time
import traceback

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.signals import got_request_exception
from django.db import connection
from django.test import Client
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, resolve, reverse
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from rest_framework.views import APIView

from scheduler_core.versions import SUPPORTED_VERSIONS, kube_version

from dashboard.api import serializers as api_filters
from dashboard.k8sapi import protobuf
from dashboard.k8sapi.protobuf import ProtobufError
from dashboard.queryforms import EventsQuery, NodesQuery, PendingQuery, PodQuery, ShadowQuery, VersionQuery
from dashboard.models import (Cluster, ClusterMembership, ClusterToken, SchedulerProfile, SchedulingCycle,
                              SchedulingEvent, WhatIfRun)
from dashboard.profiles import services as profile_services
from dashboard.profiles.models import DryRun
from dashboard.services import clusters as svc
from dashboard.services import credentials, whatif
from dashboard.services.runner import Runner

from .conftest import make_user, run_on_sqlite
from .test_k8sapi_protobuf import field

SEED = 20261203
ROUTES_PER_PATTERN = 3
ROLES = ("anonymous", "viewer", "editor", "admin", "member")
ADMIN_ROLES = ("anonymous", "viewer", "admin")   # the others are redirected like the viewer
OPEN, SECRET = "crawl-open", "crawl-secret"
# Routes that only answer POST (a GET is a 405) are still requested; these are not GET targets at all:
SKIP = {"admin:logout", "profiles:logout", "admin:view_on_site"}
K8S_PATHS = ["version", "api", "apis", "api/v1", "api/v1/pods", "api/v1/nodes", "api/v1/namespaces",
             "api/v1/namespaces/default/pods", "api/v1/events", "apis/coordination.k8s.io/v1/leases",
             "apis/policy/v1/poddisruptionbudgets", "openapi/v2", "api/v1/namespaces/default/pods/x"]


# -- the world: random but valid extreme objects --------------------------------------------------------
def _dns_label(rng, n):
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n - 2)).join("aa") if n > 2 \
        else "a" * n


def _label_value(rng):
    return rng.choice(["", "x", _dns_label(rng, 63), "A.b-c_d" + "9" * 56])


def extreme_scenario(name: str, rng: random.Random, nodes: int = 8, pods: int = 30) -> dict:
    """Valid objects at the edges: names of 253 characters, label keys with a 253-character prefix, many labels,
    priorities from -2^31 to 10^9, requests from 1m to more than any node has, taints and tolerations of every
    effect, huge and tiny nodes."""
    effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"]

    def labels():
        out = {"app": rng.choice(["web", "db", "x"])}
        for _ in range(rng.randint(0, 12)):
            prefix = ".".join(_dns_label(rng, 63) for _ in range(3)) + "." + _dns_label(rng, 61)  # 253
            key = rng.choice([_dns_label(rng, rng.randint(1, 63)), f"{prefix}/{_dns_label(rng, 63)}"])
            out[key] = _label_value(rng)
        return out

    node_list = []
    for i in range(nodes):
        node_name = f"n{i}-" + _dns_label(rng, rng.choice([1, 20, 240]))
        cpu, mem = rng.choice([("1m", "1"), ("4", "16Gi"), ("100000", "1Pi")])
        alloc = {"cpu": cpu, "memory": mem, "pods": str(rng.choice([0, 1, 110, 100000]))}
        taints = [{"key": _dns_label(rng, 10), "value": _label_value(rng), "effect": e}
                  for e in rng.sample(effects, rng.randint(0, 3))]
        node_list.append({"metadata": {"name": node_name, "labels": dict(labels(), **{
                              "kubernetes.io/hostname": node_name[:63], "topology.kubernetes.io/zone": f"z{i % 3}"})},
                          "spec": {"taints": taints}, "status": {"capacity": alloc, "allocatable": alloc}})
    pending = []
    for i in range(pods):
        ns = rng.choice(["default", _dns_label(rng, 63)])
        pod_name = f"p{i}-" + _dns_label(rng, rng.choice([1, 30, 230]))  # uid "ns/name" fits 300
        req = {"cpu": rng.choice(["1m", "100m", "2", "999999"]), "memory": rng.choice(["1", "64Mi", "1Ei"])}
        spec = {"containers": [{"name": "c", "resources": {"requests": req}}],
                "priority": rng.choice([-2147483648, 0, 1000000000]),
                "tolerations": [{"key": _dns_label(rng, 10), "operator": "Exists", "effect": e}
                                for e in rng.sample(effects, rng.randint(0, 2))]}
        pending.append({"metadata": {"name": pod_name, "namespace": ns, "labels": labels()}, "spec": spec})
    return {"name": name, "nodes": node_list, "pods": [], "pending": pending}


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Two clusters of extreme objects with recorded cycles and events (one restricted, with a member), a profile
    with two versions and a dry run, a cluster API token, users of every role; committed for the module."""
    rng = random.Random(SEED)
    with django_db_blocker.unblock():
        admin = User.objects.create_superuser("crawl-admin", password="x")
        users = {"anonymous": None, "viewer": make_user("crawl-viewer", "viewer"),
                 "editor": make_user("crawl-editor", "editor"), "admin": admin,
                 "member": make_user("crawl-member", "viewer")}
        doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "profiles": [{"schedulerName": "default-scheduler"}]}
        profile = SchedulerProfile.objects.create(name="crawl-profile", document=doc)
        v1 = profile_services.ensure_versions(profile)
        profile_services.save_version(profile, dict(doc, percentageOfNodesToScore=50), admin, "second")
        for name, restricted in ((OPEN, False), (SECRET, True)):
            cluster = Cluster.objects.create(name=name, restricted=restricted, tie_break="name", profile=profile)
            svc.load_scenario(cluster, extreme_scenario(name, rng), "crawl", user=admin)
            assert Runner(cluster.id, steps=40).run()
        secret = Cluster.objects.get(name=SECRET)
        ClusterMembership.objects.create(cluster=secret, user=users["member"], role=ClusterMembership.EDITOR)
        DryRun.objects.create(version=v1, cluster=secret, author=admin, state=DryRun.FAILED, error="x")
        for cluster in Cluster.objects.filter(name__in=(OPEN, SECRET)):
            node = cluster.nodes.order_by("id").values_list("name", flat=True).first()
            run = whatif.create(cluster, "drain", whatif.question(cluster, "drain", {"nodes": node}), admin)
            whatif.execute(run.pk)
        _row, token = credentials.create_token(Cluster.objects.get(name=OPEN), "crawl", admin)
        yield {"users": users, "token": token, "profile": profile}
        call_command("flush", interactive=False, verbosity=0)


# -- the routes ----------------------------------------------------------------------------------------
def _patterns(resolver=None, namespace=""):
    """(qualified route name, names of its path parameters) of every named route."""
    resolver = resolver or get_resolver()
    for p in resolver.url_patterns:
        groups = set(p.pattern.regex.groupindex)
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            for name, inner in _patterns(p, ns):
                yield name, groups | inner
        elif isinstance(p, URLPattern) and p.name:
            yield f"{namespace}{p.name}", groups


def _first_pk(model) -> str:
    return str(model.objects.order_by("pk").values_list("pk", flat=True).first() or 1)


def _stored(world) -> dict:
    """Values for each path parameter: the stored objects' names, one that is not there, and for regex parameters
    one that is garbage (route-specific ones are in ``_candidates``)."""
    cycles = [str(SchedulingCycle.objects.filter(cluster__name=c).values_list("seq", flat=True).first())
              for c in (OPEN, SECRET)]
    return {"name": [OPEN, SECRET, "no-such"], "cluster_name": [OPEN, SECRET, "no-such"], "op": ["start"],
            "seq": cycles + ["²", "99999999999999999999999"],
            "pk": [_first_pk(SchedulingEvent), _first_pk(ClusterToken), "x"],
            "username": ["crawl-member", "nobody"], "number": ["1", "2", "99999999999999999999"],
            "run_id": [_first_pk(DryRun)], "path": K8S_PATHS, "token": [world["token"]], "format": ["json"],
            "node_name": [n for c in (OPEN, SECRET)
                          for n in Cluster.objects.get(name=c).nodes.values_list("name", flat=True)[:2]],
            "app_label": ["dashboard", "profiles", "auth"],
            "pods": [(c, ns, n) for c in (OPEN, SECRET)
                     for ns, n in Cluster.objects.get(name=c).pods.order_by("id").values_list("namespace", "name")[:2]],
            "profile_pk": [str(world["profile"].pk), "99999999999999999999"],
            "profile_name": ["crawl-profile", "no-such"], "kube_version": list(SUPPORTED_VERSIONS),
            "whatif_run": [str(pk) for pk in WhatIfRun.objects.order_by("pk").values_list("pk", flat=True)]}


def _candidates(route: str, stored: dict) -> dict:
    """``stored`` adapted to ``route``: which objects its parameters name."""
    values = dict(stored)
    pods = values.pop("pods")
    if route.startswith("profiles:"):   # by name; an old numeric address redirects
        values["name"] = values["profile_name"] + values["profile_pk"]
        values["kube_version"] = list(SUPPORTED_VERSIONS) + ["0.1"]
    if route.startswith("whatif"):
        values["run_id"] = values["pk"] = values["whatif_run"] + ["99999999999999999999"]
        values["section"] = ["placed", "stranded", "lost", "no-such"]
    if route.startswith("k8s-api"):
        values["name"] = [OPEN]   # the cluster the token is for
    if route == "node-detail":
        values["name"] = stored["node_name"]
    if route == "profile-detail":
        values["name"] = ["crawl-profile", "no-such"]
    m = re.match(r"admin:(\w+?)_(\w+)_(change|delete|history|password)$", route)
    if m:
        try:
            values["object_id"] = values["id"] = [_first_pk(apps.get_model(m[1], m[2])), "x"]
        except LookupError:
            values["object_id"] = values["id"] = ["1", "x"]
    if route in ("pod", "pod-bind", "pod-edit", "pod-delete"):
        values["pod"] = [{"name": c, "namespace": ns, "pod_name": n} for c, ns, n in pods]
    elif route in ("pod-detail", "pod-binding"):
        values["pod"] = [{"cluster_name": c, "namespace": ns, "name": n} for c, ns, n in pods]
    return values


def routes(world) -> list:
    """[(route name, URL)] for every GET route, up to ROUTES_PER_PATTERN URLs each."""
    out, stored = [], _stored(world)
    for route, params in sorted(set((r, frozenset(p)) for r, p in _patterns())):
        if route in SKIP:
            continue
        values = _candidates(route, stored)
        pod_pairs = values.pop("pod", None)
        if pod_pairs is not None:
            params = params - set(pod_pairs[0])
        missing = [p for p in params if p not in values]
        if missing:
            raise AssertionError(f"no values for {missing} of route {route}: add them to _candidates")
        names = sorted(params)
        combos = [dict(zip(names, vs)) for vs in itertools.product(*(values[p] for p in names))]
        if pod_pairs is not None:
            combos = [dict(c, **pair) for c in combos for pair in pod_pairs]
        random.Random(route).shuffle(combos)
        urls = []
        for kwargs in combos:
            try:
                urls.append(reverse(route, kwargs=kwargs))
            except NoReverseMatch:
                continue
            if len(urls) == (len(K8S_PATHS) if route == "k8s-api" else ROUTES_PER_PATTERN):
                break
        out += [(route, u) for u in dict.fromkeys(urls)]
    return out


# -- the query parameters ---------------------------------------------------------------------------------
API_PARAMETERS = sorted({name for ser in (api_filters.CycleFilterSerializer, api_filters.NodeFilterSerializer,
                                         api_filters.PodFilterSerializer, api_filters.EventFilterSerializer)
                         for name in ser().fields} | {"page", "page_size", "format", "dryRun"})
K8S_PARAMETERS = ["limit", "timeoutSeconds", "continue", "labelSelector", "fieldSelector", "resourceVersion",
                  "resourceVersionMatch", "includeObject", "sendInitialEvents", "allowWatchBookmarks", "dryRun"]
ADMIN_PARAMETERS = ["o", "p", "q", "e", "all", "_changelist_filters", "next", "restricted__exact", "kind__exact"]
ALL_PARAMETERS = sorted({name for form in (PendingQuery, EventsQuery, NodesQuery, ShadowQuery, PodQuery, VersionQuery)
                         for name in form.base_fields} | set(API_PARAMETERS + K8S_PARAMETERS + ADMIN_PARAMETERS))


def route_parameters(url: str) -> tuple:
    """(the query parameters ``url``'s view reads, how many hypothesis examples it gets): a page's form
    (dashboard.queryforms), the Kubernetes API's list options, the REST API's filters and paging; every parameter,
    a few times, for other views."""
    match = resolve(url.split("?")[0])
    form = getattr(match.func, "query_form", None)
    if form is not None:
        return sorted(form.base_fields), 40
    if match.url_name.startswith("k8s-api"):
        return K8S_PARAMETERS, 40
    if isinstance(getattr(match.func, "cls", None), type) and issubclass(match.func.cls, APIView):
        return API_PARAMETERS, 12
    return ALL_PARAMETERS, 4


EXTREMES = ["0", "-1", "999999999999", "99999999999999", "-99999999999999", "2147483648", "9223372036854775807",
            "9223372036854775808", "99999999999999999999999", "1" * 5000, "²", "١٢", "５", "𝟗", "1_000", " 7 ", "+5",
            "0x10", "1e18", "1e308", "nan", "inf", "-0", "1.5", "0001-01-01T00:00:00", "0001-01-01T00:00:00+14:00",
            "9999-12-31T23:59:59-14:00", "10000-01-01", "2026-02-30T00:00", "1970-01-01", "", "\x00", "%", "a=b,c",
            "app=web", "app", "app in (web,db)", "!app", "x>99999999999999999999", "metadata.name=x", "=", ",,,",
            "default/p0", OPEN, SECRET, "NodeResourcesFit", "unschedulable", "active", "feasible", "count", "-age",
            "All", "Table", "eyJydiI6MX0=", "json", "api"]
VALUES = st.one_of(st.sampled_from(EXTREMES), st.sampled_from(EXTREMES), st.integers(-(2 ** 70), 2 ** 70).map(str),
                   st.text(st.characters(exclude_categories=("Cs",)), max_size=30))


def queries(names: list):
    """Query strings over ``names``: all of them at once, with one value or each its own (so that a bad value reaches
    whatever reads it unchecked), or a few (so that none hides behind another's 400)."""
    return st.one_of(VALUES.map(lambda v: dict.fromkeys(names, v)), st.fixed_dictionaries(dict.fromkeys(names, VALUES)),
                     st.dictionaries(st.sampled_from(names), VALUES, max_size=3))
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


class ServerErrors(logging.Handler):
    """Where each 500 failed: the innermost project frame of the logged or signalled exception."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.last = None

    def emit(self, record):
        if record.exc_info:
            self.last = record.exc_info

    def signalled(self, sender, request=None, **kw):
        self.last = sys.exc_info()

    def where(self) -> str:
        if not self.last or not self.last[2]:
            return "?"
        frames = [f for f in traceback.extract_tb(self.last[2]) if "/site-packages/" not in f.filename]
        f = (frames or traceback.extract_tb(self.last[2]))[-1]
        return f"{type(self.last[1]).__name__} at {f.filename.rsplit('/', 2)[-2:]}:{f.lineno}"


@pytest.mark.django_db
def test_crawl_finds_no_server_error(world):
    started = time.monotonic()
    targets = routes(world)
    clients = {}
    for role, user in world["users"].items():
        clients[role] = Client(HTTP_HOST="localhost", raise_request_exception=False)
        if user is not None:
            clients[role].force_login(user)
    errors = ServerErrors()
    logging.getLogger().addHandler(errors)
    got_request_exception.connect(errors.signalled)
    found, counts = {}, {"requests": 0}

    def get(role, route, url, query, table=False):
        headers = {}
        if route.startswith("k8s-api") and role != "anonymous":
            headers["Authorization"] = f"Bearer {world['token']}"
        if table:
            headers["Accept"] = TABLE
        errors.last = None
        r = clients[role].get(url, query, headers=headers)
        counts["requests"] += 1
        if r.status_code >= 500:
            counts["errors"] = counts.get("errors", 0) + 1
            found.setdefault((route, errors.where()), (role, url, query, r.status_code))
        return r.status_code

    try:
        readable = []   # what the hypothesis part queries: the project's URLs (not the admin's) that some roles read
        for route, url in targets:
            roles = [role for role in (ADMIN_ROLES if route.startswith("admin:") else ROLES)
                     if get(role, route, url, {}) == 200]
            if roles and not route.startswith("admin:"):
                readable.append((route, url, roles))

        for route, url, roles in readable:
            names, examples = route_parameters(url)

            @seed(SEED)
            @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(st.sampled_from(roles), queries(names), st.booleans())
            def crawl(role, query, table):
                counts["drawn"] = counts.get("drawn", 0) + 1
                get(role, route, url, query, table)
            crawl()
    finally:
        logging.getLogger().removeHandler(errors)
        got_request_exception.disconnect(errors.signalled)
    took = time.monotonic() - started
    print(f"\ncrawler on {connection.vendor}: {counts['requests']} requests over {len(targets)} URLs of "
          f"{len({r for r, _ in targets})} routes as {len(ROLES)} roles ({counts['drawn']} with drawn query "
          f"parameters on {len(readable)} URLs) in {took:.1f}s; {counts.get('errors', 0)} answered 5xx, "
          f"from {len(found)} distinct failures")
    for (route, where), (role, url, query, status) in sorted(found.items()):
        print(f"  {status} {route} ({where}): {role} GET {url} {query!r}")
    assert not found, f"{len(found)} distinct server errors (run with -s for the list)"


def test_crawl_on_sqlite(tmp_path):
    if connection.vendor == "sqlite":
        pytest.skip("this is the SQLite run")
    out = run_on_sqlite(tmp_path, [f"{__file__}::test_crawl_finds_no_server_error"])
    print("\n".join(line for line in out.splitlines() if line.startswith(("crawler on", "  5"))))


# -- inputs that once answered 500 (each now a 4xx), and the log every 500 leaves --------------------------
@pytest.mark.django_db
def test_inputs_that_were_server_errors(world, settings):
    import asyncio

    from channels.testing import HttpCommunicator

    from dashboard.asgi import application
    admin, editor = world["users"]["admin"], world["users"]["editor"]
    # rolling back, as a non-admin, to a version that names an extender
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler"}]}
    profile = SchedulerProfile.objects.create(name="crawl-extender", document=doc)
    profile_services.ensure_versions(profile)
    profile_services.save_version(profile, dict(doc, extenders=[{"urlPrefix": "http://127.0.0.1:9",
                                                                  "filterVerb": "filter"}]), admin, "extender")
    profile_services.save_version(profile, doc, admin, "without")
    pages = Client(HTTP_HOST="localhost", raise_request_exception=False)
    pages.force_login(editor)
    resp = pages.post("/profiles/crawl-extender/v/2/rollback/", follow=True)
    assert resp.status_code == 200 and "not restored" in resp.content.decode()
    from rest_framework.test import APIClient
    api = APIClient()
    api.force_authenticate(editor)
    assert api.post("/api/profiles/crawl-extender/versions/2/rollback/").status_code == 400
    assert profile.versions.count() == 3
    # a group of 2,000 nested brackets on the pending page
    resp = pages.get(f"/clusters/{OPEN}/pending/", {"group": "[" * 2000 + "]" * 2000})
    assert resp.status_code == 400 and "exceeded max depth of 100" in resp.content.decode()
    # a protobuf Pod whose managedFields[0].fieldsV1 nests 5,000 deep: refused as every body nested over 100
    # (the API answers a ProtobufError 400)
    nested = ('{"f:a":' * 5000 + "{}" + "}" * 5000).encode()
    meta = field(1, "deep") + field(3, "default") + field(17, field(7, field(1, nested)))
    body = b"k8s\x00" + field(1, field(1, "v1") + field(2, "Pod")) + field(2, field(1, meta))
    with pytest.raises(ProtobufError, match="exceeded max depth of 100"):
        protobuf.decode(body, kube_version("1.36"))
    # a Host outside ALLOWED_HOSTS on the Kubernetes API
    evil = Client(HTTP_HOST="evil.example:1234", raise_request_exception=False)
    resp = evil.get(f"/clusters/{OPEN}/k8s/api", headers={"Authorization": f"Bearer {world['token']}"})
    assert resp.status_code == 400

    async def asgi_get(path, host):
        comm = HttpCommunicator(application, "GET", path, headers=[(b"host", host)])
        return (await comm.get_response(timeout=10))["status"]
    # a static file that is not there; the Kubernetes API's Host check through the ASGI app too
    assert asyncio.run(asgi_get("/static/nonexistent.js", b"localhost")) == 404
    assert asyncio.run(asgi_get(f"/clusters/{OPEN}/k8s/api", b"evil.example:1234")) == 400


@pytest.mark.django_db
def test_every_server_error_is_logged_with_its_traceback(world, monkeypatch):
    import io

    from dashboard.services import metrics
    handler = next(h for h in logging.getLogger("django.request").handlers if isinstance(h, logging.StreamHandler))
    stream = io.StringIO()
    old = handler.setStream(stream)

    def broken(names):
        raise RuntimeError("exposition broke")
    monkeypatch.setattr(metrics, "exposition", broken)
    client = Client(HTTP_HOST="localhost", raise_request_exception=False)
    client.force_login(world["users"]["admin"])
    try:
        assert client.get("/metrics").status_code == 500
    finally:
        handler.setStream(old)
    text = stream.getvalue()
    assert "Internal Server Error: /metrics" in text and "Traceback (most recent call last)" in text
    assert "RuntimeError: exposition broke" in text
