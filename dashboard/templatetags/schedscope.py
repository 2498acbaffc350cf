"""Formatting filters for the pages."""
from django import template

register = template.Library()
# Shown for an amount too large for a float: rows stored before quantities were bounded (e.g. cpu "1e309").
TOO_LARGE = "(too large)"


@register.filter
def cores(milli):
    """Millicores as cores (1500 -> 1.5)."""
    try:
        v = int(milli) / 1000
    except (TypeError, ValueError):
        return ""
    except OverflowError:
        return TOO_LARGE
    return f"{v:g}"


@register.filter
def gib(n):
    """Bytes as GiB with one decimal."""
    try:
        return f"{int(n) / 2**30:.1f}"
    except (TypeError, ValueError):
        return ""
    except OverflowError:
        return TOO_LARGE


@register.filter
def ms(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return ""
    return f"{v:.2f}" if v < 10 else f"{v:.0f}"


@register.filter
def get(d, key):
    return d.get(key) if hasattr(d, "get") else None


@register.filter
def level(pct):
    """A utilisation class: low, mid, high."""
    pct = pct or 0
    return "high" if pct >= 90 else "mid" if pct >= 60 else "low"


@register.filter
def get_index(seq, i):
    try:
        return seq[i]
    except (IndexError, TypeError, KeyError):
        return ""


@register.filter
def make_list_words(text):
    """"a b c" -> ["a", "b", "c"] (for small fixed option lists in templates)."""
    return str(text).split()


@register.simple_tag
def last_cycle(cluster):
    """The cluster's latest recorded cycle seq (0 if none): live.js compares it with the websocket's hello to
    catch cycles committed between rendering the page and joining the live stream."""
    from ..models import SchedulingCycle
    return SchedulingCycle.objects.filter(cluster=cluster).order_by("-seq").values_list("seq", flat=True).first() or 0
