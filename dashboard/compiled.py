"""Small queries whose SQL Django compiles once per process, then runs with values put in for markers: Django's
query compiler costs more than these queries themselves, and every API request and websocket connect makes some.

A query is built with the markers below in place of its values, its ``query.sql_with_params()`` kept (under
``functools.cache``); ``fetch_one``/``fetch_all`` run it with the values, and ``instance`` turns the columns of a
model's row (a plain query selects the model's concrete fields first, in order) into a model instance, the values
converted as Django's own queries convert them.
"""
from __future__ import annotations

from functools import cache

import psycopg
from django.db import connection

ANY_USER_ID, ANY_CLUSTER_ID = -7_391_023, -7_391_024
ANY_CLUSTER_NAME, ANY_TOKEN_KEY = "\x00any cluster", "\x00any token key"


def filled(compiled: tuple[str, tuple], values: dict) -> tuple[str, list]:
    """Compiled SQL and its parameters, with the markers' ``values`` put in."""
    sql, params = compiled
    return sql, [values.get(p, p) for p in params]


def fetch_one(compiled: tuple[str, tuple], values: dict):
    """The first row of the query; None when there is none."""
    rows = fetch_all(compiled, values)
    return rows[0] if rows else None


def fetch_all(compiled: tuple[str, tuple], values: dict) -> list:
    """The query's rows. On PostgreSQL a prepared statement of the connection's: PostgreSQL's parsing and planning
    of these queries (joins, EXISTS) cost it more than running them (a cluster's role: 1.3 ms to plan)."""
    with _preparing_cursor() if connection.vendor == "postgresql" else connection.cursor() as cursor:
        cursor.execute(*filled(compiled, values))
        return cursor.fetchall()


def _preparing_cursor():
    """A psycopg cursor binding values on the server, so that psycopg prepares its queries, once per connection
    (``prepare_threshold``: dashboard.settings; Django's own cursors bind on the client and prepare nothing), in
    Django's cursor wrapper (its errors, execute wrappers and query log), made as ``connection.cursor()`` makes
    one."""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        raw = psycopg.Cursor(connection.connection)
    return connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)


def width(model) -> int:
    """How many columns a row of ``model`` takes at the start of a query's row (its concrete fields)."""
    return len(model._meta.concrete_fields)


def instance(model, row):
    """A ``model`` instance from the first ``width(model)`` columns of ``row``."""
    names, converters = _columns(model)
    values = list(row[:len(names)])
    for i, col, funcs in converters:
        for func in funcs:
            values[i] = func(values[i], col, connection)
    return model.from_db(connection.alias, names, values)


@cache
def _columns(model) -> tuple[list[str], list]:
    """``model``'s concrete fields' attribute names, and the converters Django applies to their columns (the
    backend's, e.g. SQLite's dates, and the fields' own, e.g. JSON), by position."""
    names, converters = [], []
    for i, field in enumerate(model._meta.concrete_fields):
        names.append(field.attname)
        col = field.get_col(model._meta.db_table)
        funcs = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
        if funcs:
            converters.append((i, col, funcs))
    return names, converters
