"""scheduling.k8s.io/v1alpha2 Workload and PodGroup (v1.36.2, GenericWorkload): what kube-apiserver validates of
them on create (their declarative validation, pkg/apis/scheduling/v1alpha2/zz_generated.validations.go, with the
messages of apimachinery's api/validate), and what the scheduler reads of a PodGroup.

The fields behind an alpha gate (a PodGroup's ``schedulingConstraints``, ``resourceClaims``, ``disruptionMode``,
``priorityClassName``, ``priority``) are dropped by kube-apiserver's strategies before validation while their gate
is off, so validation never refuses them; their content is checked when present. A stored PodGroup reads back with
``disruptionMode: Pod`` (its default).
"""
from __future__ import annotations

import re

from .field import GoValue, child, duplicate, go_quote, invalid, required, too_many
from .identifiers import regex_error

WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
MAX_POD_GROUP_RESOURCE_CLAIMS = 4
MAX_TOPOLOGY_CONSTRAINTS = 1

# apimachinery/pkg/api/validate/content: the formats of declarative validation (their own messages: lengths in
# bytes, a label refused for a dot).
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_KEY_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_NAME = re.compile(_KEY_NAME_FMT)
_KEY_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character")


def _max_len(n: int) -> str:
    return f"must be no more than {n} bytes"


def short_name_errors(value: str) -> list:
    """content.IsDNS1123Label (format=k8s-short-name)."""
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _LABEL.fullmatch(value):
        errs.append("must not contain dots" if _SUBDOMAIN.fullmatch(value)
                    else regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def long_name_errors(value: str) -> list:
    """content.IsDNS1123Subdomain (format=k8s-long-name)."""
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(value: str) -> list:
    """content.IsLabelKey (format=k8s-label-key)."""
    parts = value.split("/")
    errs = []
    if len(parts) > 2:
        return ["a valid label key " + regex_error(_KEY_NAME_MSG, _KEY_NAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in long_name_errors(parts[0]))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _KEY_NAME.fullmatch(name):
        errs.append("name part " + regex_error(_KEY_NAME_MSG, _KEY_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _string(raw: dict, key: str, path: str, check, errs: list, needed: bool) -> None:
    """A string field: Required when ``needed`` and empty, else its format's Invalid errors."""
    value = raw.get(key)
    if value in (None, ""):
        if needed:
            errs.append(required(path, ""))
        return
    if not isinstance(value, str):
        errs.append(invalid(path, value, "expected a string"))
        return
    errs.extend(invalid(path, value, m) for m in check(value))


def _union(raw: dict, members, path: str, errs: list) -> None:
    """validate.Union: exactly one member set."""
    names = [f"`{m}`" for m in members]
    given = [f"`{m}`" for m in members if raw.get(m) is not None]
    if not given:
        errs.append(invalid(path, "", f"must specify one of: {', '.join(names)}"))
    elif len(given) > 1:
        errs.append(invalid(path, "{" + ", ".join(given) + "}", f"must specify exactly one of: {', '.join(names)}"))


def _scheduling_policy(raw, path: str, errs: list) -> None:
    policy = _dict(raw)
    _union(policy, ("basic", "gang"), path, errs)
    if policy.get("gang") is not None:
        p = child(child(path, "gang"), "minCount")
        count = _dict(policy["gang"]).get("minCount")
        if not count:
            errs.append(required(p, ""))
        elif not isinstance(count, int) or isinstance(count, bool):
            errs.append(invalid(p, count, "expected an integer"))
        elif count < 1:
            errs.append(invalid(p, count, "must be greater than or equal to 1"))


def _scheduling_constraints(raw: dict, path: str, errs: list) -> None:
    constraints = raw.get("schedulingConstraints")
    if constraints is None:
        return
    topology = _dict(constraints).get("topology")
    tp = child(path, "topology")
    if isinstance(topology, list):
        if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
            errs.append(too_many(tp, len(topology), MAX_TOPOLOGY_CONSTRAINTS))
            return
        for i, tc in enumerate(topology):
            _string(_dict(tc), "key", f"{tp}[{i}].key", label_key_errors, errs, True)


def _resource_claims(claims, path: str, errs: list) -> None:
    if not isinstance(claims, list):
        return
    if len(claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        errs.append(too_many(path, len(claims), MAX_POD_GROUP_RESOURCE_CLAIMS))
        return
    _unique_names(claims, "v1alpha2.PodGroupResourceClaim", path, errs)
    for i, claim in enumerate(claims):
        claim, p = _dict(claim), f"{path}[{i}]"
        _union(claim, ("resourceClaimName", "resourceClaimTemplateName"), p, errs)
        _string(claim, "name", child(p, "name"), short_name_errors, errs, True)
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            _string(claim, key, child(p, key), long_name_errors, errs, False)


def _unique_names(items: list, go_type: str, path: str, errs: list) -> None:
    """validate.Unique over a list keyed by name: a Duplicate error at each later item whose name repeats (kube
    renders the whole item with %#v; the item is shown by its type and name here)."""
    seen = set()
    for i, item in enumerate(items):
        name = _dict(item).get("name")
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", GoValue(f"{go_type}{{Name:{go_quote(str(name))}, ...}}")))
        seen.add(name)


def _validate_pod_group(raw: dict, errs: list) -> None:
    spec = _dict(raw.get("spec"))
    ref = spec.get("podGroupTemplateRef")
    if ref is not None:
        p = "spec.podGroupTemplateRef"
        _union(_dict(ref), ("workload",), p, errs)
        workload = _dict(ref).get("workload")
        if workload is not None:
            wp = child(p, "workload")
            _string(_dict(workload), "workloadName", child(wp, "workloadName"), long_name_errors, errs, True)
            _string(_dict(workload), "podGroupTemplateName", child(wp, "podGroupTemplateName"), short_name_errors,
                    errs, True)
    _scheduling_policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy", errs)
    _scheduling_constraints(spec, "spec.schedulingConstraints", errs)
    _resource_claims(spec.get("resourceClaims"), "spec.resourceClaims", errs)


def _validate_workload(raw: dict, errs: list) -> None:
    spec = _dict(raw.get("spec"))
    ref = spec.get("controllerRef")
    if ref is not None:
        p = "spec.controllerRef"
        _string(_dict(ref), "apiGroup", child(p, "apiGroup"), long_name_errors, errs, False)
        for key in ("kind", "name"):
            _string(_dict(ref), key, child(p, key), _path_segment_errors, errs, True)
    templates = spec.get("podGroupTemplates")
    p = "spec.podGroupTemplates"
    if not templates:
        errs.append(required(p, ""))
        return
    if not isinstance(templates, list):
        errs.append(invalid(p, templates, "expected a list"))
        return
    if len(templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
        errs.append(too_many(p, len(templates), WORKLOAD_MAX_POD_GROUP_TEMPLATES))
        return
    _unique_names(templates, "v1alpha2.PodGroupTemplate", p, errs)
    for i, template in enumerate(templates):
        template, tp = _dict(template), f"{p}[{i}]"
        _string(template, "name", child(tp, "name"), short_name_errors, errs, True)
        _scheduling_policy(template.get("schedulingPolicy"), child(tp, "schedulingPolicy"), errs)
        _scheduling_constraints(template, child(tp, "schedulingConstraints"), errs)
        _resource_claims(template.get("resourceClaims"), child(tp, "resourceClaims"), errs)


def _path_segment_errors(value: str) -> list:
    """content.IsPathSegmentName (format=k8s-path-segment-name)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


VALIDATORS = {"PodGroup": _validate_pod_group, "Workload": _validate_workload}


def gang_min_count(pod_group: dict) -> int | None:
    """A PodGroup's gang policy's minCount, or None when its policy is not a gang."""
    gang = _dict(_dict(_dict(pod_group.get("spec")).get("schedulingPolicy")).get("gang"))
    return gang.get("minCount") if gang else None


def topology_key(pod_group: dict) -> str | None:
    """The topology key of a PodGroup's first topology constraint (the API allows one), or None."""
    topology = _dict(_dict(pod_group.get("spec")).get("schedulingConstraints")).get("topology") or ()
    return topology[0].get("key") if topology else None
