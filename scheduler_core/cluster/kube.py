"""KubeCluster: a ClusterSource over the official ``kubernetes`` Python client.

It is what kube-scheduler's informers and clientset are: the kinds kube-scheduler of the cluster's version follows
(``versions``: v1.30's 14, v1.36's 18 with the DRA kinds and VolumeAttachments), each filled by a streaming
watch-list where the version's client uses one and the server offers it (else a paged list) and then watched,
tracking the resourceVersion, synced again after 410 Gone, reconnecting with backoff; and the scheduler's writes:
pods/binding, status patches (PodScheduled, nominatedNodeName), victim deletion, events.k8s.io/v1 events with
client-go's series aggregation, PV/PVC and ResourceClaim updates; all behind a QPS/burst limiter.

Threads: each watch runs in its own thread and updates the stores at once (as kube's listers are ahead of the
handlers); the handler calls are queued and delivered by ``pump`` on the caller's (the scheduler's) thread, in
arrival order. ``subscribe`` before or after ``start``: the handler first gets the current state as adds.
The same code drives a real cluster and a simulated one through the dashboard's Kubernetes-compatible API.
"""
from __future__ import annotations

import collections
import datetime
import json
import logging
import random
import socket
import threading
import time

from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError, MaxRetryError
from urllib3.util.retry import Retry

from .. import versions
from ..framework.snapshot import ClusterObjects
from ..objects import Node, ParseError, Pod
from .simulated import OBJECT_KINDS, ClusterError, _set_condition, store_object

log = logging.getLogger(__name__)

# Followed only by a read-only observer (``watch_failed_scheduling``): the other scheduler's FailedScheduling reports.
FAILED_SCHEDULING_EVENTS = ("Event", "/api/v1/events", (("fieldSelector", "reason=FailedScheduling"),))
NAMESPACED = {"Pod", "Event", *(kind for kind, (_attr, namespaced) in OBJECT_KINDS.items() if namespaced)}
INITIAL_EVENTS_END = "k8s.io/initial-events-end"   # the bookmark that ends a watch-list's initial events
STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
EVENT_SERIES_WINDOW = 6 * 60.0     # client-go events: isomorphic events within 6 minutes form a series
EVENT_SERIES_REFRESH = 30 * 60.0   # and ongoing series are written every 30 minutes


def micro_time(t: float) -> str:
    """metav1.MicroTime."""
    return datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(t: float) -> str:
    """metav1.Time."""
    return datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(raw: dict, namespaced: bool) -> str:
    meta = raw.get("metadata") or {}
    return f'{meta.get("namespace") or "default"}/{meta.get("name", "")}' if namespaced else meta.get("name", "")


def api_message(err: ApiException) -> str:
    """The message of the Status an API error carries (what client-go's error text is)."""
    try:
        return json.loads(err.body)["message"]
    except (TypeError, ValueError, KeyError):
        return f"{err.status} {err.reason}".strip()


def error_text(err: BaseException) -> str:
    """One line for an error of a request: the API's message, or what kept the request from an answer (never the
    URL, which may hold a token)."""
    if isinstance(err, ApiException):
        return api_message(err)
    if isinstance(err, MaxRetryError) and err.reason is not None:
        err = err.reason
    if isinstance(err, HTTPError):
        text = str(err).split(": ", 1)[-1]
        return f"cannot reach the API server ({text})"
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


class _QuietRetries(logging.Filter):
    """urllib3 logs a warning for each retried connection; the callers log a failure once, in their words."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Retrying (")


_QUIET_RETRIES = _QuietRetries()


def make_api_client(kubeconfig: str | None = None, context: str | None = None, in_cluster: bool = False,
                    pool_size: int = 32, kubeconfig_dict: dict | None = None) -> kclient.ApiClient:
    """An ApiClient from a kubeconfig file (or an already loaded kubeconfig document, ``kubeconfig_dict``) and
    context, or from the pod's service account (in-cluster)."""
    cfg = kclient.Configuration()
    if in_cluster:
        kconfig.load_incluster_config(client_configuration=cfg)
    elif kubeconfig_dict is not None:
        kconfig.load_kube_config_from_dict(kubeconfig_dict, context=context, client_configuration=cfg)
    else:
        kconfig.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
    cfg.connection_pool_maxsize = pool_size
    # A request is retried once if it could not connect (nothing was sent), never after it was sent: the callers
    # back off themselves (watches), or must not repeat a write (bindings) past their leader's deadline.
    cfg.retries = Retry(total=1, connect=1, read=0, redirect=0, status=0, other=0)
    logging.getLogger("urllib3.connectionpool").addFilter(_QUIET_RETRIES)   # a set: added once
    return kclient.ApiClient(cfg)


class RateLimiter:
    """client-go's token bucket: ``qps`` requests per second on average, bursts of ``burst``; qps <= 0: none."""

    def __init__(self, qps: float, burst: int):
        self.qps = qps
        self.burst = max(1, burst)
        self.tokens = float(self.burst)
        self.last = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
            self.last = now
            self.tokens -= 1
            wait = -self.tokens / self.qps if self.tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)


class _Connectivity:
    """Failures of the requests to the API server, logged once when they start (a new error text: a line) and
    once when every informer that failed has its answer again, instead of a line per watch and retry."""

    def __init__(self):
        self._lock = threading.Lock()
        self.failing = set()
        self.texts = set()
        self.down_since = None

    def failed(self, who: str, err: BaseException) -> None:
        text = error_text(err)
        with self._lock:
            if self.down_since is None:
                self.down_since = time.monotonic()
            self.failing.add(who)
            if text in self.texts:
                return
            self.texts.add(text)
        log.warning("requests to the API server fail (%s: %s); retrying with backoff", who, text)

    def watches_failing(self) -> bool:
        """Whether a list or watch is failing now (its store may be behind the API server)."""
        return any(who != "events" for who in self.failing)

    def answered(self, who: str) -> None:
        with self._lock:
            if who not in self.failing:
                return
            self.failing.discard(who)
            if self.failing:
                return
            since, self.down_since, self.texts = self.down_since, None, set()
        log.info("the API server answers again (after %.1fs)", time.monotonic() - since)


class _Relist(Exception):
    """The watch must start over with a list (410 Gone)."""


class _Informer:
    """One kind followed as client-go's Reflector does: the store filled by a watch-list (a watch whose initial
    events are the current state, ended by a bookmark, and which then goes on as the watch) when ``watch_list``,
    falling back to a paged list and a watch when the server refuses it; ``rv`` tracked, a full sync again after
    410 Gone, backoff on errors."""

    def __init__(self, cluster: "KubeCluster", kind: str, path: str, selector=(), watch_list: bool = False):
        self.cluster = cluster
        self.kind = kind
        self.path = path
        self.selector = list(selector)
        self.watch_list = watch_list
        self.rv = ""
        self.available = True
        self.relists = 0
        self.watch_lists = 0
        self.response = None
        self.held = None     # (response, its events) of a watch-list whose initial events were read: the watch
        #                      goes on with them
        self.thread = None

    def sync(self) -> None:
        """Replace the store with the server's state: by a watch-list when the server offers it, else a list."""
        if self.watch_list:
            try:
                self._watch_list()
                return
            except ApiException as err:
                if err.status in (401, 403, 404, 410):
                    raise
                log.info("the server refuses a watch-list of %s (%s); listing it instead", self.kind,
                         api_message(err))
                if err.status in (400, 422):   # not offered (the WatchList gate off): list from now on
                    self.watch_list = False
        self.list()

    def list(self) -> None:
        """List every object (in pages) and replace the store with them."""
        items, token = [], ""
        while True:
            query = [("limit", str(self.cluster.page_size)), *self.selector]
            if token:
                query.append(("continue", token))
            data = self.cluster.get_json(self.path, query)
            items.extend(data.get("items") or [])
            token = (data.get("metadata") or {}).get("continue") or ""
            if not token:
                break
        self.rv = (data.get("metadata") or {}).get("resourceVersion", "")
        self.cluster.replace(self.kind, items)

    def _watch_list(self) -> None:
        """sendInitialEvents: the state as adds up to the bookmark annotated ``k8s.io/initial-events-end``, then
        the store replaced with it (what a list would have given) and the stream held for the watch."""
        query = [("sendInitialEvents", "true"), ("resourceVersionMatch", "NotOlderThan")]
        if self.rv:
            query.append(("resourceVersion", self.rv))
        resp = self._open(query)
        events = self._events(resp)
        namespaced = self.kind in NAMESPACED
        items = {}
        try:
            for ev in events:
                type_, obj = ev.get("type"), ev.get("object") or {}
                meta = obj.get("metadata") or {}
                if type_ == "ERROR":
                    self._error(obj)
                elif type_ != "BOOKMARK":
                    key = _key(obj, namespaced)
                    if type_ == "DELETED":
                        items.pop(key, None)
                    else:
                        items[key] = obj
                elif (meta.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true":
                    self.watch_lists += 1
                    self.rv = meta.get("resourceVersion", self.rv)
                    self.cluster.replace(self.kind, list(items.values()))
                    self.held = (resp, events)
                    return
        except BaseException:
            self._done(resp, ended=False)
            raise
        self._done(resp, ended=not self.cluster.stopping.is_set())
        if not self.cluster.stopping.is_set():
            raise ConnectionError(f"the watch-list of {self.kind} ended before its initial events did")

    def run(self) -> None:
        backoff = self.cluster.backoff_initial
        stop = self.cluster.stopping
        need_sync = False
        while not stop.is_set():
            try:
                if need_sync:
                    self.relists += 1
                    self.sync()
                    need_sync = False
                self._watch()
                backoff = self.cluster.backoff_initial
            except _Relist:
                self.rv = ""
                need_sync = True
            except Exception as err:  # connection errors, timeouts, API errors: back off and retry
                if stop.is_set():
                    return
                if isinstance(err, ApiException) and err.status == 410:
                    self.rv = ""
                    need_sync = True
                    continue
                self.cluster.connectivity.failed(f"watch of {self.kind}", err)
                stop.wait(backoff * (1 + random.random()))
                backoff = min(backoff * 2, self.cluster.backoff_max)
                if isinstance(err, ApiException) and err.status not in (429, 500, 503, 504):
                    need_sync = True

    def _open(self, query) -> object:
        """A watch request from the tracked resourceVersion with bookmarks and a randomized server timeout."""
        timeout = int(self.cluster.watch_timeout * (1 + random.random()))
        query = [("watch", "true"), ("allowWatchBookmarks", "true"), ("timeoutSeconds", str(timeout)), *query,
                 *self.selector]
        resp = self.cluster.request("GET", self.path, query, stream=True, timeout=(10, timeout + 30))
        self.cluster.connectivity.answered(f"watch of {self.kind}")
        self.response = resp
        return resp

    def _events(self, resp):
        """The decoded events of a watch response, until it ends or the cluster stops."""
        buf = b""
        while not self.cluster.stopping.is_set():
            chunk = resp.read1(65536)
            if not chunk:
                return
            lines = (buf + chunk).split(b"\n")
            buf = lines.pop()
            for line in lines:
                if line.strip():
                    yield json.loads(line)

    def _done(self, resp, ended: bool) -> None:
        self.response = None
        if ended:
            resp.release_conn()
        else:   # a connection in the middle of a response cannot serve another request
            resp.close()

    def _watch(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            resp, events = held
        else:
            resp = self._open([("resourceVersion", self.rv)] if self.rv else [])
            events = self._events(resp)
        try:
            for ev in events:
                self._event(ev)
        except BaseException:
            self._done(resp, ended=False)
            raise
        self._done(resp, ended=not self.cluster.stopping.is_set())

    def _error(self, status: dict) -> None:
        if status.get("code") == 410:
            raise _Relist()
        raise ApiException(status=status.get("code") or 500, reason=status.get("message", ""))

    def _event(self, ev: dict) -> None:
        type_, obj = ev.get("type"), ev.get("object") or {}
        if type_ == "ERROR":
            self._error(obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if type_ != "BOOKMARK":
            self.cluster.apply(self.kind, type_, obj)
        if rv:
            self.rv = rv

    def interrupt(self) -> None:
        """Unblock a watch waiting for data (used by ``stop``); a held watch-list is closed."""
        for resp in (self.response, self.held and self.held[0]):
            if resp is not None:
                try:
                    resp.shutdown()
                except (ValueError, RuntimeError, OSError):
                    resp.close()


class _EventRecorder(threading.Thread):
    """events.k8s.io/v1 events, written in the background with client-go's isomorphic-event series."""

    def __init__(self, cluster: "KubeCluster"):
        super().__init__(name="kube-events", daemon=True)
        self.cluster = cluster
        self.queue = collections.deque()
        self.cond = threading.Condition()
        self.cache = {}     # isomorphic key -> [event as created, last observed (monotonic), last written]
        self.pending = 0
        self.written = 0
        self.failed = 0
        self.stopped = False
        self.last_expire = time.monotonic()

    def record(self, event: dict) -> None:
        with self.cond:
            self.queue.append(event)
            self.pending += 1
            self.cond.notify()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every recorded event has been written (or failed)."""
        end = time.monotonic() + timeout
        with self.cond:
            while self.pending:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify()

    def run(self) -> None:
        while True:
            with self.cond:
                if not self.queue and not self.stopped:
                    self.cond.wait(EVENT_SERIES_WINDOW / 4)
                if self.stopped and not self.queue:
                    return
                ev = self.queue.popleft() if self.queue else None
            if time.monotonic() - self.last_expire > EVENT_SERIES_WINDOW / 4:
                self._expire()
            if ev is None:
                continue
            try:
                self._write(ev)
            finally:
                with self.cond:
                    self.pending -= 1
                    self.cond.notify_all()

    def _expire(self) -> None:
        now = self.last_expire = time.monotonic()
        for key, entry in list(self.cache.items()):
            if now - entry[1] > EVENT_SERIES_WINDOW:
                del self.cache[key]
            elif "series" in entry[0] and now - entry[2] > EVENT_SERIES_REFRESH:
                self._send_series(entry)

    def _write(self, ev: dict) -> None:
        key = json.dumps([ev.get(k) for k in ("action", "reason", "reportingController", "regarding", "note",
                                              "related")], sort_keys=True)
        now = time.monotonic()
        entry = self.cache.get(key)
        if entry is not None and now - entry[1] <= EVENT_SERIES_WINDOW:
            entry[1] = now
            series = entry[0].get("series")
            if series is not None:   # later repeats are counted and written with the next refresh
                series["count"] += 1
                series["lastObservedTime"] = micro_time(time.time())
                return
            entry[0]["series"] = {"count": 2, "lastObservedTime": micro_time(time.time())}
            self._send_series(entry)
            return
        self.cache[key] = [ev, now, now]
        try:
            self.cluster.post_event(f'/apis/events.k8s.io/v1/namespaces/{ev["metadata"]["namespace"]}/events', ev)
            self.written += 1
            self.cluster.connectivity.answered("events")
        except Exception as err:   # an event is not worth more than a line: this thread goes on
            self._failed(f"event {ev['reason']}", err)

    def _send_series(self, entry) -> None:
        ev = entry[0]
        entry[2] = time.monotonic()
        path = f'/apis/events.k8s.io/v1/namespaces/{ev["metadata"]["namespace"]}/events/{ev["metadata"]["name"]}'
        try:
            self.cluster.patch_event(path, {"series": ev["series"]})
            self.written += 1
            self.cluster.connectivity.answered("events")
        except Exception as err:
            self._failed(f"event series {ev['reason']}", err)

    def _failed(self, what: str, err: Exception) -> None:
        self.failed += 1
        if isinstance(err, ApiException):
            log.warning("%s not written: %s", what, error_text(err))
        else:   # the API server is away: one line for the outage
            self.cluster.connectivity.failed("events", err)


class KubeCluster:
    """A cluster reached through the Kubernetes API (see the module doc).

    ``api_client``: a kubernetes.client.ApiClient, or None to build one from ``kubeconfig`` (a file) or
    ``kubeconfig_dict`` (a loaded document, e.g. decrypted by the caller) with ``context``, or from the in-cluster
    service account. ``watch_failed_scheduling``: also follow the FailedScheduling Events (what observe mode
    explains; handlers get them as ``on_object_event("Event", ...)``). ``qps``/``burst``: client-side rate limit (KubeSchedulerConfiguration's
    clientConnection defaults, 50/100), one bucket for the scheduler's requests and one for its events.
    ``read_only``: every write raises (shadow mode). ``write_fence``: None, or a callable giving the seconds the
    caller may still write (a leader's ``LeaderElector.valid_for``): a write is refused when it gives 0, and its
    request is cut off when that time runs out. ``watch_timeout``: the server-side timeout of each watch
    request, randomized up to twice that (client-go's 5-10 minutes). ``backoff_initial``/``backoff_max``: the
    reconnect delays of a failing watch (doubling, with jitter). ``kube_version``: the version (a name, or the
    versions.Features of a run) whose kube-scheduler's informers to be, its WatchListClient gate saying whether
    they use watch-lists (None: the default version).
    """

    def __init__(self, api_client: kclient.ApiClient | None = None, *, kubeconfig: str | None = None,
                 kubeconfig_dict: dict | None = None, context: str | None = None, in_cluster: bool = False,
                 qps: float = 50.0, burst: int = 100,
                 read_only: bool = False, watch_timeout: float = 300.0, page_size: int = 500,
                 request_timeout: float = 30.0, backoff_initial: float = 0.8, backoff_max: float = 30.0,
                 reporting_instance: str | None = None, watch_failed_scheduling: bool = False,
                 kube_version=None):
        # a connection per watch (19 at most), per binding worker (16 by default), and a few for the rest
        self.api = api_client or make_api_client(kubeconfig, context, in_cluster, pool_size=40,
                                                 kubeconfig_dict=kubeconfig_dict)
        self.limiter = RateLimiter(qps, burst)
        self.event_limiter = RateLimiter(qps, burst)   # kube-scheduler's events have a client of their own
        self.read_only = read_only
        self.write_fence = None
        self.connectivity = _Connectivity()
        self.watch_timeout = watch_timeout
        self.page_size = page_size
        self.request_timeout = request_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.host = reporting_instance or socket.gethostname()
        self.objects = ClusterObjects()
        self.nodes = {}
        self.pods = {}
        self.stopping = threading.Event()
        self._lock = threading.RLock()
        self._queue = collections.deque()   # (seq, handler method, args)
        self._ready = threading.Condition(self._lock)
        self._seq = 0
        self._handlers = []                 # [handler, events after this seq are its]
        self.failed_scheduling = {}         # namespace/name -> a FailedScheduling Event (watch_failed_scheduling)
        self.watch_failed_scheduling = watch_failed_scheduling
        self.started = False
        self.follow_version(kube_version)
        self.events = _EventRecorder(self)

    def follow_version(self, kube_version) -> None:
        """Be the informers of ``kube_version`` (see the class doc); before ``start`` only (a real cluster's
        version is known once its /version is read)."""
        if self.started:
            raise RuntimeError("the informers are started: their version is set")
        self.features = versions.features(kube_version)
        watch_list = self.features.enabled("WatchListClient")
        self.informers = [_Informer(self, kind, path, selector, watch_list)
                          for kind, path, selector in self.features.version.informers]
        if self.watch_failed_scheduling:
            self.informers.append(_Informer(self, *FAILED_SCHEDULING_EVENTS, watch_list=watch_list))

    # -- requests ----------------------------------------------------------------------------------
    def request(self, method: str, path: str, query=None, body=None, content_type: str | None = None,
                stream: bool = False, timeout=None, limiter: RateLimiter | None = None):
        """One API call through the client's REST stack; JSON (or the raw response when ``stream``)."""
        (limiter or self.limiter).acquire()
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        resp = self.api.call_api(path, method, query_params=list(query or ()), header_params=headers, body=body,
                                 auth_settings=["BearerToken"], _preload_content=False,
                                 _request_timeout=timeout or self.request_timeout)
        if stream:
            return resp
        data = resp.data
        resp.release_conn()
        return json.loads(data) if data else None

    def get_json(self, path: str, query=None):
        return self.request("GET", path, query)

    def post_event(self, path: str, body: dict):
        return self.request("POST", path, body=body, limiter=self.event_limiter)

    def patch_event(self, path: str, body):
        return self.request("PATCH", path, body=body, content_type=MERGE, limiter=self.event_limiter)

    def _write(self, method: str, path: str, body=None, content_type: str | None = None):
        if self.read_only:
            raise ClusterError(f"read-only cluster source: refusing {method} {path}")
        timeout = None
        if self.write_fence is not None:
            timeout = self.write_fence()
            if timeout <= 0:
                raise ClusterError(f"not the leader (the lease was not renewed in time): refusing {method} {path}")
            timeout = min(self.request_timeout, timeout)
        return self.request(method, path, body=body, content_type=content_type, timeout=timeout)

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, wait: bool = False) -> None:
        """List every kind (what the server does not serve is skipped), then watch each in a thread. A list that
        fails raises, or with ``wait`` is retried with backoff until it succeeds or ``stop`` is called (as
        kube-scheduler waits for its caches to sync; an apiserver that is away or still loading its RBAC)."""
        if not self.started:
            for inf in self.informers:
                self._initial_list(inf, wait)
                if self.stopping.is_set():
                    return
            self.events.start()
            self.started = True
        self.stopping.clear()
        for inf in self.informers:
            if inf.available and (inf.thread is None or not inf.thread.is_alive()):
                inf.thread = threading.Thread(target=inf.run, name=f"watch-{inf.kind}", daemon=True)
                inf.thread.start()

    def _initial_list(self, inf: _Informer, wait: bool) -> None:
        backoff = self.backoff_initial
        while not self.stopping.is_set():
            try:
                inf.sync()
                self.connectivity.answered(f"list of {inf.kind}")
                return
            except ApiException as err:
                if err.status == 404:
                    inf.available = False
                    log.info("the server does not serve %s; not watching it", inf.kind)
                    return
                if not wait:
                    raise
                self.connectivity.failed(f"list of {inf.kind}", err)
            except (HTTPError, OSError) as err:
                if not wait:
                    raise
                self.connectivity.failed(f"list of {inf.kind}", err)
            self.stopping.wait(backoff * (1 + random.random()))
            backoff = min(backoff * 2, self.backoff_max)

    def stop(self, flush_events: bool = True) -> None:
        """Stop watching (``start`` resumes from the tracked resourceVersions); optionally wait for events."""
        self.stopping.set()
        for inf in self.informers:
            inf.interrupt()
        for inf in self.informers:
            if inf.thread is not None:
                inf.thread.join(5)
        if flush_events:
            self.events.flush()

    def close(self) -> None:
        self.stop()
        self.events.stop()
        self.api.close()

    # -- stores (watch threads write, the scheduler's thread reads) ------------------------------------
    def replace(self, kind: str, items: list) -> None:
        """A full list: adds and updates for what it holds, deletes for what it no longer holds."""
        with self._lock:
            namespaced = kind in NAMESPACED
            current = {_key(o, namespaced) for o in self._raw_items(kind)}
            seen = set()
            for obj in items:
                seen.add(_key(obj, namespaced))
                self.apply(kind, "ADDED", obj, relist=True)
            for key in current - seen:
                old = self._raw_get(kind, key)
                if old is not None:
                    self.apply(kind, "DELETED", old)

    def _raw_items(self, kind: str) -> list:
        if kind == "Pod":
            return [p.raw for p in self.pods.values()]
        if kind == "Node":
            return [n.raw for n in self.nodes.values()]
        if kind == "Namespace":
            return [{"metadata": {"name": n}} for n in self.objects.namespace_labels]
        if kind == "Event":
            return list(self.failed_scheduling.values())
        held = getattr(self.objects, OBJECT_KINDS[kind][0])
        return list(held.values()) if isinstance(held, dict) else list(held)

    def _raw_get(self, kind: str, key: str):
        return next((o for o in self._raw_items(kind) if _key(o, kind in NAMESPACED) == key), None)

    def apply(self, kind: str, type_: str, raw: dict, relist: bool = False) -> None:
        """Apply one watch event to the store and queue the handler call."""
        with self._lock:
            if kind in ("Pod", "Node"):
                self._apply_typed(kind, type_, raw, relist)
            else:
                self._apply_object(kind, type_, raw, relist)

    def _apply_typed(self, kind: str, type_: str, raw: dict, relist: bool) -> None:
        store, cls = (self.pods, Pod) if kind == "Pod" else (self.nodes, Node)
        key = _key(raw, kind == "Pod")
        old = store.get(key)
        if type_ == "DELETED":
            if old is not None:
                del store[key]
                self._enqueue(f"on_{kind.lower()}_delete", old)
            return
        if old is not None and relist and old.raw.get("metadata", {}).get("resourceVersion") == \
                raw.get("metadata", {}).get("resourceVersion"):
            return
        try:
            new = cls(raw)
        except ParseError as err:
            log.warning("%s %s cannot be parsed (%s); treated as absent", kind, key, err)
            if old is not None:
                del store[key]
                self._enqueue(f"on_{kind.lower()}_delete", old)
            return
        store[key] = new
        if old is None:
            self._enqueue(f"on_{kind.lower()}_add", new)
        else:
            self._enqueue(f"on_{kind.lower()}_update", old, new)

    def _apply_object(self, kind: str, type_: str, raw: dict, relist: bool) -> None:
        if kind == "Event":
            key = _key(raw, True)
            current = dict(self.failed_scheduling)
            old = current.pop(key, None) if type_ == "DELETED" else current.get(key)
            if type_ != "DELETED":
                current[key] = raw
            self.failed_scheduling = current
        else:
            old = store_object(self.objects, kind, raw, deleted=type_ == "DELETED")
        if type_ == "DELETED":
            if old is not None:
                self._enqueue("on_object_event", kind, "Delete", old, None)
        elif old is None:
            self._enqueue("on_object_event", kind, "Add", None, raw)
        elif not (relist and _unchanged(kind, old, raw)):
            self._enqueue("on_object_event", kind, "Update", old, raw)

    def _enqueue(self, method: str, *args) -> None:
        self._seq += 1
        self._queue.append((self._seq, method, args))
        self._ready.notify_all()

    # -- ClusterSource: reading and events -----------------------------------------------------------
    def subscribe(self, handler) -> None:
        """Register a handler and replay the state to it: nodes, bound pods, pending pods."""
        with self._lock:
            self._handlers.append([handler, self._seq])
            nodes = list(self.nodes.values())
            pods = list(self.pods.values())
        for node in nodes:
            handler.on_node_add(node)
        for pod in pods:
            if pod.node_name:
                handler.on_pod_add(pod)
        for pod in pods:
            if not pod.node_name:
                handler.on_pod_add(pod)

    def unsubscribe(self, handler) -> None:
        with self._lock:
            self._handlers = [h for h in self._handlers if h[0] is not handler]

    def pump(self, timeout: float = 0.0, limit: int | None = None) -> int:
        """Deliver queued changes to the handlers on this thread, waiting up to ``timeout`` for the first.
        Returns how many were delivered."""
        with self._lock:
            if not self._queue and timeout > 0:
                self._ready.wait(timeout)
            n = len(self._queue) if limit is None else min(limit, len(self._queue))
            batch = [self._queue.popleft() for _ in range(n)]
            handlers = [list(h) for h in self._handlers]
        for seq, method, args in batch:
            for handler, since in handlers:
                if seq > since:
                    getattr(handler, method)(*args)
        return len(batch)

    def in_sync(self) -> bool:
        """Whether every watch is connected: a scheduler acting on stores that missed changes (another leader's
        bindings during an outage) could try to bind a pod twice, so a leader waits for this first."""
        return not self.connectivity.watches_failing()

    def get_pod(self, namespace: str, name: str):
        return self.pods.get(f"{namespace}/{name}")

    def list_nodes(self) -> list:
        with self._lock:
            return list(self.nodes.values())

    def list_pods(self) -> list:
        with self._lock:
            return list(self.pods.values())

    def resource_versions(self) -> dict:
        """The last resourceVersion each watch has seen (for tests and status pages)."""
        return {inf.kind: inf.rv for inf in self.informers if inf.available}

    # -- ClusterSource: writes -------------------------------------------------------------------------
    def bind(self, pod, node_name: str) -> None:
        """POST pods/binding; a conflict (someone else bound it) raises ClusterError and nothing is retried."""
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        try:
            self._write("POST", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding", body)
        except ApiException as err:
            raise ClusterError(api_message(err)) from None
        except HTTPError as err:
            raise ClusterError(error_text(err)) from None

    def extender_bound(self, pod, node_name: str) -> None:
        """A binder extender posted the binding itself; the pod watch delivers it."""

    def _patch_status(self, pod, status: dict) -> None:
        self._write("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status", {"status": status},
                    STRATEGIC)

    def patch_pod_status(self, pod, condition: dict | None = None, nominated_node_name: str | None = None,
                         extended_resource_claim_status: dict | None = None) -> bool:
        """updatePod (and PatchPodStatus): a strategic merge patch of the condition, nominatedNodeName and/or
        extendedResourceClaimStatus, when they change."""
        status = {}
        if (extended_resource_claim_status is not None
                and extended_resource_claim_status != (pod.raw.get("status") or {}).get("extendedResourceClaimStatus")):
            status["extendedResourceClaimStatus"] = extended_resource_claim_status
        if condition is not None:
            conditions, changed = _set_condition(pod.conditions, condition, rfc3339(time.time()))
            if changed:
                status["conditions"] = [c for c in conditions if c.get("type") == condition["type"]]
        if nominated_node_name is not None and nominated_node_name != pod.nominated_node_name:
            status["nominatedNodeName"] = nominated_node_name or None
        if not status:
            return False
        try:
            self._patch_status(pod, status)
        except ApiException as err:
            raise ClusterError(api_message(err)) from None
        return True

    def clear_nomination(self, pod) -> None:
        """ClearNominatedNodeName (errors are logged, as kube does)."""
        if not pod.nominated_node_name:
            return
        try:
            self._patch_status(pod, {"nominatedNodeName": None})
        except (ApiException, ClusterError) as err:
            log.error("cannot clear the nominated node of %s: %s", pod.key, err)

    def evict(self, pod, preemptor_uid: str, node_name: str, scheduler_name: str = "default-scheduler"):
        """Preempt a victim: the DisruptionTarget condition, DELETE, then the Preempted event.

        Returns None, or the API error text; a victim already gone is not an error."""
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                     "message": f"{scheduler_name}: preempting to accommodate a higher priority pod"}
        conditions, changed = _set_condition(pod.conditions, condition, rfc3339(time.time()))
        try:
            if changed:
                self._patch_status(pod, {"conditions": [c for c in conditions if c["type"] == "DisruptionTarget"]})
            self._write("DELETE", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}", {})
        except ApiException as err:
            if err.status == 404:
                return None
            return api_message(err)
        except ClusterError as err:
            return str(err)
        except HTTPError as err:
            return error_text(err)
        preemptor = next((p for p in self.list_pods() if p.uid == preemptor_uid), None)
        self.record_event(pod, "Normal", "Preempted", "Preempting",
                          f"Preempted by pod {preemptor_uid} on node {node_name}", related=preemptor,
                          controller=scheduler_name)
        return None

    def _objects_path(self, kind: str, namespace: str) -> str:
        """The list path of a kind the informers follow, in ``namespace`` when the kind is namespaced."""
        base = next(inf.path for inf in self.informers if inf.kind == kind)
        if kind in NAMESPACED:
            head, _, resource = base.rpartition("/")
            base = f'{head}/namespaces/{namespace or "default"}/{resource}'
        return base

    def _object_path(self, kind: str, raw: dict) -> str:
        meta = raw.get("metadata") or {}
        return f'{self._objects_path(kind, meta.get("namespace"))}/{meta["name"]}'

    def create_object(self, kind: str, raw: dict) -> dict:
        """POST an object (the server names it from ``metadata.generateName``); returns the stored object."""
        try:
            return self._write("POST", self._objects_path(kind, (raw.get("metadata") or {}).get("namespace")), raw)
        except ApiException as err:
            raise ClusterError(api_message(err), err.status) from None

    def read_object(self, kind: str, key: str) -> dict:
        """GET an object from the server by namespace/name (name if cluster-scoped), not the informer's copy."""
        namespace, _, name = key.rpartition("/")
        try:
            return self.request("GET", f"{self._objects_path(kind, namespace)}/{name}")
        except ApiException as err:
            raise ClusterError(api_message(err), err.status) from None

    def update_object(self, kind: str, raw: dict) -> dict:
        """PUT an object (its metadata and spec; the server keeps the status); a stale resourceVersion is a
        conflict (ClusterError 409). Returns the stored object."""
        try:
            return self._write("PUT", self._object_path(kind, raw), raw)
        except ApiException as err:
            raise ClusterError(api_message(err), err.status) from None

    def update_status(self, kind: str, raw: dict) -> dict:
        """PUT the status subresource of an object; returns the stored object."""
        try:
            return self._write("PUT", f"{self._object_path(kind, raw)}/status", raw)
        except ApiException as err:
            raise ClusterError(api_message(err), err.status) from None

    def delete_object(self, kind: str, raw: dict) -> None:
        """DELETE an object (an extended-resource claim kube made for a pod that did not get its node)."""
        try:
            self._write("DELETE", self._object_path(kind, raw), {})
        except ApiException as err:
            raise ClusterError(api_message(err), err.status) from None

    def get_object(self, kind: str, key: str):
        """The informer's copy of an object by namespace/name (name if cluster-scoped), or None."""
        with self._lock:
            return self._raw_get(kind, key)

    def update_pv(self, pv: dict) -> dict:
        """PUT a PersistentVolume (VolumeBinding's PreBind); returns the stored object."""
        return self.update_object("PersistentVolume", pv)

    def update_pvc(self, pvc: dict) -> dict:
        """PUT a PersistentVolumeClaim (VolumeBinding's PreBind); returns the stored object."""
        return self.update_object("PersistentVolumeClaim", pvc)

    def record_event(self, obj, event_type: str, reason: str, action: str, message: str, related=None,
                     controller: str | None = None) -> None:
        """An events.k8s.io/v1 Event as client-go's recorder builds it, written in the background."""
        if self.read_only:
            return
        now = time.time()
        controller = controller or getattr(obj, "scheduler_name", "") or "default-scheduler"
        regarding = _reference(obj)
        ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
              "metadata": {"name": f"{regarding['name']}.{int(now * 1e9):x}",
                           "namespace": regarding.get("namespace") or "default"},
              "eventTime": micro_time(now), "reportingController": controller,
              "reportingInstance": f"{controller}-{self.host}", "action": action, "reason": reason,
              "regarding": regarding, "note": message, "type": event_type}
        if related is not None:
            ev["related"] = _reference(related)
        self.events.record(ev)


def _unchanged(kind: str, held: dict, listed: dict) -> bool:
    """Whether a listed object is the one the store holds (a sync is then no event): the same resourceVersion, or
    for a namespace (whose labels alone are held) the same labels."""
    if kind == "Namespace":
        labels = dict((listed.get("metadata") or {}).get("labels") or {})
        labels.setdefault("kubernetes.io/metadata.name", held["metadata"]["name"])
        return held["metadata"]["labels"] == labels
    return (held.get("metadata") or {}).get("resourceVersion") == (listed.get("metadata") or {}).get("resourceVersion")


def _reference(obj) -> dict:
    """reference.GetReference of a Pod or Node."""
    raw = getattr(obj, "raw", None) or {}
    meta = raw.get("metadata") or {}
    ref = {"kind": type(obj).__name__, "apiVersion": "v1", "name": meta.get("name", getattr(obj, "name", ""))}
    if isinstance(obj, Pod):
        ref["namespace"] = obj.namespace
    if meta.get("uid"):
        ref["uid"] = meta["uid"]
    if meta.get("resourceVersion"):
        ref["resourceVersion"] = meta["resourceVersion"]
    return ref
