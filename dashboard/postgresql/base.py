"""Django's PostgreSQL backend, with a health check of a persistent connection that costs no round trip while the
connection is idle and the server has sent nothing since (Django's check runs ``SELECT 1`` before every request's
first query: at hundreds of requests a second, as many statements more)."""
from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):

    def is_usable(self):
        conn = self.connection
        if conn is None or conn.closed:
            return False
        if conn.info.transaction_status == pq.TransactionStatus.IDLE:
            try:
                readable = select.select([conn.fileno()], [], [], 0)[0]
            except (OSError, ValueError):
                return False
            # an idle session hears from the server only when the server ends it (or with a notice or a
            # notification, which Django's check below reads): nothing to read, nothing wrong
            if not readable:
                return True
        return super().is_usable()
