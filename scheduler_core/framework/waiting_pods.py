"""Pods held by Permit plugins (framework/runtime/waiting_pods_map.go), driven by a clock instead of timers."""
from __future__ import annotations

from ..clock import format_go_duration
from .status import Code, Status


class WaitingPod:
    """An assumed pod that Permit plugins asked to wait for; ``allow``/``reject`` come from plugins.

    ``on_done(status)`` is called once: with None when every waiting plugin allowed, or with an
    Unschedulable status (rejection, timeout, removal, preemption at 1.30), or an Error status (preemption at
    1.36).
    """

    def __init__(self, pod, plugin_timeouts: dict, now: float, on_done):
        self.pod = pod
        self._deadlines = {name: now + timeout for name, timeout in plugin_timeouts.items()}
        self._timeouts = dict(plugin_timeouts)
        self._on_done = on_done
        self.status = None
        self.done = False

    def get_pod(self):
        return self.pod

    def get_pending_plugins(self) -> list:
        return list(self._deadlines)

    def allow(self, plugin: str) -> None:
        self._deadlines.pop(plugin, None)
        if not self._deadlines:
            self._finish(None)

    def reject(self, plugin: str, msg: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, msg, plugin=plugin))

    def preempt(self, plugin: str, msg: str) -> None:
        """1.36's Preempt: stopped with an Error status."""
        self._finish(Status(Code.ERROR, msg, plugin=plugin))

    def expire(self, now: float) -> bool:
        """Reject on behalf of the first plugin whose timeout has passed; True if that happened."""
        for name, deadline in self._deadlines.items():
            if now >= deadline:
                self.reject(name, f"rejected due to timeout after waiting "
                                  f"{format_go_duration(self._timeouts[name])} at plugin {name}")
                return True
        return False

    def next_deadline(self):
        return min(self._deadlines.values()) if self._deadlines and not self.done else None

    def _finish(self, status) -> None:
        if self.done:
            return
        self.done = True
        self.status = status
        self._deadlines.clear()
        self._on_done(status)


class WaitingPodsMap:
    """uid -> WaitingPod for one profile."""

    def __init__(self):
        self._pods = {}

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.pod.uid] = wp

    def remove(self, uid) -> None:
        self._pods.pop(uid, None)

    def get(self, uid):
        return self._pods.get(uid)

    def iterate(self, fn) -> None:
        for wp in list(self._pods.values()):
            fn(wp)

    def __len__(self):
        return len(self._pods)

    def values(self) -> list:
        return list(self._pods.values())
