"""SESSION_ENGINE with Redis: sessions stored in the database and read through the "sessions" cache, so pages
and websocket connects usually read no session row. Django's cached_db, except that a cache that cannot be
written (Redis away) only logs: the session read from the database still signs the user in."""
from __future__ import annotations

import logging

from django.contrib.sessions.backends import cached_db

log = logging.getLogger("dashboard.sessions")


class SessionStore(cached_db.SessionStore):
    def load(self):
        try:
            data = self._cache.get(self.cache_key)
        except Exception:   # Redis away (or a key the cache refuses): the database has the session
            data = None
        if data is not None:
            return data
        row = self._get_session_from_db()
        if row is None:
            return {}
        data = self.decode(row.session_data)
        try:
            self._cache.set(self.cache_key, data, self.get_expiry_age(expiry=row.expire_date))
        except Exception as err:
            log.warning("session cache not written (%s); sessions are read from the database meanwhile", err)
        return data
