"""What kube-apiserver v1.36 validates of resource.k8s.io/v1 objects (pkg/apis/resource/validation), with its field
paths and messages: DeviceClass selectors (CEL that compiles) and config, ResourceSlice driver, pool, node
selection (exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection), devices and counters,
ResourceClaim and ResourceClaimTemplate requests (exactly one of exactly and firstAvailable, device class,
allocation mode and count, selectors, tolerations) and constraints. objects.validation calls these after the
metadata checks, so every writer goes through the same path."""
from __future__ import annotations

from ..objects.field import FieldError, child, duplicate, forbidden, invalid, not_supported, required, too_many
from ..objects.identifiers import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from ..objects.quantity import QuantityError, parse_quantity
from .cel import compile_selector
from .celvalues import SEMVER

ALLOCATION_MODES = ("All", "ExactCount")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
SELECTORS_MAX = 32
REQUESTS_MAX = 32
FIRST_AVAILABLE_MAX = 8
RESERVED_FOR_MAX = 256                  # resource.ResourceClaimReservedForMaxSize


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _selectors(selectors, path, errs) -> None:
    if len(_list(selectors)) > SELECTORS_MAX:
        errs.append(invalid(path, len(selectors), f"must have at most {SELECTORS_MAX} items"))
    for i, sel in enumerate(_list(selectors)):
        p = f"{path}[{i}]"
        cel = _dict(sel).get("cel")
        if cel is None:
            errs.append(required(child(p, "cel"), ""))
            continue
        expr = str(_dict(cel).get("expression") or "")
        ep = child(child(p, "cel"), "expression")
        prog = compile_selector(expr)
        if prog.error:
            errs.append(invalid(ep, expr, prog.error))


def _class_name(name, path, errs) -> None:
    if not name:
        errs.append(required(path, ""))
    else:
        errs.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name))


def _allocation_mode(raw: dict, path: str, errs) -> None:
    mode = raw.get("allocationMode") or "ExactCount"   # defaulted by the apiserver
    count = raw.get("count", 1 if mode == "ExactCount" else 0)
    if mode == "All":
        if count:
            errs.append(invalid(child(path, "count"), count, "must not be specified when allocationMode is 'All'"))
    elif mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            errs.append(invalid(child(path, "count"), count, "must be greater than zero"))
    else:
        errs.append(not_supported(child(path, "allocationMode"), mode, ALLOCATION_MODES))


def _tolerations(tolerations, path, errs) -> None:
    """validateDeviceToleration (the operator defaults to Equal)."""
    for i, t in enumerate(_list(tolerations)):
        p, t = f"{path}[{i}]", _dict(t)
        if t.get("key"):
            errs.extend(invalid(child(p, "key"), t["key"], m) for m in is_qualified_name(t["key"]))
        op, value = t.get("operator") or "Equal", t.get("value") or ""
        if op == "Exists":
            if value:
                errs.append(invalid(child(p, "value"), value, "must be empty for operator `Exists`"))
        elif op == "Equal":
            errs.extend(invalid(child(p, "value"), value, m) for m in is_valid_label_value(value))
        else:
            errs.append(not_supported(child(p, "operator"), op, TOLERATION_OPERATORS))
        if t.get("effect") and t["effect"] not in TAINT_EFFECTS:
            errs.append(not_supported(child(p, "effect"), t["effect"], TAINT_EFFECTS))


def _request_name(name, path, errs) -> None:
    if not name:
        errs.append(required(path, ""))
    else:
        errs.extend(invalid(path, name, m) for m in is_dns1123_label(name))


def _exact(raw: dict, path: str, errs) -> None:
    _class_name(raw.get("deviceClassName"), child(path, "deviceClassName"), errs)
    _selectors(raw.get("selectors"), child(path, "selectors"), errs)
    _allocation_mode(raw, path, errs)
    _tolerations(raw.get("tolerations"), child(path, "tolerations"), errs)


def validate_claim_spec(spec, path: str, errs: list) -> None:
    """validateResourceClaimSpec."""
    devices = _dict(_dict(spec).get("devices"))
    dpath = child(path, "devices")
    requests = _list(devices.get("requests"))
    if len(requests) > REQUESTS_MAX:
        errs.append(invalid(child(dpath, "requests"), len(requests), f"must have at most {REQUESTS_MAX} items"))
    names = set()
    for i, req in enumerate(requests):
        p, req = f"{dpath}.requests[{i}]", _dict(req)
        _request_name(req.get("name"), child(p, "name"), errs)
        if req.get("name") in names:
            errs.append(invalid(child(p, "name"), req.get("name"), "Duplicate value"))
        names.add(req.get("name"))
        has_exact, has_first = req.get("exactly") is not None, bool(req.get("firstAvailable"))
        if not has_exact and not has_first:
            errs.append(required(p, "exactly one of `exactly` or `firstAvailable` is required"))
        elif has_exact and has_first:
            errs.append(invalid(p, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                                         "fields are set"))
        elif has_exact:
            _exact(_dict(req["exactly"]), child(p, "exactly"), errs)
        else:
            subs = _list(req["firstAvailable"])
            if len(subs) > FIRST_AVAILABLE_MAX:
                errs.append(invalid(child(p, "firstAvailable"), len(subs),
                                    f"must have at most {FIRST_AVAILABLE_MAX} items"))
            for j, sub in enumerate(subs):
                sp, sub = f"{p}.firstAvailable[{j}]", _dict(sub)
                _request_name(sub.get("name"), child(sp, "name"), errs)
                _exact(sub, sp, errs)
    full_names = set(names)
    for req in requests:
        for sub in _list(_dict(req).get("firstAvailable")):
            full_names.add(f'{_dict(req).get("name")}/{_dict(sub).get("name")}')
    for i, c in enumerate(_list(devices.get("constraints"))):
        p, c = f"{dpath}.constraints[{i}]", _dict(c)
        for j, name in enumerate(_list(c.get("requests"))):
            if name not in full_names:
                errs.append(invalid(f"{p}.requests[{j}]", name, "must be the name of a request in the claim or the "
                                                                "name of a request and a subrequest separated by '/'"))
        has_match, has_distinct = c.get("matchAttribute") is not None, c.get("distinctAttribute") is not None
        if has_match and has_distinct:
            errs.append(required(p, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                                    'multiple fields are set'))
        elif not has_match and not has_distinct:
            errs.append(required(child(p, "matchAttribute"), ""))
        else:
            attr = c.get("matchAttribute") if has_match else c.get("distinctAttribute")
            if "/" not in str(attr):
                errs.append(invalid(child(p, "matchAttribute" if has_match else "distinctAttribute"), attr,
                                    "a fully qualified name must be a domain and a name separated by a slash"))


def _validate_claim(raw: dict, errs: list) -> None:
    validate_claim_spec(raw.get("spec"), "spec", errs)
    errs.extend(claim_status_errors(raw))


def claim_status_errors(raw: dict) -> list:
    """What kube-apiserver checks of a ResourceClaim's status (its part of validateResourceClaimStatusUpdate that
    Schedscope's writers can break): the consumers in ``status.reservedFor``."""
    errs = []
    _reserved_for(_dict(_dict(raw).get("status")).get("reservedFor"), "status.reservedFor", errs)
    return errs


def _reserved_for(consumers, path, errs) -> None:
    """validateResourceClaimStatusUpdate's reservedFor: at most 256 consumers (nothing else is checked beyond),
    each uid once."""
    consumers = _list(consumers)
    if len(consumers) > RESERVED_FOR_MAX:
        errs.append(too_many(path, len(consumers), RESERVED_FOR_MAX))
        return
    seen = set()
    for i, ref in enumerate(consumers):
        uid = _dict(ref).get("uid")
        if uid in seen:
            errs.append(duplicate(f"{path}[{i}]", uid))
        seen.add(uid)


def _validate_template(raw: dict, errs: list) -> None:
    validate_claim_spec(_dict(raw.get("spec")).get("spec"), "spec.spec", errs)


def _validate_class(raw: dict, errs: list) -> None:
    _selectors(_dict(raw.get("spec")).get("selectors"), "spec.selectors", errs)


def _quantity(value, path, errs) -> None:
    try:
        parse_quantity(value)
    except QuantityError as err:
        errs.append(invalid(path, value, str(err)))


def _validate_slice(raw: dict, errs: list) -> None:
    spec = _dict(raw.get("spec"))
    driver = spec.get("driver")
    if not driver:
        errs.append(required("spec.driver", ""))
    else:
        errs.extend(invalid("spec.driver", driver, m) for m in is_dns1123_subdomain(driver))
    pool = _dict(spec.get("pool"))
    if not pool.get("name"):
        errs.append(required("spec.pool.name", ""))
    if int(pool.get("resourceSliceCount") or 0) <= 0:
        errs.append(invalid("spec.pool.resourceSliceCount", pool.get("resourceSliceCount", 0),
                            "must be greater than zero"))
    if int(pool.get("generation") or 0) < 0:
        errs.append(invalid("spec.pool.generation", pool.get("generation"),
                            "must be greater than or equal to zero"))
    set_fields = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            set_fields.append("`nodeName`")
        else:
            errs.append(invalid("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        set_fields.append("`nodeSelector`")
        terms = _list(_dict(spec["nodeSelector"]).get("nodeSelectorTerms"))
        if len(terms) != 1:
            errs.append(invalid("spec.nodeSelector.nodeSelectorTerms", terms,
                                "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is not None:
            if spec[key] is True:
                set_fields.append(f"`{key}`")
            else:
                errs.append(invalid(f"spec.{key}", spec[key], "must be either unset or set to true"))
    if not set_fields:
        errs.append(required("spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                                     "`perDeviceNodeSelection` is required"))
    elif len(set_fields) > 1:
        errs.append(invalid("spec", "{" + ", ".join(set_fields) + "}",
                            "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
                            "required, but multiple fields are set"))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errs.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    names = set()
    for i, dev in enumerate(_list(spec.get("devices"))):
        p, dev = f"spec.devices[{i}]", _dict(dev)
        name = dev.get("name")
        if not name:
            errs.append(required(child(p, "name"), ""))
        else:
            errs.extend(invalid(child(p, "name"), name, m) for m in is_dns1123_label(name))
            if name in names:
                errs.append(invalid(child(p, "name"), name, "Duplicate value"))
            names.add(name)
        for aname, attr in _dict(dev.get("attributes")).items():
            ap = f"{p}.attributes[{aname}]"
            kinds = [k for k in ("bool", "int", "string", "version") if k in _dict(attr)]
            if len(kinds) != 1:
                errs.append(invalid(ap, "" if not kinds else attr, "exactly one value must be specified"))
            elif kinds == ["version"]:
                if not SEMVER.match(str(attr["version"])):
                    errs.append(invalid(child(ap, "version"), attr["version"],
                                        "must be a string compatible with semver.org spec 2.0.0"))
        for cname, cap in _dict(dev.get("capacity")).items():
            _quantity(_dict(cap).get("value", "0"), f"{p}.capacity[{cname}].value", errs)
        for j, use in enumerate(_list(dev.get("consumesCounters"))):
            if not _dict(use).get("counterSet"):
                errs.append(required(f"{p}.consumesCounters[{j}].counterSet", ""))
            if not _dict(use).get("counters"):
                errs.append(required(f"{p}.consumesCounters[{j}].counters", ""))
        for j, taint in enumerate(_list(dev.get("taints"))):
            effect = _dict(taint).get("effect")
            if effect not in TAINT_EFFECTS:
                errs.append(not_supported(f"{p}.taints[{j}].effect", effect, TAINT_EFFECTS))
    for i, cs in enumerate(_list(spec.get("sharedCounters"))):
        if not _dict(cs).get("name"):
            errs.append(required(f"spec.sharedCounters[{i}].name", ""))
        if not _dict(cs).get("counters"):
            errs.append(required(f"spec.sharedCounters[{i}].counters", ""))


VALIDATORS = {"DeviceClass": _validate_class, "ResourceSlice": _validate_slice,
              "ResourceClaim": _validate_claim, "ResourceClaimTemplate": _validate_template}
CLUSTER_SCOPED = ("DeviceClass", "ResourceSlice")


ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"   # resource.DRAAdminNamespaceLabelKey


def _admin_forbidden(path: str) -> FieldError:
    return forbidden(path, f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the "
                           f"containing namespace")


def admin_access_errors(kind: str, obj: dict, namespace_labels: dict, old: dict | None = None) -> list:
    """kube-apiserver's AuthorizedForAdmin and AuthorizedForAdminStatus (pkg/registry/resource/utils.go): a claim
    or template asking admin access (``exactly.adminAccess``), or a claim status newly granting it, is refused
    unless its namespace has the label ``resource.kubernetes.io/admin-access: "true"``. ``old``: the stored claim
    of a status write (a status that already granted admin access is not checked again; specs are immutable)."""
    if namespace_labels.get(ADMIN_NAMESPACE_LABEL) == "true":
        return []
    if old is not None:
        def granted(claim):
            results = ((_dict(_dict(_dict(claim.get("status")).get("allocation")).get("devices"))).get("results"))
            return next((i for i, r in enumerate(_list(results)) if _dict(r).get("adminAccess") is True), None)
        if granted(old) is not None:
            return []
        i = granted(obj)
        return [] if i is None else [_admin_forbidden(f"status.allocation.devices.results[{i}].adminAccess")]
    spec = _dict(obj.get("spec"))
    if kind == "ResourceClaimTemplate":
        spec = _dict(spec.get("spec"))
    for i, request in enumerate(_list(_dict(spec.get("devices")).get("requests"))):
        if _dict(_dict(request).get("exactly")).get("adminAccess") is True:
            return [_admin_forbidden(f"spec.devices.requests[{i}].adminAccess")]
    return []
