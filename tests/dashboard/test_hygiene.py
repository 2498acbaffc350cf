"""Hygiene: the embedded mode's SQLite database and its journals are private files (0600); every response carries
a Content-Security-Policy that allows scripts from the site only (the browser tests fail on any violation)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from .conftest import ROOT

PROBE = """
import json, os, stat, django
django.setup()
from django.db import connection
with connection.cursor() as c:
    c.execute("CREATE TABLE IF NOT EXISTS t (x int)")
    c.execute("INSERT INTO t VALUES (1)")
    path = connection.settings_dict["NAME"]
    print(json.dumps({s: oct(stat.S_IMODE(os.stat(str(path) + s).st_mode))
                      for s in ("", "-wal", "-shm") if os.path.exists(str(path) + s)}))
"""


def file_modes(db) -> dict:
    """The modes of the database file and its journals while a process (umask 022) writes to it."""
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{db}", DJANGO_SETTINGS_MODULE="dashboard.settings",
               PYTHONPATH=str(ROOT))
    env.pop("REDIS_URL", None)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                         preexec_fn=lambda: os.umask(0o022), check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_sqlite_database_and_journals_are_created_private(tmp_path):
    modes = file_modes(tmp_path / "new.sqlite3")
    assert modes == {"": "0o600", "-wal": "0o600", "-shm": "0o600"}


def test_an_existing_readable_sqlite_database_is_made_private(tmp_path):
    db = tmp_path / "old.sqlite3"
    file_modes(db)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{db}{suffix}"):
            os.chmod(f"{db}{suffix}", 0o644)
    assert file_modes(db) == {"": "0o600", "-wal": "0o600", "-shm": "0o600"}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/profiles/login/", "/", "/api/", "/admin/", "/no-such-page/", "/metrics"])
def test_every_response_carries_a_content_security_policy(client, path):
    policy = client.get(path)["Content-Security-Policy"]
    directives = dict((d.split(" ", 1) + [""])[:2] for d in policy.split("; "))
    assert directives["script-src"] == "'self'" and directives["default-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)


def test_templates_have_no_inline_script():
    """What the policy would refuse: <script> blocks and on...= handlers (json_script data blocks are not run)."""
    found = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = path.read_text()
        found += [f"{path.relative_to(ROOT)}: {m.group(0)[:60]}" for m in INLINE_SCRIPT.finditer(text)]
        found += [f"{path.relative_to(ROOT)}: {m.group(0)[:60]}" for m in INLINE_HANDLER.finditer(text)]
    assert not found
