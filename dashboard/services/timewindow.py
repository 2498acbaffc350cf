"""Time windows of the event timeline: ``window`` as people and the page's zoom write it ("15m", "90s", "1h",
"7d"; a bare number is minutes, as the page's menu sends it), the window's end, and the bucket width that
gives the histogram about a hundred bars whatever the window."""
from __future__ import annotations

import re
from datetime import datetime, timedelta

MIN_SECONDS = 1
MAX_SECONDS = 10 * 366 * 24 * 3600   # ten years
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
WINDOW_RE = re.compile(r"([0-9]{1,12})([smhd]?)")
# Bucket widths in seconds, smallest first; the histogram uses the smallest that keeps it at MAX_BUCKETS bars.
BUCKETS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
           2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 182 * 86400, 364 * 86400)
MAX_BUCKETS = 120
# The page's menu: (value, label)
CHOICES = (("15m", "15 min"), ("1h", "1 h"), ("6h", "6 h"), ("1d", "1 day"), ("7d", "7 days"))
DEFAULT = timedelta(hours=1)
# A young cluster's default: the first of these that holds its history, so its events do not sit at the right edge
YOUNG = (timedelta(minutes=5), timedelta(minutes=15))


def default_window(oldest: datetime | None, now: datetime) -> timedelta:
    """The window a page opens with: DEFAULT, or the first of YOUNG that holds everything since ``oldest`` (the
    cluster's first event)."""
    if oldest is not None:
        for window in YOUNG:
            if now - oldest <= window * 0.9:
                return window
    return DEFAULT


def parse_window(text: str) -> timedelta:
    """"90s", "15m", "1h", "7d" (or "15": minutes) -> timedelta; ValueError says what is accepted."""
    m = WINDOW_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f'"{text}" is not a window: a whole number with s, m, h or d ("90s", "15m", "1h", "7d"; '
                         "a bare number is minutes)")
    seconds = int(m.group(1)) * UNITS[m.group(2) or "m"]
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise ValueError(f'"{text}" is outside 1 second to 10 years')
    return timedelta(seconds=seconds)


def format_window(window: timedelta) -> str:
    """The shortest text ``parse_window`` reads back as ``window`` (whole seconds): 3600 s -> "1h"."""
    seconds = max(MIN_SECONDS, round(window.total_seconds()))
    for unit in ("d", "h", "m"):
        if seconds % UNITS[unit] == 0:
            return f"{seconds // UNITS[unit]}{unit}"
    return f"{seconds}s"


def bounds(window: timedelta, until: datetime | None, now: datetime) -> tuple[datetime, datetime]:
    """(start, end) of a window ending at ``until`` (None: now); ValueError if it would start before year 1."""
    end = until or now
    try:
        return end - window, end
    except OverflowError:
        raise ValueError(f"a window of {format_window(window)} before {end:%Y-%m-%d} starts before year 1") from None


def bucket_seconds(window: timedelta) -> int:
    """The histogram's bucket width for ``window``: the smallest in BUCKETS giving at most MAX_BUCKETS bars."""
    total = window.total_seconds()
    for width in BUCKETS:
        if total / width <= MAX_BUCKETS:
            return width
    return BUCKETS[-1]
