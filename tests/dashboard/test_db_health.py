"""The PostgreSQL backend's health check (dashboard.postgresql): no round trip for an idle connection the server
has said nothing on; a connection the server ended is found unusable, and the next request reconnects."""
from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql import base as django_postgresql

from .conftest import database_url

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_idle_connection_is_usable_without_a_query(monkeypatch):
    connection.ensure_connection()
    asked = []
    monkeypatch.setattr(django_postgresql.DatabaseWrapper, "is_usable", lambda self: asked.append(1) or True)
    assert connection.is_usable() and asked == []


def test_a_connection_the_server_ended_is_unusable_and_the_next_check_reconnects():
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    with psycopg.connect(database_url(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:   # the server's goodbye reaches the socket
        time.sleep(0.05)
    assert not connection.is_usable()
    connection.health_check_enabled, connection.health_check_done = True, False   # as at a request's start
    connection.close_if_health_check_failed()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
