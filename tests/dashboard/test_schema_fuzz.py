"""Schemathesis over the REST API's OpenAPI schema (drf-spectacular), in process against the WSGI app and
PostgreSQL, signed in with an API token as an admin, on a seeded demo cluster: every operation, writes included,
with every built-in check (no server errors; responses, status codes and content types as documented; invalid
input rejected; valid input accepted, or refused with a 400 only where validity is more than a schema says;
authentication not ignored). Each operation's writes are rolled back.

Run with ``-s`` to see how many fuzz cases were tried."""
from __future__ import annotations

import json
import time
from contextlib import contextmanager
from io import StringIO

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator

from dashboard.models import Cluster, SchedulerProfile, SchedulingCycle
from dashboard.services.runner import Runner

from .conftest import api_client

EXAMPLES_PER_OPERATION = 20
SEED = 9
# Path parameters take these real names most of the time (random strings otherwise), so that operations
# reach existing clusters, nodes, pods and profiles rather than answering 404 throughout.
NAMES = {
    "clusters": ["demo", "spare"],
    "objects": ["demo", "spare", "general-01", "gpu-1", "fuzz-profile", "web-000", "trainer-8gpu", "base-001"],
    "namespaces": ["shop", "ml", "prod"],
    "profiles": ["fuzz-profile"],
}
CONFIG = {
    "seed": SEED,
    # The requests carry a real API token; generating random session cookies and tokens beside it proves nothing.
    "generation": {"max-examples": EXAMPLES_PER_OPERATION, "deterministic": True, "with-security-parameters": False},
    # Schema-valid bodies may still be refused with a 400 where validity is more than a schema can say: names that
    # must be unique or must exist (profiles, users), manifests and scenarios that the scheduler core parses.
    "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "401", "403", "404", "409"]}},
    "dictionaries": {name: {"values": values} for name, values in NAMES.items()},
    "parameters": {
        "path.cluster_name": {"dictionary": "clusters", "probability": 0.8},
        "path.profile_name": {"dictionary": "profiles", "probability": 0.8},
        "path.name": {"dictionary": "objects", "probability": 0.7},
        "path.namespace": {"dictionary": "namespaces", "probability": 0.7},
    },
}


def api_document() -> dict:
    """The schema /api/schema/ serves (checked by test_the_served_schema_is_the_one_fuzzed), as JSON data."""
    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))


# pytest 9.2 broke schemathesis' lazy from_fixture loader (it sets Node._nodeid), so the schema is built at
# import time, where there is no database yet, straight from drf-spectacular rather than fetched.
schema = schemathesis.openapi.from_dict(api_document(), config=schemathesis.Config.from_dict(CONFIG))
schema.app = WSGIHandler()


@contextmanager
def connection_kept():
    """Requests made inside the test's transaction must not close the connection around them (what Django's test
    client also makes sure of for each of its requests)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker):
    """The demo cluster (53 nodes, 114 pods) with 20 recorded cycles and their events, a spare cluster, a profile
    and an admin's API token (``manage.py apitoken``), committed for the module; every test's own writes are
    rolled back."""
    from django.contrib.auth.models import User
    with django_db_blocker.unblock():
        call_command("demo", no_workload=True, stopped=True, stdout=None)
        demo = Cluster.objects.get(name="demo")
        assert Runner(demo.id, steps=20).run()
        assert SchedulingCycle.objects.filter(cluster=demo).count() == 20
        Cluster.objects.create(name="spare")
        SchedulerProfile.objects.create(name="fuzz-profile")
        admin = User.objects.create_superuser("fuzzer", password="fuzzer-pw")
        token = StringIO()
        call_command("apitoken", admin.username, stdout=token)
        yield {"Authorization": f"Token {token.getvalue().strip()}"}, admin
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="module")
def tally():
    """Counts the cases sent over the module; printed (and checked) when it is over."""
    counts = {"cases": 0, "operations": set(), "started": time.monotonic()}
    yield counts
    took = time.monotonic() - counts["started"]
    print(f"\nschemathesis: {counts['cases']} fuzz cases tried over {len(counts['operations'])} API operations "
          f"in {took:.1f}s")
    assert counts["cases"] >= 10 * len(counts["operations"]) > 0, counts


@pytest.mark.django_db
def test_the_served_schema_is_the_one_fuzzed(seeded):
    resp = api_client(seeded[1]).get("/api/schema/?format=json")
    assert resp.status_code == 200 and resp.json() == api_document()


@pytest.mark.django_db
@schema.parametrize()
def test_api_conforms_to_its_schema(case, seeded, tally):
    tally["cases"] += 1
    tally["operations"].add(case.operation.label)
    with connection_kept():
        case.call_and_validate(headers=seeded[0])
