"""Django's SQLite backend, except that the database file is created readable by its owner only (0600) before
SQLite opens it; SQLite gives its journal, WAL and shared-memory files the database file's mode. A file left
readable by others (made before this backend) is narrowed to 0600, with its journal files, when opened."""
from __future__ import annotations

import os
import stat

from django.db.backends.sqlite3 import base

JOURNAL_SUFFIXES = ("", "-journal", "-wal", "-shm")


def make_private(path: str) -> None:
    """Create ``path`` empty with mode 0600 unless it exists; narrow it and its journal files to 0600 otherwise."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        return
    except FileExistsError:
        pass
    for suffix in JOURNAL_SUFFIXES:
        try:
            mode = os.stat(path + suffix).st_mode
        except FileNotFoundError:
            continue
        if stat.S_IMODE(mode) & 0o077:
            os.chmod(path + suffix, 0o600)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        database = str(conn_params["database"])
        if not (conn_params.get("uri") and database.startswith("file:")) and database != ":memory:":
            make_private(database)
        return super().get_new_connection(conn_params)
