"""``python -m dashboard.serve [-b HOST] [-p PORT] [app]``: the web process (pages, APIs, websockets), served by
uvicorn on uvloop with httptools' HTTP parser and the ``websockets`` library's sans-I/O protocol, with the API
tokens of simulated clusters kept out of its access log and its log handlers (kubeconfigs of plain HTTP deployments
carry them in the path, ``/clusters/<name>/k8s/t/<token>/...``; see dashboard.k8sapi.redact).

Port 0 takes a free port; the line "Uvicorn running on http://HOST:PORT" names it. SIGTERM or Ctrl-C stops
accepting connections and gives open ones (websockets, watches) ``GRACEFUL_SHUTDOWN_SECONDS`` to end.
"""
from __future__ import annotations

import argparse
import os

import uvicorn

GRACEFUL_SHUTDOWN_SECONDS = 5

# uvicorn's own logging set-up, with every record's message passed through the token filter: the access log's
# lines are formatted as plain messages, so that the filter sees (and redacts) the request line
LOG_CONFIG = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_cluster_tokens": {"()": "dashboard.k8sapi.redact.RedactClusterTokens"}},
    "formatters": {"plain": {"format": "%(levelname)s: %(message)s"}},
    "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr",
                             "filters": ["redact_cluster_tokens"]},
                 "access": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stdout",
                            "filters": ["redact_cluster_tokens"]}},
    "loggers": {"uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False},
                "uvicorn.error": {"level": "INFO"},
                "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False}},
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m dashboard.serve", description=__doc__.splitlines()[0])
    ap.add_argument("-b", "--bind", default="127.0.0.1", help="the address to listen on")
    ap.add_argument("-p", "--port", type=int, default=8000, help="the TCP port (0: a free one)")
    ap.add_argument("--proxy-headers", action="store_true",
                    help="take the client's address from X-Forwarded-For (behind a proxy that sets it)")
    ap.add_argument("app", nargs="?", default="dashboard.asgi:application", help="the ASGI application")
    args = ap.parse_args(argv)
    # the requests' threads keep their PostgreSQL connections (dashboard.settings), read when the app is loaded
    os.environ.setdefault("SCHEDSCOPE_DB_CONN_MAX_AGE", "300")
    uvicorn.run(args.app, host=args.bind, port=args.port, loop="uvloop", http="httptools", ws="websockets-sansio",
                lifespan="off", proxy_headers=args.proxy_headers,
                forwarded_allow_ips="*" if args.proxy_headers else None,
                log_config=LOG_CONFIG,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS, server_header=False)


if __name__ == "__main__":
    main()
