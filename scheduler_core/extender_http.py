"""The HTTP side of scheduler extenders: where a call may go (``ExtenderPolicy``) and the guarded POST (``post``).

kube-scheduler's extender client is a plain ``http.Client`` (any address, redirects followed, no limit on what it
shows). Here the extender URLs come from users, so a call is held to a policy: http and https only (what Go's
transport speaks), never a link-local or cloud-metadata address (checked on the resolved address at connect time,
so a DNS name pointing there is refused too), optionally only under allowed URL prefixes, no redirects followed (a
3xx is a non-200 answer), no proxy, a time-out cap, and the extender's own text cut to ``max_text`` characters.
The exchange runs in a daemon thread that the caller abandons at the deadline or as soon as ``cancelled()`` says
so (checked every ``CANCEL_POLL_SECONDS``): a scheduler loop stops, pauses or reloads while an extender hangs.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from .outbound import host_problem, refused_address

SCHEMES = ("http", "https")
CANCEL_POLL_SECONDS = 0.1
_DOT_SEGMENT = re.compile(r"(^|/)(\.|%2e){1,2}(/|$)", re.I)


class ExtenderError(Exception):
    """A failed extender call; the text is what kube-scheduler reports."""


class ExtenderCanceled(ExtenderError):
    """The caller gave up on the call (``ExtenderPolicy.cancelled``): never ignorable, the attempt fails."""


def _under(url: str, prefix: str) -> bool:
    """``url`` is ``prefix`` or continues it at a path boundary ("http://a" does not cover "http://a.evil")."""
    return url == prefix or (url.startswith(prefix) and (prefix.endswith("/") or url[len(prefix)] == "/"))


@dataclass(frozen=True)
class ExtenderPolicy:
    """Limits on extender calls. ``allowed_prefixes``: None allows any URL, else a URL must be under one of them;
    ``max_timeout``: seconds, caps every httpTimeout (None: kube's, unbounded); ``max_text``: characters of the
    extender's own text (its Error, its failure reasons) kept in messages; ``cancelled``: the caller's "give up
    now" check, polled while a call is in flight; ``max_response_bytes``: the largest answer read (a larger one
    fails the call, read no further)."""

    allowed_prefixes: tuple | None = None
    max_timeout: float | None = None
    max_text: int = 1024
    cancelled: Callable[[], bool] | None = None
    max_response_bytes: int = 16 * 1024 * 1024

    def url_problem(self, url: str) -> str | None:
        """Why a call to ``url`` is refused (Go's words where Go refuses it too), or None."""
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError as err:
            return f"invalid URL: {err}"
        if parts.scheme not in SCHEMES:
            return f'unsupported protocol scheme "{parts.scheme}"'
        if not parts.hostname:
            return "http: no Host in request URL"
        if _DOT_SEGMENT.search(parts.path):
            return "the URL path has a . or .. segment"
        problem = host_problem(parts.hostname)
        if problem:
            return f"{problem}: refused for extenders"
        if self.allowed_prefixes is not None and not any(_under(url, p) for p in self.allowed_prefixes):
            return "the URL is not under an allowed extender URL prefix (" + ", ".join(self.allowed_prefixes) + ")"
        return None

    def timeout(self, configured: float | None) -> float | None:
        """The time-out a call gets: ``configured`` (None: none, as kube for a negative httpTimeout), capped."""
        if self.max_timeout is None:
            return configured
        return self.max_timeout if configured is None else min(configured, self.max_timeout)

    def text(self, value) -> str:
        """The extender's own text as shown in messages, cut to ``max_text`` characters."""
        s = value if isinstance(value, str) else str(value)
        if len(s) <= self.max_text:
            return s
        return f"{s[:self.max_text]}... ({len(s) - self.max_text} more characters cut)"


DEFAULT_POLICY = ExtenderPolicy()


def post(url: str, verb: str, payload, timeout: float | None, policy: ExtenderPolicy = DEFAULT_POLICY):
    """POST ``payload`` as JSON to ``url`` and decode the answer; ExtenderError with kube's texts otherwise."""
    problem = policy.url_problem(url)
    if problem:
        raise ExtenderError(f'Post "{url}": {problem}')
    if policy.cancelled is not None and policy.cancelled():
        raise ExtenderCanceled(f'Post "{url}": context canceled')
    return _Call(url, verb, json.dumps(payload).encode(), timeout, policy).result()


class _Call:
    """One exchange in a daemon thread; ``result`` waits for it, or abandons it (its socket shut)."""

    def __init__(self, url, verb, body, timeout, policy):
        self.url, self.verb, self.body, self.timeout, self.policy = url, verb, body, timeout, policy
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.sock = None
        self.abandoned = False
        self.peer = ""        # ip:port of the last connection attempt
        self.value = self.error = None
        threading.Thread(target=self._run, name="extender-call", daemon=True).start()

    def result(self):
        cancelled = self.policy.cancelled
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            wait = CANCEL_POLL_SECONDS if cancelled is not None else None
            if deadline is not None:
                left = max(0.0, deadline - time.monotonic())
                wait = left if wait is None else min(wait, left)
            if self.done.wait(wait):
                break
            if deadline is not None and time.monotonic() >= deadline:
                self._abandon()
                raise ExtenderError(self._deadline_text())
            if cancelled is not None and cancelled():
                self._abandon()
                raise ExtenderCanceled(f'Post "{self.url}": context canceled')
        if self.error is not None:
            raise self._translate(self.error) from None
        return self.value

    def _abandon(self) -> None:
        with self.lock:
            self.abandoned = True
            sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _run(self) -> None:
        try:
            self.value = self._exchange()
        except BaseException as err:  # handed to the waiting caller
            self.error = err
        finally:
            self.done.set()

    def _exchange(self):
        parts = urlsplit(self.url)
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=self.timeout,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
        conn._create_connection = self._connect
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            conn.request("POST", path, self.body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise ExtenderError(f"failed {self.verb} with extender at URL {self.url}, code {resp.status}")
            data = resp.read(self.policy.max_response_bytes + 1)   # never more than the cap in memory
            if len(data) > self.policy.max_response_bytes:
                raise ExtenderError(f"{self.verb} response from extender at URL {self.url} is larger than "
                                    f"{self.policy.max_response_bytes} bytes")
        finally:
            conn.close()
        try:
            return json.loads(data)
        except ValueError as err:
            raise ExtenderError(f"decoding {self.verb} response from extender at URL {self.url}: {err}") from None

    def _connect(self, address, timeout=None, source_address=None):
        """socket.create_connection for http.client, refusing link-local and metadata addresses as resolved."""
        host, port = address
        last, refused = None, None
        for family, type_, proto, _name, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            ip = sockaddr[0]
            self.peer = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
            if refused_address(ip):
                refused = ip
                continue
            sock = socket.socket(family, type_, proto)
            with self.lock:
                if self.abandoned:
                    sock.close()
                    raise ExtenderCanceled("abandoned")
                self.sock = sock
            try:
                sock.settimeout(timeout)
                sock.connect(sockaddr)
                return sock
            except OSError as err:
                sock.close()
                last = err
        if last is not None:
            raise last
        raise ExtenderError(f'Post "{self.url}": dial tcp {self.peer}: address {refused} is link-local or a cloud '
                            "metadata address: refused for extenders")

    def _deadline_text(self) -> str:
        return f'Post "{self.url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'

    def _translate(self, err: BaseException) -> ExtenderError:
        """Go's texts for what went wrong; nothing of a non-HTTP server's bytes (a banner) is repeated."""
        if isinstance(err, ExtenderError):
            return err
        if isinstance(err, (socket.timeout, TimeoutError)):
            return ExtenderError(self._deadline_text())
        if isinstance(err, ConnectionRefusedError):
            return ExtenderError(f'Post "{self.url}": dial tcp {self.peer}: connect: connection refused')
        if isinstance(err, socket.gaierror):
            return ExtenderError(f'Post "{self.url}": dial tcp: lookup {urlsplit(self.url).hostname}: no such host')
        if isinstance(err, http.client.HTTPException):
            return ExtenderError(f'Post "{self.url}": malformed HTTP response')
        if isinstance(err, OSError):
            return ExtenderError(f'Post "{self.url}": {err.strerror or err}')
        return ExtenderError(f'Post "{self.url}": {type(err).__name__}')
