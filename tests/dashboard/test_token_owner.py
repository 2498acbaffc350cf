"""A simulated cluster's API token follows its creator: it stops working within TOKEN_CACHE_SECONDS (1 s) of the
creator losing editor rights on the cluster, whichever way they lose them."""
from __future__ import annotations

import asyncio
import time

import pytest
from django.contrib.auth.models import Group
from django.test import AsyncClient

from dashboard.models import Cluster, ClusterMembership, ClusterToken
from dashboard.services import credentials

from .conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def list_namespaces(cluster, token) -> int:
    """The status of a namespace list through the cluster's Kubernetes API (the real view)."""
    return asyncio.run(AsyncClient().get(f"/clusters/{cluster.name}/k8s/api/v1/namespaces",
                                         headers={"Authorization": f"Bearer {token}"})).status_code


def refused_once_the_cache_expires(cluster, token, lost: float) -> None:
    """Until TOKEN_CACHE_SECONDS after the loss (``lost``, a monotonic time) the token may still pass; the first
    request that starts after that is refused, however long each request takes on a loaded machine."""
    while time.monotonic() - lost <= credentials.TOKEN_CACHE_SECONDS:
        assert list_namespaces(cluster, token) in (200, 401)
        time.sleep(0.05)
    assert list_namespaces(cluster, token) == 401, "the token still works after its cache entry expired"


@pytest.fixture
def cluster(db):
    return Cluster.objects.create(name="owned", kind=Cluster.SIMULATED)


@pytest.mark.parametrize("loss", ["leaves the editor group", "deactivated", "deleted", "membership removed"])
def test_a_token_stops_working_when_its_creator_may_no_longer_edit(cluster, loss):
    user = make_user("maker", "editor" if loss != "membership removed" else "viewer")
    if loss == "membership removed":
        cluster.restricted = True
        cluster.save()
        ClusterMembership.objects.create(cluster=cluster, user=user, role=ClusterMembership.EDITOR)
    _row, token = credentials.create_token(cluster, "kubectl", user)
    assert list_namespaces(cluster, token) == 200
    lost = time.monotonic()
    if loss == "leaves the editor group":
        user.groups.remove(Group.objects.get(name="editor"))
    elif loss == "deactivated":
        user.is_active = False
        user.save()
    elif loss == "deleted":
        user.delete()
        assert ClusterToken.objects.get(name="kubectl").revoked is not None
    else:
        ClusterMembership.objects.filter(user=user).delete()
    refused_once_the_cache_expires(cluster, token, lost)


def test_an_operators_token_and_a_viewer_made_editor_by_membership(cluster):
    _row, operator = credentials.create_token(cluster, "ci", None)
    assert credentials.authenticate_token(cluster.pk, operator)
    viewer = make_user("member", "viewer")
    ClusterMembership.objects.create(cluster=cluster, user=viewer, role=ClusterMembership.EDITOR)
    _row, token = credentials.create_token(cluster, "member", viewer)
    assert credentials.authenticate_token(cluster.pk, token)
    ClusterMembership.objects.filter(user=viewer).update(role=ClusterMembership.VIEWER)
    assert not credentials.authenticate_token(cluster.pk, token)
