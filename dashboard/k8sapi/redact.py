"""Hiding the API tokens of simulated clusters in request paths (``.../k8s/t/<token>/...``, the form kubeconfigs
take over plain HTTP): a logging filter for Django's request logger and the web server's log handlers (its access log
included, see dashboard.serve)."""
from __future__ import annotations

import logging
import re

TOKEN_IN_PATH = re.compile(r"(/k8s/t/)[0-9a-fA-F]+")


def redact_path(path: str) -> str:
    """``path`` with the token of a ``/k8s/t/<token>`` part replaced by ``[redacted]``."""
    return TOKEN_IN_PATH.sub(r"\1[redacted]", path) if "/k8s/t/" in path else path


class RedactClusterTokens(logging.Filter):
    """Rewrites a record whose message holds ``/k8s/t/<token>`` to show ``/k8s/t/[redacted]`` instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/k8s/t/" in message:
            record.msg, record.args = redact_path(message), None
        return True
