"""The Kubernetes API's side of admission: the refusals of the one admission path (``services.admitted``, shared
with every other writer) as Status errors, the validation of the kinds it alone serves, PriorityClasses, and
Event conversion."""
from __future__ import annotations

from contextlib import contextmanager

from scheduler_core.objects import ParseError

from ..services.admitted import Refused
from .errors import ApiError

NOTE_LIMIT = 1024


@contextmanager
def refusals(res, name: str = ""):
    """``services.admitted``'s refusals as the Status errors kube-apiserver answers with."""
    try:
        yield
    except Refused as err:
        if err.code == 422:
            raise ApiError.invalid(res, err.name or name, err.causes) from None
        if err.code == 403:
            raise ApiError.forbidden(res, err.name or name, err.why) from None
        raise ApiError(err.code, err.reason, err.message) from None


def parse_error(res, name: str, err: ParseError) -> ApiError:
    return ApiError.invalid(res, name, [(err.path, "FieldValueInvalid", f"Invalid value: {err.message}")])


def admit_priority_class(res, pc: dict) -> None:
    value = pc.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        raise ApiError.invalid(res, pc["metadata"]["name"], [("value", "FieldValueRequired", "Required value")])


def admit_events_v1(res, ev: dict) -> None:
    """ValidateEventCreate for events.k8s.io/v1 requests."""
    name = ev["metadata"]["name"]
    causes = []
    if not ev.get("eventTime"):
        causes.append(("eventTime", "FieldValueRequired", "Required value"))
    if ev.get("type") not in ("Normal", "Warning"):
        causes.append(("type", "FieldValueInvalid", f'Invalid value: "": has invalid value: {ev.get("type", "")}'))
    for field in ("reportingController", "reportingInstance", "action", "reason"):
        if not ev.get(field):
            causes.append((field, "FieldValueRequired", "Required value"))
    if len((ev.get("note") or "").encode()) > NOTE_LIMIT:
        causes.append(("note", "FieldValueTooLong", f"Too long: may not be more than {NOTE_LIMIT} bytes"))
    if causes:
        raise ApiError.invalid(res, name, causes)


_EVENT_FIELDS = (("regarding", "involvedObject"), ("note", "message"), ("deprecatedSource", "source"),
                 ("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp"),
                 ("deprecatedCount", "count"), ("reportingController", "reportingComponent"))
_EVENT_SAME = ("reason", "type", "eventTime", "series", "action", "related", "reportingInstance")


def event_to_core(ev: dict) -> dict:
    """events.k8s.io/v1 Event -> core v1 Event (the stored form, as kube converts)."""
    out = {"apiVersion": "v1", "kind": "Event", "metadata": ev.get("metadata") or {}}
    for v1_name, core_name in _EVENT_FIELDS:
        if ev.get(v1_name) not in (None, "", {}, 0):
            out[core_name] = ev[v1_name]
    for k in _EVENT_SAME:
        if ev.get(k) not in (None, "", {}):
            out[k] = ev[k]
    out.setdefault("involvedObject", {})
    out.setdefault("source", {})
    for k in ("eventTime", "firstTimestamp", "lastTimestamp"):   # zero times: JSON null, never left out
        out.setdefault(k, None)
    return out


def event_from_core(ev: dict) -> dict:
    """The events.k8s.io/v1 view of a stored core v1 Event."""
    out = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": ev.get("metadata") or {}}
    for v1_name, core_name in _EVENT_FIELDS:
        if ev.get(core_name) not in (None, "", {}, 0):
            out[v1_name] = ev[core_name]
    for k in _EVENT_SAME:
        if ev.get(k) not in (None, "", {}):
            out[k] = ev[k]
    out.setdefault("regarding", {})
    return out
