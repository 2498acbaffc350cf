"""Formatting filters for the pages."""
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html

from ..k8sapi.tables import human_duration
from ..services import kubeversions

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
def span(first, last):
    """The time from ``first`` to ``last`` as kubectl writes durations ("23s", "25m", "3h10m")."""
    if not first or not last:
        return ""
    return human_duration(max((last - first).total_seconds(), 0))


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


CLOCK_FORMATS = {"time": "%H:%M:%S", "date": "%Y-%m-%d %H:%M:%S"}


@register.filter
def clock(value, style="time"):
    """A moment as every page shows one: ``<time>`` with ISO 8601 in ``datetime`` and ``title`` and, as text,
    24-hour time with seconds ("07:50:54"; style "date": "2024-05-01 07:50:54"), here in the server's zone;
    static/dashboard/clock.js rewrites it in the browser's zone, as it writes live rows' times."""
    if not isinstance(value, datetime):
        return ""
    iso = value.isoformat(timespec="milliseconds")
    text = timezone.localtime(value).strftime(CLOCK_FORMATS[style]) if timezone.is_aware(value) else \
        value.strftime(CLOCK_FORMATS[style])
    return format_html('<time class="clock" datetime="{}" title="{}" data-clock="{}">{}</time>', iso, iso, style, text)


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


@register.simple_tag(takes_context=True)
def last_cycle(context, cluster):
    """The cluster's latest recorded cycle seq (0 if none): live.js compares it with the websocket's hello to
    catch cycles committed between rendering the page and joining the live stream. A page that read its data in
    one snapshot gives the seq it saw as ``last_cycle_seq``."""
    if context.get("last_cycle_seq") is not None:
        return context["last_cycle_seq"]
    from ..services.queries import latest_cycle_seq
    return latest_cycle_seq(cluster) or 0


@register.filter
def kube_version(cluster) -> str:
    """The Kubernetes version whose rules the cluster's scheduler runs ("1.36")."""
    return kubeversions.cluster_version(cluster)
