"""Watches: a stream of JSON lines {"type", "object"} from the cluster's change log, as kube's watch cache serves them.

A watch starts after a resourceVersion (older than the log: one ERROR event with a 410 Status), or with the
current objects as ADDED events when there is none ("0" or unset). Objects that start or stop matching the
selectors arrive as ADDED or DELETED. BOOKMARK events carry the current resourceVersion when asked for. The
stream ends after ``timeoutSeconds`` or when the cluster's state is replaced.
"""
from __future__ import annotations

import asyncio
import threading
import time

from ..services.objectstore import json_bytes
from . import admission, tables
from .errors import ApiError
from .resources import EVENTS_V1_LABELS

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
MAX_WAIT_SECONDS = 60.0  # one wait at most (a far deadline, timeoutSeconds up to 2^63, is re-checked after it)


def served(res, obj: dict) -> dict:
    """A stored object as the resource's version serves it."""
    if res.group == "events.k8s.io":
        return admission.event_from_core(obj)
    if "kind" not in obj or "apiVersion" not in obj:
        return dict(obj, apiVersion=res.group_version, kind=res.kind)
    return obj


def field_values(res, obj: dict) -> dict:
    """The selectable fields of an object (ToSelectableFields of its registry)."""
    meta = obj.get("metadata") or {}
    out = {"metadata.name": meta.get("name", "")}
    if res.namespaced:
        out["metadata.namespace"] = meta.get("namespace") or "default"
    if res.kind == "Pod":
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        ips = status.get("podIPs") or []
        out.update({"spec.nodeName": spec.get("nodeName") or "", "spec.restartPolicy": spec.get("restartPolicy", ""),
                    "spec.schedulerName": spec.get("schedulerName", ""),
                    "spec.serviceAccountName": spec.get("serviceAccountName", ""),
                    "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
                    "status.phase": status.get("phase", ""),
                    "status.podIP": ips[0].get("ip", "") if ips else status.get("podIP", ""),
                    "status.nominatedNodeName": status.get("nominatedNodeName", "")})
    elif res.kind == "Node":
        out["spec.unschedulable"] = "true" if (obj.get("spec") or {}).get("unschedulable") else "false"
    elif res.kind == "ResourceSlice":
        spec = obj.get("spec") or {}
        out.update({"spec.nodeName": spec.get("nodeName") or "", "spec.driver": spec.get("driver", "")})
    elif res.kind == "Namespace":
        out.update({"status.phase": (obj.get("status") or {}).get("phase", ""), "name": meta.get("name", "")})
    elif res.kind == "Event":
        inv = obj.get("involvedObject") or {}
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
            out[f"involvedObject.{f}"] = inv.get(f, "")
        out.update({"reason": obj.get("reason", ""), "reportingComponent": obj.get("reportingComponent", ""),
                    "source": (obj.get("source") or {}).get("component") or obj.get("reportingComponent", ""),
                    "type": obj.get("type", "")})
        if res.group == "events.k8s.io":
            out.update((label, out[core]) for label, core in EVENTS_V1_LABELS.items())
    return out


class Query:
    """What a list or watch asks for: namespace, label and field selectors."""

    __slots__ = ("res", "namespace", "labels", "fields")

    def __init__(self, res, namespace: str, labels, fields):
        self.res, self.namespace, self.labels, self.fields = res, namespace, labels, fields

    def matches(self, obj) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace and (meta.get("namespace") or "default") != self.namespace:
            return False
        if self.labels.requirements and not self.labels.matches(meta.get("labels")):
            return False
        return not self.fields.terms or self.fields.matches(field_values(self.res, obj))


def encode(type_: str, obj: dict) -> bytes:
    return json_bytes({"type": type_, "object": obj}) + b"\n"


class Watcher:
    """One watch request. ``poll`` turns new changes into encoded events; ``wake`` is called on every change."""

    def __init__(self, api, query: Query, since: str, bookmarks: bool, timeout: float, bookmark_interval: float,
                 as_table: bool = False, include_object: str = "Metadata", send_initial: bool = False):
        self.api = api
        self.query = query
        self.bookmarks = bookmarks
        self.as_table = as_table
        self.include_object = include_object
        self.deadline = time.monotonic() + timeout
        self.bookmark_interval = bookmark_interval
        self.next_bookmark = time.monotonic() + bookmark_interval
        self.headers_sent = False
        self.pending = []
        self._loop = None
        self._event = None
        with api.lock:
            initial = send_initial or since in ("", "0")
            if initial:
                self.cursor = api.rv
                res = query.res
                objs = sorted((o for o in api.items(res.store) if query.matches(o)),
                              key=lambda o: ((o.get("metadata") or {}).get("namespace", ""),
                                             (o.get("metadata") or {}).get("name", "")))
                self.pending = [self._encode("ADDED", o) for o in objs]
                if send_initial and bookmarks:
                    self.pending.append(self._bookmark({INITIAL_EVENTS_END: "true"}))
            else:
                try:
                    self.cursor = int(since)
                except ValueError:
                    raise ApiError.bad_request(f'invalid resource version "{since}"') from None
                oldest = api.oldest_rv(query.res.store)
                if self.cursor < oldest:
                    self.pending = [encode("ERROR", ApiError.expired(
                        f"too old resource version: {self.cursor} ({oldest})").status())]
                    self.deadline = 0.0
            api.watchers.add(self)

    # -- waking ---------------------------------------------------------------------------------
    def use_asyncio(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()

    def use_threads(self) -> None:
        self._event = threading.Event()

    def wake(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._event.set)
        elif self._event is not None:
            self._event.set()

    def detach(self) -> None:
        with self.api.lock:
            self.api.watchers.discard(self)

    def wait_seconds(self) -> float:
        until = self.deadline
        if self.bookmarks:
            until = min(until, self.next_bookmark)
        return min(max(0.0, until - time.monotonic()), MAX_WAIT_SECONDS)

    # -- events -----------------------------------------------------------------------------------
    def _encode(self, type_: str, obj: dict) -> bytes:
        res = self.query.res
        out = served(res, obj)
        if self.as_table:
            out = tables.table(res.kind, [(out, obj)], time.time(), self.include_object,
                               str((obj.get("metadata") or {}).get("resourceVersion", "")),
                               headers=not self.headers_sent)
            self.headers_sent = True
        return encode(type_, out)

    def _bookmark(self, annotations=None) -> bytes:
        res = self.query.res
        meta = {"resourceVersion": str(self.cursor)}
        if annotations:
            meta["annotations"] = annotations
        return encode("BOOKMARK", {"kind": res.kind, "apiVersion": res.group_version, "metadata": meta})

    def poll(self) -> tuple:
        """(encoded events, whether the stream is over)."""
        out, self.pending = self.pending, []
        if self.deadline == 0.0:
            return out, True
        q = self.query
        with self.api.lock:
            if self.api.closed:
                return out, True
            try:
                changes = self.api.changes_since(self.cursor, q.res.store)
            except ApiError as err:
                out.append(encode("ERROR", err.status()))
                return out, True
            for c in changes:
                if c.store != q.res.store:
                    continue
                now_in = q.matches(c.obj)
                was_in = c.old is not None and q.matches(c.old)
                if c.type == "MODIFIED":
                    type_ = "MODIFIED" if now_in and was_in else "ADDED" if now_in else "DELETED" if was_in else None
                else:
                    type_ = c.type if now_in else None
                if type_ is not None:
                    out.append(self._encode(type_, c.obj))
            self.cursor = max(self.cursor, self.api.rv)
        now = time.monotonic()
        if self.bookmarks and now >= self.next_bookmark:
            out.append(self._bookmark())
            self.next_bookmark = now + self.bookmark_interval
        return out, now >= self.deadline

    # -- the two ways of serving the stream ----------------------------------------------------------
    async def stream_async(self):
        """For ASGI servers (uvicorn): chunked, ends when the client disconnects (the task is cancelled)."""
        self.use_asyncio()
        try:
            yield b""   # the status line and headers go out now, as kube-apiserver sends them before any event
            while True:
                self._event.clear()
                chunks, done = self.poll()
                if chunks:
                    yield b"".join(chunks)
                if done:
                    return
                try:
                    await asyncio.wait_for(self._event.wait(), timeout=self.wait_seconds())
                except asyncio.TimeoutError:
                    pass
        finally:
            self.detach()

    def stream_sync(self):
        """For WSGI servers: a blocking iterator (the thread waits between changes)."""
        self.use_threads()
        try:
            yield b""
            while True:
                self._event.clear()
                chunks, done = self.poll()
                if chunks:
                    yield b"".join(chunks)
                if done:
                    return
                self._event.wait(self.wait_seconds())
        finally:
            self.detach()
