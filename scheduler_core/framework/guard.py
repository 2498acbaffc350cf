"""Guarded calls into out-of-tree plugins.

An out-of-tree plugin class is registered as a proxy class (``guard_class``) that derives from the same
extension-point interfaces. Each call goes through the proxy: an exception, a result of the wrong shape,
or a call longer than the time budget becomes an Error status, which the runtime then wraps as kube does
(``running "X" filter plugin: <err>``, ...). In-tree plugins are never wrapped and pay nothing.

Python cannot interrupt a running call. With a budget, calls run on a worker thread (one per scheduling
thread) and the scheduler stops waiting once the budget is spent: the worker is abandoned (the call
finishes in the background, and may still touch the plugin's own state) and a fresh one serves the next call.
"""
from __future__ import annotations

import json
import logging
import operator
import queue
import threading
import weakref

from .interface import EXTENSION_POINTS, POINT_INTERFACES, Plugin, extension_points_of
from .profile import FrameworkError
from .status import Code, Status

DEFAULT_CALL_TIMEOUT = 1.0

log = logging.getLogger(__name__)
_local = threading.local()


class PluginCallError(Exception):
    """An out-of-tree plugin call that failed; the text is the error the runtime wraps."""


def _serve(jobs, results):
    while True:
        job = jobs.get()
        if job is None:
            return
        fn, args = job
        try:
            results.put((True, fn(*args)))
        except BaseException as exc:  # reported to the waiting caller, whatever it is
            results.put((False, exc))


class _Worker:
    """A daemon thread that runs calls for one scheduling thread; it exits once the worker is dropped."""

    __slots__ = ("jobs", "results", "__weakref__")

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        self.results = queue.SimpleQueue()
        threading.Thread(target=_serve, args=(self.jobs, self.results), daemon=True,
                         name="out-of-tree-plugin-call").start()
        weakref.finalize(self, self.jobs.put, None)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def call_with_budget(point: str, fn, args, budget):
    """Run ``fn(*args)``; raise PluginCallError when it raises or runs longer than ``budget`` seconds.

    A falsy budget calls inline (exceptions are still turned into PluginCallError).
    """
    if not budget:
        try:
            return fn(*args)
        except Exception as exc:
            raise PluginCallError(_describe(exc)) from exc
    worker = getattr(_local, "worker", None)
    if worker is None:
        worker = _local.worker = _Worker()
    worker.jobs.put((fn, args))
    try:
        ok, value = worker.results.get(timeout=budget)
    except queue.Empty:
        _local.worker = None  # abandoned: it stops after the call it is stuck in
        raise PluginCallError(f"{point} call exceeded the {budget:g}s time budget of out-of-tree plugins") from None
    if ok:
        return value
    raise PluginCallError(_describe(value)) from value


def _as_status(point: str, st):
    if st is None or isinstance(st, Status):
        return st
    return Status.error(f"{point} returned {st!r}, want a Status or None")


def _pair(point: str, result):
    """Unpack a 2-tuple result or raise PluginCallError."""
    try:
        a, b = result
    except (TypeError, ValueError):
        raise PluginCallError(f"{point} returned {result!r}, want a pair") from None
    return a, b


class GuardedPlugin(Plugin):
    """Proxy for one out-of-tree plugin instance (``plugin``). Subclasses made by ``guard_class`` add
    the interfaces the plugin class implements; ``name``, ``plugin_class``, ``origin`` and
    ``call_timeout`` are set there."""

    plugin_class = None
    origin = ""
    call_timeout = DEFAULT_CALL_TIMEOUT

    def __init__(self, plugin):
        self.plugin = plugin
        self._pre_filter_ext = None
        self._score_ext = None
        self._placement_score_ext = None
        points = extension_points_of(type(plugin))
        if "PreFilter" in points:
            self._pre_filter_ext = plugin.pre_filter_extensions()
        if "Score" in points:
            self._score_ext = plugin.score_extensions()
            if getattr(plugin, "score_nodes", None) is not None:
                self.score_nodes = self._score_nodes
        if "PlacementScore" in points:
            self._placement_score_ext = plugin.placement_score_extensions()

    @classmethod
    def new(cls, args, handle):
        try:
            plugin = cls.plugin_class.new(args, handle)
            return cls(plugin)
        except FrameworkError:
            raise
        except Exception as exc:
            raise FrameworkError(_describe(exc)) from exc

    def _call(self, point, fn, *args):
        return call_with_budget(point, fn, args, self.call_timeout)

    def _status_call(self, point, fn, *args):
        try:
            st = call_with_budget(point, fn, args, self.call_timeout)
        except PluginCallError as err:
            return Status.error(str(err))
        return _as_status(point, st)

    def _quiet_call(self, point, fn, *args):
        """For extension points whose failures kube ignores (Unreserve, PostBind): log and go on."""
        try:
            call_with_budget(point, fn, args, self.call_timeout)
        except PluginCallError as err:
            log.warning('%s of out-of-tree plugin "%s" failed: %s', point, self.name, err)

    def events_to_register(self):
        return self.plugin.events_to_register()

    def less(self, a, b) -> bool:
        return self.plugin.less(a, b)

    def pre_enqueue(self, pod):
        return self._status_call("PreEnqueue", self.plugin.pre_enqueue, pod)

    def pre_filter(self, state, pod):
        try:
            res, st = _pair("PreFilter", self._call("PreFilter", self.plugin.pre_filter, state, pod))
        except PluginCallError as err:
            return None, Status.error(str(err))
        return res, _as_status("PreFilter", st)

    def pre_filter_extensions(self):
        return self if self._pre_filter_ext is not None else None

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        return self._status_call("AddPod", self._pre_filter_ext.add_pod, state, pod_to_schedule, pod_to_add,
                                 node_info)

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        return self._status_call("RemovePod", self._pre_filter_ext.remove_pod, state, pod_to_schedule,
                                 pod_to_remove, node_info)

    def filter(self, state, pod, node_info):
        return self._status_call("Filter", self.plugin.filter, state, pod, node_info)

    def post_filter(self, state, pod, node_statuses):
        try:
            res, st = _pair("PostFilter", self._call("PostFilter", self.plugin.post_filter, state, pod,
                                                     node_statuses))
        except PluginCallError as err:
            return None, Status.error(str(err))
        return res, _as_status("PostFilter", st)

    def pre_score(self, state, pod, node_infos):
        return self._status_call("PreScore", self.plugin.pre_score, state, pod, node_infos)

    def score(self, state, pod, node_info):
        try:
            s, st = _pair("Score", self._call("Score", self.plugin.score, state, pod, node_info))
            st = _as_status("Score", st)
            if st is None or st.code == Code.SUCCESS:
                s = _int_score(s)
        except PluginCallError as err:
            return 0, Status.error(str(err))
        return s, st

    def _score_nodes(self, state, pod, node_infos):
        try:
            raw, st = _pair("Score", self._call("Score", self.plugin.score_nodes, state, pod, node_infos))
            st = _as_status("Score", st)
            if st is None or st.code == Code.SUCCESS:
                raw = [_int_score(s) for s in raw]
                if len(raw) != len(node_infos):
                    raise PluginCallError(f"Score returned {len(raw)} scores for {len(node_infos)} nodes")
        except PluginCallError as err:
            return None, Status.error(str(err))
        return raw, st

    def score_extensions(self):
        return self if self._score_ext is not None else None

    def normalize_score(self, state, pod, scores):
        return _scores_as_ints(
            self._status_call("NormalizeScore", self._score_ext.normalize_score, state, pod, scores), scores)

    def reserve(self, state, pod, node_name):
        return self._status_call("Reserve", self.plugin.reserve, state, pod, node_name)

    def unreserve(self, state, pod, node_name):
        self._quiet_call("Unreserve", self.plugin.unreserve, state, pod, node_name)

    def permit(self, state, pod, node_name):
        try:
            st, timeout = _pair("Permit", self._call("Permit", self.plugin.permit, state, pod, node_name))
        except PluginCallError as err:
            return Status.error(str(err)), 0
        return _as_status("Permit", st), timeout

    def pre_bind(self, state, pod, node_name):
        return self._status_call("PreBind", self.plugin.pre_bind, state, pod, node_name)

    def guarded_sign_pod(self, pod):
        """SignPod of a plugin that signs: ([(key, value)], status); a failed call leaves the pod unsigned."""
        try:
            fragments, st = _pair("SignPod", self._call("SignPod", self.plugin.sign_pod, pod))
            fragments = [_pair("SignPod fragment", f) for f in fragments or ()]
            for key, value in fragments:
                if not isinstance(key, str):
                    raise PluginCallError(f"SignPod fragment key {key!r} is not a string")
                json.dumps(value)
        except PluginCallError as err:
            return [], Status.error(str(err))
        except (TypeError, ValueError) as err:
            return [], Status.error(f"SignPod fragment is not JSON: {err}")
        return fragments, _as_status("SignPod", st)

    def pre_bind_pre_flight(self, state, pod, node_name):
        return self._status_call("PreBindPreFlight", self.plugin.pre_bind_pre_flight, state, pod, node_name)

    def bind(self, state, pod, node_name):
        return self._status_call("Bind", self.plugin.bind, state, pod, node_name)

    def post_bind(self, state, pod, node_name):
        self._quiet_call("PostBind", self.plugin.post_bind, state, pod, node_name)

    def generate_placements(self, state, pod_group, parent):
        try:
            res, st = _pair("PlacementGenerate", self._call("PlacementGenerate", self.plugin.generate_placements,
                                                            state, pod_group, parent))
        except PluginCallError as err:
            return None, Status.error(str(err))
        return res, _as_status("PlacementGenerate", st)

    def score_placement(self, state, pod_group, assignments):
        try:
            s, st = _pair("PlacementScore", self._call("PlacementScore", self.plugin.score_placement, state,
                                                       pod_group, assignments))
            st = _as_status("PlacementScore", st)
            if st is None or st.code == Code.SUCCESS:
                s = _int_score(s)
        except PluginCallError as err:
            return 0, Status.error(str(err))
        return s, st

    def placement_score_extensions(self):
        return self if self._placement_score_ext is not None else None

    def normalize_placement_score(self, state, pod_group, scores):
        return _scores_as_ints(self._status_call("NormalizePlacementScore",
                                                 self._placement_score_ext.normalize_placement_score,
                                                 state, pod_group, scores), scores)


def _scores_as_ints(st, scores):
    """After a successful NormalizeScore: every [node, score] pair's score checked to be an int (an error status
    otherwise); the plugin's status as it was."""
    if st is None or st.code == Code.SUCCESS:
        try:
            for pair in scores:
                pair[1] = _int_score(pair[1])
        except PluginCallError as err:
            return Status.error(str(err))
    return st


def _int_score(s) -> int:
    if isinstance(s, bool):
        raise PluginCallError(f"score {s!r} is not an integer")
    try:
        return operator.index(s)
    except TypeError:
        raise PluginCallError(f"score {s!r} is not an integer") from None


def guard_class(name: str, plugin_class, origin: str = "", call_timeout=DEFAULT_CALL_TIMEOUT):
    """A registry entry for an out-of-tree plugin class: a GuardedPlugin subclass implementing the same
    extension points. ``call_timeout`` is the budget per call in seconds (falsy: no budget)."""
    points = extension_points_of(plugin_class)
    bases = (GuardedPlugin,) + tuple(POINT_INTERFACES[p] for p in EXTENSION_POINTS if p in points)
    attrs = {"name": name, "plugin_class": plugin_class, "origin": origin, "call_timeout": call_timeout,
             "__module__": __name__, "__doc__": f"Out-of-tree plugin {name} ({origin})."}
    if getattr(plugin_class, "sign_pod", None) is not None:
        attrs["sign_pod"] = GuardedPlugin.guarded_sign_pod   # a SignPlugin (OpportunisticBatching)
    return type(f"OutOfTree{plugin_class.__name__}", bases, attrs)
