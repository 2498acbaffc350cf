"""Clocks for the queue, the cache and Permit timeouts: the wall clock, or a fake one tests and replays drive."""
from __future__ import annotations

import time


class Clock:
    """The wall clock (seconds since the epoch, as a float)."""

    def now(self) -> float:
        return time.time()


class FakeClock(Clock):
    """A clock that only moves when told to (``advance`` / ``set``)."""

    def __init__(self, start: float = 0.0):
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def set(self, t: float) -> None:
        self._now = float(t)


def format_go_duration(seconds: float) -> str:
    """time.Duration.String(): ``10s``, ``1m30s``, ``1.5s``, ``250ms``, ``0s``."""
    ns = int(round(seconds * 1e9))
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns / size) + unit
    hours, rem = divmod(ns, 3600 * 1_000_000_000)
    minutes, rem = divmod(rem, 60 * 1_000_000_000)
    secs = _trim(rem / 1e9)
    out = f"{hours}h{minutes}m{secs}s" if hours else (f"{minutes}m{secs}s" if minutes else f"{secs}s")
    return sign + out


def _trim(x: float) -> str:
    text = f"{x:.9f}".rstrip("0").rstrip(".")
    return text or "0"
