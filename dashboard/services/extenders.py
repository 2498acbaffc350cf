"""The deployment's limits on scheduler extenders (settings ``SCHEDSCOPE_EXTENDER_*``), as the core's ExtenderPolicy."""
from __future__ import annotations

from django.conf import settings

from scheduler_core.extender_http import ExtenderPolicy


def policy(cancelled=None) -> ExtenderPolicy:
    """Allowed URL prefixes (None: any, but only admins may name extenders) and the httpTimeout cap;
    ``cancelled``: the loop's "give up the call in flight" check."""
    conf = settings.SCHEDSCOPE
    return ExtenderPolicy(allowed_prefixes=conf["EXTENDER_ALLOW"], max_timeout=conf["EXTENDER_TIMEOUT_MAX_SECONDS"],
                          max_response_bytes=conf["EXTENDER_MAX_RESPONSE_BYTES"], cancelled=cancelled)
