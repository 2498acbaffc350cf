"""Restricted means invisible everywhere: /metrics, scenario-made profiles, the Kubernetes API's answers for
cluster names."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings
from knox.models import AuthToken

from dashboard.models import Cluster, ClusterMembership
from dashboard.services import metrics

from .conftest import make_user, page_client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_clusters(db):
    Cluster.objects.create(name="open-one")
    Cluster.objects.create(name="secret-one", restricted=True)
    for name in ("open-one", "secret-one"):
        metrics.observe_cycle(name, "default-scheduler", "scheduled", {"total": 0.01, "Filter": 0.001}, ())


def _clusters_in(text: str) -> set[str]:
    return {name for name in ("open-one", "secret-one") if f'cluster="{name}"' in text}


def test_metrics_show_the_clusters_the_user_sees(two_clusters, admin_user):
    viewer, member = make_user("vi", "viewer"), make_user("member", "viewer")
    ClusterMembership.objects.create(cluster=Cluster.objects.get(name="secret-one"), user=member, role="viewer")
    assert _clusters_in(page_client(viewer).get("/metrics").content.decode()) == {"open-one"}
    assert _clusters_in(page_client(member).get("/metrics").content.decode()) == {"open-one", "secret-one"}
    assert _clusters_in(page_client(admin_user).get("/metrics").content.decode()) == {"open-one", "secret-one"}
    # a scrape token sees what its owner sees
    for owner, expected in ((viewer, {"open-one"}), (member, {"open-one", "secret-one"})):
        token = AuthToken.objects.create(user=owner)[1]
        resp = page_client().get("/metrics", HTTP_AUTHORIZATION=f"Token {token}")
        assert resp.status_code == 200 and _clusters_in(resp.content.decode()) == expected
    text = page_client(viewer).get("/metrics").content.decode()
    assert 'scheduler_pending_pods{cluster="open-one",queue="active"} 0.0' in text
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
    # anonymous scrapers, where allowed, see the unrestricted clusters
    with override_settings(SCHEDSCOPE=dict(settings.SCHEDSCOPE, METRICS_PUBLIC=True)):
        assert _clusters_in(page_client().get("/metrics").content.decode()) == {"open-one"}
