"""A logging filter that hides the API tokens of simulated clusters in request paths (``.../k8s/t/<token>/...``,
the form kubeconfigs take over plain HTTP), for Django's request logger."""
from __future__ import annotations

import logging
import re

TOKEN_IN_PATH = re.compile(r"(/k8s/t/)[0-9a-fA-F]+")


class RedactClusterTokens(logging.Filter):
    """Rewrites a record whose message holds ``/k8s/t/<token>`` to show ``/k8s/t/[redacted]`` instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/k8s/t/" in message:
            record.msg, record.args = TOKEN_IN_PATH.sub(r"\1[redacted]", message), None
        return True
