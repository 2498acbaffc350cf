"""Go time.Duration: ParseDuration and String, in integer nanoseconds."""
from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
_UNITS = {"ns": NANOSECOND, "us": MICROSECOND, "\u00b5s": MICROSECOND, "\u03bcs": MICROSECOND,
          "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR}
_MAX = 1 << 63


class DurationError(ValueError):
    """time.ParseDuration's error, with Go's text."""


def _quote(s: str) -> str:
    return '"' + s + '"'


def parse_duration(text: str) -> int:
    """time.ParseDuration: "1h30m", "1.5s", "-300ms", "0" -> nanoseconds; DurationError with Go's text."""
    orig, s, neg, total = text, text, False, 0
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise DurationError("time: invalid duration " + _quote(orig))
    while s:
        if not (s[0] == "." or s[0].isascii() and s[0].isdigit()):
            raise DurationError("time: invalid duration " + _quote(orig))
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        pre, whole, s = i > 0, int(s[:i] or "0"), s[i:]
        if whole >= _MAX:
            raise DurationError("time: invalid duration " + _quote(orig))
        frac, scale, post = 0, 1, False
        if s and s[0] == ".":
            s = s[1:]
            i = 0
            while i < len(s) and "0" <= s[i] <= "9":
                if frac * 10 + int(s[i]) < _MAX and scale < _MAX // 10:
                    frac, scale = frac * 10 + int(s[i]), scale * 10
                i += 1
            post, s = i > 0, s[i:]
        if not pre and not post:
            raise DurationError("time: invalid duration " + _quote(orig))
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError("time: missing unit in duration " + _quote(orig))
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise DurationError("time: unknown unit " + _quote(unit_text) + " in duration " + _quote(orig))
        if whole > _MAX // unit:
            raise DurationError("time: invalid duration " + _quote(orig))
        v = whole * unit
        if frac:
            v += int(frac * (unit / scale))
            if v > _MAX:
                raise DurationError("time: invalid duration " + _quote(orig))
        total += v
        if total > _MAX:
            raise DurationError("time: invalid duration " + _quote(orig))
    if neg:
        return -total
    if total > _MAX - 1:
        raise DurationError("time: invalid duration " + _quote(orig))
    return total


def _frac(v: int, prec: int):
    """fmtFrac: the fraction digits of v (trailing zeros dropped) and v without them."""
    digits = f"{v % 10 ** prec:0{prec}d}".rstrip("0")
    return ("." + digits if digits else ""), v // 10 ** prec


def format_duration(ns: int) -> str:
    """Duration.String(): "0s", "1.5s", "2m0s", "1h0m0s", "500ms", "1µs"."""
    neg, u = ns < 0, abs(ns)
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            text = f"{u}ns"
        else:
            prec, unit = (3, "\u00b5s") if u < MILLISECOND else (6, "ms")
            frac, whole = _frac(u, prec)
            text = f"{whole}{frac}{unit}"
    else:
        frac, secs = _frac(u, 9)
        text = f"{secs % 60}{frac}s"
        mins = secs // 60
        if mins:
            text = f"{mins % 60}m" + text
            hours = mins // 60
            if hours:
                text = f"{hours}h" + text
    return "-" + text if neg else text
