"""The query parameters of the cluster pages, one form per page: every value is checked here (ranges that the
database and Python's datetime can hold, known choices, no NUL characters), so a bad one answers 400 with the
form's messages instead of failing deeper down. Views get the cleaned values through ``query_form``."""
from __future__ import annotations

from functools import wraps

from django import forms
from django.shortcuts import render

from scheduler_core.documents import DepthError, load_json

from .services import timeline, timewindow
from .services.queries import PENDING_QUEUES, SORTS
from .services.traceview import FILTER_SHOWS, FILTER_SORTS

INT32 = (-(1 << 31), (1 << 31) - 1)
INT64_MAX = (1 << 63) - 1
YEAR_SECONDS = 366 * 24 * 3600
MAX_AGE_SECONDS = 10 * YEAR_SECONDS             # the pending page's "older than"


def _choice(values) -> forms.ChoiceField:
    return forms.ChoiceField(choices=[("", "")] + [(v, v) for v in values], required=False)


def _text() -> forms.CharField:
    return forms.CharField(required=False, max_length=1000)


def _page() -> forms.IntegerField:
    """A page number (past the last page: the last page)."""
    return forms.IntegerField(required=False, min_value=1, max_value=INT64_MAX)


def parse_labels(text: str) -> dict:
    """"app=web,tier=db" -> {"app": "web", "tier": "db"}; ValidationError for an item that is not ``key=value``."""
    out = {}
    for item in text.split(","):
        key, eq, value = item.strip().partition("=")
        if not (eq and key.strip()):
            raise forms.ValidationError(f'"{item.strip()}" is not key=value (items are separated by commas)')
        out[key.strip()] = value.strip()
    return out


def parse_group(text: str) -> list:
    """'[["NodeResourcesFit", "Insufficient cpu"]]' -> [("NodeResourcesFit", "Insufficient cpu")]; ValidationError
    for anything but a JSON list of [plugin, reason] string pairs."""
    try:
        value = load_json(text)
    except DepthError as err:
        raise forms.ValidationError(str(err)) from None
    except ValueError:
        raise forms.ValidationError("not JSON: a list of [plugin, reason] pairs") from None
    if not (isinstance(value, list) and value and all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and "\x00" not in s for s in pair)
            for pair in value)):
        raise forms.ValidationError("a non-empty list of [plugin, reason] pairs of strings (without NUL)")
    return [tuple(pair) for pair in value]


class QueryForm(forms.Form):
    def values(self) -> dict:
        """The cleaned values that were given (absent and empty ones left out)."""
        return {k: v for k, v in self.cleaned_data.items() if v not in (None, "", {})}


class PendingQuery(QueryForm):
    q = _text()
    namespace = _text()
    labels = _text()
    attempts = forms.IntegerField(required=False, min_value=0, max_value=INT32[1])
    priority = forms.IntegerField(required=False, min_value=INT32[0], max_value=INT32[1])
    age = forms.IntegerField(required=False, min_value=0, max_value=MAX_AGE_SECONDS,
                             help_text="older than this many seconds")
    queue = _choice(PENDING_QUEUES)
    plugin = _text()
    reason = _text()
    group = forms.CharField(required=False, max_length=10000,
                            help_text='a group of the list: JSON [["plugin", "reason"], ...]')
    sort = _choice(SORTS)
    page = _page()

    def clean_labels(self):
        text = self.cleaned_data["labels"]
        return parse_labels(text) if text.strip() else {}

    def clean_group(self):
        text = self.cleaned_data["group"]
        return parse_group(text) if text.strip() else None


class WindowField(forms.CharField):
    """A time window as services.timewindow reads it ("90s", "15m", "1h", "7d"; a bare number is minutes)."""

    def __init__(self, **kw):
        super().__init__(required=False, help_text='"90s", "15m", "1h", "7d" (a bare number: minutes)',
                         **kw)

    def to_python(self, value):
        text = super().to_python(value)
        if not text:
            return None
        try:
            return timewindow.parse_window(text)
        except ValueError as err:
            raise forms.ValidationError(str(err)) from None


class EventsQuery(QueryForm):
    pod = _text()
    node = _text()
    namespace = _text()
    reason = _text()
    window = WindowField()
    until = forms.DateTimeField(required=False, help_text="the window's end (ISO 8601, UTC unless it says)")
    lanes = forms.IntegerField(required=False, min_value=1, max_value=timeline.MAX_LANES,
                               help_text="pods in the swimlanes")
    page = _page()

    def clean(self):
        data = super().clean()
        if data.get("until") is not None:
            try:
                timewindow.bounds(data.get("window") or timewindow.DEFAULT, data["until"], data["until"])
            except ValueError as err:
                self.add_error("until", str(err))
        return data


class NodesQuery(QueryForm):
    q = _text()
    sort = _choice(("util", "name"))
    page = _page()


class ShadowQuery(QueryForm):
    page = _page()


class PodQuery(QueryForm):
    cycle = forms.IntegerField(required=False, min_value=0, max_value=INT64_MAX)
    attempt = forms.IntegerField(required=False, min_value=1, max_value=INT64_MAX)   # of the latest pod of the name
    diff = forms.IntegerField(required=False, min_value=0, max_value=INT64_MAX)
    apage = _page()   # attempts (groups of identical attempts)
    epage = _page()   # events
    group = _choice(("0", "1"))
    full = _choice(("1",))
    nq = _text()
    plugin = _text()
    show = _choice(FILTER_SHOWS)
    sort = _choice(FILTER_SORTS)
    fpage = _page()
    spage = _page()
    binding = _choice(("1",))   # the manual-binding choices, checked
    bind = _text()              # the node chosen for a manual binding
    bq = _text()                # the manual-binding choices: node name contains
    confirm = _choice(("1",))   # ask to confirm binding to ``bind``, which fails a Filter plugin


class VersionQuery(QueryForm):
    """The profile version page: the version to compare with."""

    against = forms.IntegerField(required=False, min_value=1, max_value=INT64_MAX)


def bad_query(request, form: forms.Form):
    """The 400 page for a query that ``form`` refused, naming each parameter and what is wrong with it."""
    return render(request, "bad_query.html", {"errors": form.errors}, status=400)


def query_form(form_class):
    """Decorator of a page: ``request.GET`` checked by ``form_class``; the view receives ``query``, the cleaned
    values given (``QueryForm.values``); a bad value answers 400 (``bad_query``)."""
    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kw):
            form = form_class(request.GET)
            if not form.is_valid():
                return bad_query(request, form)
            return view(request, *args, query=form.values(), **kw)
        wrapper.query_form = form_class   # what the page reads (the crawler test draws these)
        return wrapper
    return decorate
