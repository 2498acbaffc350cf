"""``python -m dashboard.serve [daphne's arguments]``: daphne, with the API tokens of simulated clusters kept out of
its access log and its log handlers (kubeconfigs of plain HTTP deployments carry them in the path,
``/clusters/<name>/k8s/t/<token>/...``; see dashboard.k8sapi.redact)."""
from __future__ import annotations

import logging

from daphne.cli import CommandLineInterface
from daphne.server import Server

from .k8sapi.redact import RedactClusterTokens, redact_path


class RedactingServer(Server):
    """daphne's Server whose access log entries (and log records) show ``/k8s/t/[redacted]``."""

    def log_action(self, protocol, action, details):
        if "path" in details:
            details = dict(details, path=redact_path(details["path"]))
        super().log_action(protocol, action, details)

    def run(self):
        for handler in logging.getLogger().handlers:   # set up by the command line (logging.basicConfig)
            handler.addFilter(RedactClusterTokens())
        super().run()


class Command(CommandLineInterface):
    server_class = RedactingServer


if __name__ == "__main__":
    Command.entrypoint()
