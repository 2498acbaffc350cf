"""``python -m dashboard.serve [daphne's arguments]``: daphne, with the API tokens of simulated clusters kept out of
its access log and its log handlers (kubeconfigs of plain HTTP deployments carry them in the path,
``/clusters/<name>/k8s/t/<token>/...``; see dashboard.k8sapi.redact), and without Twisted's parse of POSTed
forms."""
from __future__ import annotations

import logging
import os

import daphne.server
from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server

from .k8sapi.redact import RedactClusterTokens, redact_path


class BodyRequest(WebRequest):
    """daphne's request, without Twisted's parse of a POSTed form into ``args``: daphne never reads them (Django
    parses the body), and Twisted parses every POST's Content-Type header with the ``email`` package to find out,
    about 0.5 ms of the event loop's time per POST."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._parsePOSTFormSubmission = False   # http.Request's switch for that parse


class BodyHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr):
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = BodyRequest
        return protocol


class RedactingServer(Server):
    """daphne's Server whose access log entries (and log records) show ``/k8s/t/[redacted]``."""

    def log_action(self, protocol, action, details):
        if "path" in details:
            details = dict(details, path=redact_path(details["path"]))
        super().log_action(protocol, action, details)

    def run(self):
        for handler in logging.getLogger().handlers:   # set up by the command line (logging.basicConfig)
            handler.addFilter(RedactClusterTokens())
        daphne.server.HTTPFactory = BodyHTTPFactory   # what Server.run builds its HTTP factory from
        super().run()


class Command(CommandLineInterface):
    server_class = RedactingServer


if __name__ == "__main__":
    # the requests' threads keep their PostgreSQL connections (dashboard.settings), read when daphne loads the app
    os.environ.setdefault("SCHEDSCOPE_DB_CONN_MAX_AGE", "300")
    Command.entrypoint()
