"""Strict decoding of KubeSchedulerConfiguration v1 documents, as kube-scheduler's UniversalDecoder does it.

The document (a dict from YAML or JSON) is checked against the Go types of kubescheduler.config.k8s.io/v1
(k8s.io/kube-scheduler/config/v1, v1.30) with sigs.k8s.io/json's strict rules: case-sensitive field
names, unknown fields collected as strict errors, the first type error wins (and hides the strict
errors), a bad duration aborts at once. Then the args of every pluginConfig entry whose ``<name>Args``
kind is registered are decoded the same way (DecodeNestedObjects). Error texts are kube's.

The result keeps the v1 JSON shape with only the fields that were set: a Go nil pointer or nil slice
is an absent key, durations are integer nanoseconds, and pluginConfig args are decoded dicts for the
registered kinds and the raw value otherwise.
"""
from __future__ import annotations

import base64
import binascii
import json
from functools import lru_cache

from .. import versions
from .duration import DurationError, parse_duration
from ..objects.field import go_quote

GROUP = "kubescheduler.config.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
SCHEME_NAME = "pkg/scheduler/apis/config/scheme/scheme.go:30"
_FIND_KIND = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
              'Kind string "json:\\"kind,omitempty\\"" }')
_ABSENT = object()


class DecodeError(ValueError):
    """The decoder's error text, as kube-scheduler prints it."""


class T:
    """A Go type: kind (struct, int, float, bool, string, slice, map, duration, bytes, raw) and its name."""

    __slots__ = ("kind", "go", "name", "fields", "elem", "lo", "hi")

    def __init__(self, kind, go, fields=None, elem=None, lo=None, hi=None):
        self.kind, self.go, self.fields, self.elem, self.lo, self.hi = kind, go, fields, elem, lo, hi
        self.name = go.rsplit(".", 1)[-1]


def _int(go, bits, signed=True):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return T("int", go, lo=lo, hi=hi)


INT32, INT64, UINT8 = _int("int32", 32), _int("int64", 64), _int("uint8", 8, signed=False)
FLOAT32, BOOL = T("float", "float32"), T("bool", "bool")
STRING, DURATION, RAW = T("string", "string"), T("duration", "v1.Duration"), T("raw", "runtime.RawExtension")
DURATION_POINTER = T("duration", "*v1.Duration")   # null leaves it nil
BYTES = T("bytes", "[]uint8", elem=UINT8)
STRINGS = T("slice", "[]string", elem=STRING)


def _struct(go, fields):
    return T("struct", go, fields=fields)


def _slice(elem):
    return T("slice", "[]" + elem.go, elem=elem)


def _named_string(go):
    return T("string", go)


TYPE_META = {"apiVersion": STRING, "kind": STRING}

# k8s.io/api/core/v1 and apimachinery meta/v1 types used by plugin args.
LABEL_SELECTOR = _struct("v1.LabelSelector", {
    "matchLabels": T("map", "map[string]string", elem=STRING),
    "matchExpressions": _slice(_struct("v1.LabelSelectorRequirement", {
        "key": STRING, "operator": _named_string("v1.LabelSelectorOperator"), "values": STRINGS}))})
TOPOLOGY_SPREAD_CONSTRAINT = _struct("v1.TopologySpreadConstraint", {
    "maxSkew": INT32, "topologyKey": STRING,
    "whenUnsatisfiable": _named_string("v1.UnsatisfiableConstraintAction"),
    "labelSelector": LABEL_SELECTOR, "minDomains": INT32,
    "nodeAffinityPolicy": _named_string("v1.NodeInclusionPolicy"),
    "nodeTaintsPolicy": _named_string("v1.NodeInclusionPolicy"), "matchLabelKeys": STRINGS})
_NODE_SELECTOR_REQUIREMENTS = _slice(_struct("v1.NodeSelectorRequirement", {
    "key": STRING, "operator": _named_string("v1.NodeSelectorOperator"), "values": STRINGS}))
NODE_SELECTOR_TERM = _struct("v1.NodeSelectorTerm", {"matchExpressions": _NODE_SELECTOR_REQUIREMENTS,
                                                     "matchFields": _NODE_SELECTOR_REQUIREMENTS})
NODE_AFFINITY = _struct("v1.NodeAffinity", {
    "requiredDuringSchedulingIgnoredDuringExecution": _struct("v1.NodeSelector", {
        "nodeSelectorTerms": _slice(NODE_SELECTOR_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": _slice(_struct("v1.PreferredSchedulingTerm", {
        "weight": INT32, "preference": NODE_SELECTOR_TERM}))})

# kubescheduler.config.k8s.io/v1 plugin args.
RESOURCE_SPECS = _slice(_struct("v1.ResourceSpec", {"name": STRING, "weight": INT64}))
SHAPE = _slice(_struct("v1.UtilizationShapePoint", {"utilization": INT32, "score": INT32}))
ARGS_TYPES = {
    "DefaultPreemptionArgs": _struct("v1.DefaultPreemptionArgs", {
        **TYPE_META, "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32}),
    "InterPodAffinityArgs": _struct("v1.InterPodAffinityArgs", {
        **TYPE_META, "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL}),
    "NodeResourcesFitArgs": _struct("v1.NodeResourcesFitArgs", {
        **TYPE_META, "ignoredResources": STRINGS, "ignoredResourceGroups": STRINGS,
        "scoringStrategy": _struct("v1.ScoringStrategy", {
            "type": _named_string("v1.ScoringStrategyType"), "resources": RESOURCE_SPECS,
            "requestedToCapacityRatio": _struct("v1.RequestedToCapacityRatioParam", {"shape": SHAPE})})}),
    "PodTopologySpreadArgs": _struct("v1.PodTopologySpreadArgs", {
        **TYPE_META, "defaultConstraints": _slice(TOPOLOGY_SPREAD_CONSTRAINT),
        "defaultingType": _named_string("v1.PodTopologySpreadConstraintsDefaulting")}),
    "NodeResourcesBalancedAllocationArgs": _struct("v1.NodeResourcesBalancedAllocationArgs", {
        **TYPE_META, "resources": RESOURCE_SPECS}),
    "VolumeBindingArgs": _struct("v1.VolumeBindingArgs", {
        **TYPE_META, "bindTimeoutSeconds": INT64, "shape": SHAPE}),
    "NodeAffinityArgs": _struct("v1.NodeAffinityArgs", {**TYPE_META, "addedAffinity": NODE_AFFINITY}),
}

_PLUGIN_SET = _struct("v1.PluginSet", {
    "enabled": _slice(_struct("v1.Plugin", {"name": STRING, "weight": INT32})),
    "disabled": _slice(_struct("v1.Plugin", {"name": STRING, "weight": INT32}))})
PLUGIN_SETS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
               "permit", "preBind", "bind", "postBind", "multiPoint")
KUBE_SCHEDULER_CONFIGURATION = _struct("v1.KubeSchedulerConfiguration", {
    **TYPE_META,
    "parallelism": INT32,
    "leaderElection": _struct("v1alpha1.LeaderElectionConfiguration", {
        "leaderElect": BOOL, "leaseDuration": DURATION, "renewDeadline": DURATION, "retryPeriod": DURATION,
        "resourceLock": STRING, "resourceName": STRING, "resourceNamespace": STRING}),
    "clientConnection": _struct("v1alpha1.ClientConnectionConfiguration", {
        "kubeconfig": STRING, "acceptContentTypes": STRING, "contentType": STRING, "qps": FLOAT32,
        "burst": INT32}),
    "enableProfiling": BOOL, "enableContentionProfiling": BOOL,
    "percentageOfNodesToScore": INT32, "podInitialBackoffSeconds": INT64, "podMaxBackoffSeconds": INT64,
    "profiles": _slice(_struct("v1.KubeSchedulerProfile", {
        "schedulerName": STRING, "percentageOfNodesToScore": INT32,
        "plugins": _struct("v1.Plugins", {s: _PLUGIN_SET for s in PLUGIN_SETS}),
        "pluginConfig": _slice(_struct("v1.PluginConfig", {"name": STRING, "args": RAW}))})),
    "extenders": _slice(_struct("v1.Extender", {
        "urlPrefix": STRING, "filterVerb": STRING, "preemptVerb": STRING, "prioritizeVerb": STRING,
        "weight": INT64, "bindVerb": STRING, "enableHTTPS": BOOL,
        "tlsConfig": _struct("v1.ExtenderTLSConfig", {
            "insecure": BOOL, "serverName": STRING, "certFile": STRING, "keyFile": STRING, "caFile": STRING,
            "certData": BYTES, "keyData": BYTES, "caData": BYTES}),
        "httpTimeout": DURATION, "nodeCacheCapable": BOOL,
        "managedResources": _slice(_struct("v1.ExtenderManagedResource", {
            "name": STRING, "ignoredByScheduler": BOOL})),
        "ignorable": BOOL})),
    "delayCacheUntilActive": BOOL,
})
KINDS = {"KubeSchedulerConfiguration": KUBE_SCHEDULER_CONFIGURATION, **ARGS_TYPES}

# From 1.34 (workload-aware scheduling) v1.Plugins has two more sets; from 1.33 DynamicResources has args.
PLACEMENT_SETS = ("placementGenerate", "placementScore")
DYNAMIC_RESOURCES_ARGS = _struct("v1.DynamicResourcesArgs", {
    **TYPE_META, "filterTimeout": DURATION_POINTER, "bindingTimeout": DURATION_POINTER})


def _with_profile_fields(config_type: T, plugin_sets) -> T:
    """KubeSchedulerConfiguration's type with ``plugin_sets`` as v1.Plugins' sets."""
    fields = dict(config_type.fields)
    profile = fields["profiles"].elem
    plugins = _struct("v1.Plugins", {s: _PLUGIN_SET for s in plugin_sets})
    fields["profiles"] = _slice(_struct(profile.go, {**profile.fields, "plugins": plugins}))
    return _struct(config_type.go, fields)


@lru_cache(maxsize=None)
def scheme(features) -> dict:
    """The kinds kube-scheduler's scheme decodes at a version: {kind: Go type}."""
    kinds = dict(KINDS)
    if features.has("config-placement-plugin-sets"):
        kinds["KubeSchedulerConfiguration"] = _with_profile_fields(KUBE_SCHEDULER_CONFIGURATION,
                                                                   PLUGIN_SETS + PLACEMENT_SETS)
    if features.has("dynamic-resources-args"):
        kinds["DynamicResourcesArgs"] = DYNAMIC_RESOURCES_ARGS
    return kinds


def plugin_sets(features=None) -> tuple:
    """The v1.Plugins sets of a version (None: the default version), in the order kube lists them."""
    features = versions.features(features)
    return PLUGIN_SETS + PLACEMENT_SETS if features.has("config-placement-plugin-sets") else PLUGIN_SETS


class _Fatal(Exception):
    """An error that stops the JSON decoder at once (an UnmarshalJSON failure)."""


class _State:
    __slots__ = ("saved", "strict")

    def __init__(self):
        self.saved = None
        self.strict = []


def _json_kind(v) -> str:
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "bool"
    return "number"


def _number_text(v) -> str:
    return str(v) if isinstance(v, int) else repr(v)


def _key(k) -> str:
    if isinstance(k, bool):
        return "true" if k else "false"
    return "null" if k is None else str(k)


def _type_error(st: _State, what: str, t: T, sname, fstack):
    if st.saved is None:
        if sname or fstack:
            st.saved = (f"json: cannot unmarshal {what} into Go struct field {sname}.{'.'.join(fstack)} "
                        f"of type {t.go}")
        else:
            st.saved = f"json: cannot unmarshal {what} into Go value of type {t.go}"


def _zero(t: T):
    return {"struct": {}, "int": 0, "float": 0.0, "bool": False, "string": "", "duration": 0}.get(t.kind)


def _base64(st: _State, text: str):
    data = text.replace("\r", "").replace("\n", "")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        pos = next((i for i, c in enumerate(data) if c not in alphabet), len(data) - len(data) % 4)
        if st.saved is None:
            st.saved = f"illegal base64 data at input byte {pos}"
        return _ABSENT


def _decode(v, t: T, st: _State, sname, fstack, spath):
    """Decode one JSON value into Go type t; returns the value or _ABSENT (zero, nil or error)."""
    kind = t.kind
    if kind == "duration":
        if v is None and t is DURATION_POINTER:
            return _ABSENT
        if not isinstance(v, str):
            if v is not None:
                raise _Fatal(f"json: cannot unmarshal {_json_kind(v)} into Go value of type string")
            v = ""
        try:
            return parse_duration(v)
        except DurationError as err:
            raise _Fatal(str(err)) from None
    if v is None:
        return _ABSENT
    if kind == "raw":
        return v
    if kind == "struct":
        if not isinstance(v, dict):
            _type_error(st, _json_kind(v), t, sname, fstack)
            return _ABSENT
        out = {}
        for k, val in v.items():
            name = _key(k)
            ft = t.fields.get(name)
            if ft is None:
                st.strict.append(f"unknown field {go_quote(f'{spath}.{name}' if spath else name)}")
                continue
            r = _decode(val, ft, st, t.name, fstack + (name,), f"{spath}.{name}" if spath else name)
            if r is not _ABSENT:
                out[name] = r
        return out
    if kind in ("slice", "bytes"):
        if kind == "bytes" and isinstance(v, str):
            return _base64(st, v)
        if not isinstance(v, list):
            _type_error(st, _json_kind(v), t, sname, fstack)
            return _ABSENT
        out = []
        for i, e in enumerate(v):
            r = _decode(e, t.elem, st, sname, fstack, f"{spath}[{i}]")
            out.append(_zero(t.elem) if r is _ABSENT else r)
        return bytes(out) if kind == "bytes" else out
    if kind == "map":
        if not isinstance(v, dict):
            _type_error(st, _json_kind(v), t, sname, fstack)
            return _ABSENT
        out = {}
        for k, val in v.items():
            r = _decode(val, t.elem, st, sname, fstack, f"{spath}.{_key(k)}")
            out[_key(k)] = _zero(t.elem) if r is _ABSENT else r
        return out
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind == "string" and isinstance(v, str) or kind == "bool" and isinstance(v, bool):
        return v
    if kind == "int" and number:
        if isinstance(v, int) and t.lo <= v <= t.hi:
            return v
        _type_error(st, "number " + _number_text(v), t, sname, fstack)  # ParseInt failed or overflow
        return _ABSENT
    if kind == "float" and number:
        if abs(v) <= 3.4028234663852886e38:  # float32
            return float(v)
        _type_error(st, "number " + _number_text(v), t, sname, fstack)
        return _ABSENT
    _type_error(st, _json_kind(v), t, sname, fstack)
    return _ABSENT


def _strict_text(errors) -> str:
    return "strict decoding error: " + ", ".join(errors)


def _interpret(value):
    """SimpleMetaFactory.Interpret + ParseGroupVersion: (group, version, kind) of a document."""
    if not isinstance(value, dict):
        raise DecodeError(f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                          f"{_json_kind(value)} into Go value of type {_FIND_KIND}")
    found = {"apiVersion": "", "kind": ""}
    first_err = None
    for k, v in value.items():
        name = next((f for f in found if f.lower() == _key(k).lower()), None)
        if name is None or v is None:
            continue
        if isinstance(v, str):
            found[name] = v
        elif first_err is None:
            first_err = f"json: cannot unmarshal {_json_kind(v)} into Go struct field .{name} of type string"
    if first_err is not None:
        raise DecodeError(f"couldn't get version/kind; json parse error: {first_err}")
    gv = found["apiVersion"]
    if gv in ("", "/"):
        group, version = "", ""
    elif gv.count("/") == 0:
        group, version = "", gv
    elif gv.count("/") == 1:
        group, version = gv.split("/")
    else:
        raise DecodeError(f"unexpected GroupVersion string: {gv}")
    return group, version, found["kind"]


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def _new_object(value, kinds, default_kind=None):
    """Interpret a document and look its kind up in the scheduler's scheme: (kind, Go type)."""
    group, version, kind = _interpret(value)
    if default_kind is not None:
        kind = kind or default_kind
        if not version and not group:
            group, version = GROUP, VERSION
        if not version and group == GROUP:
            version = VERSION
    data = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if not kind:
        raise DecodeError(f"Object 'Kind' is missing in '{data}'")
    if not version:
        raise DecodeError(f"Object 'apiVersion' is missing in '{data}'")
    t = kinds.get(kind) if (group, version) == (GROUP, VERSION) else None
    if t is None:
        raise DecodeError(f"no kind {go_quote(kind)} is registered for version "
                          f"{go_quote(_group_version(group, version))} in scheme {go_quote(SCHEME_NAME)}")
    return kind, t


def _unmarshal(value, t: T):
    """kjson.UnmarshalStrict: (decoded, strict errors); DecodeError for a type or duration error."""
    st = _State()
    try:
        out = _decode(value, t, st, None, (), "")
    except _Fatal as err:
        raise DecodeError(str(err)) from None
    if st.saved is not None:
        raise DecodeError(st.saved)
    out.pop("apiVersion", None)
    out.pop("kind", None)
    return out, st.strict


def _decode_args(name: str, raw, kinds):
    """PluginConfig.decodeNestedObjects: (args, typed kind or None, strict error text or None)."""
    kind = name + "Args"
    if kind not in kinds:
        return raw, None, None
    if raw is None:
        return {}, kind, None
    try:
        parsed, t = _new_object(raw, kinds, kind)
        args, strict = _unmarshal(raw, t)
    except DecodeError as err:
        raise DecodeError(f"decoding args for plugin {name}: {err}") from None
    if parsed != kind:
        raise DecodeError(f"args for plugin {name} were not of type {kind}.{GROUP}, got {parsed}.{GROUP}")
    if strict:
        return args, kind, _strict_text([f"decoding args for plugin {name}: {_strict_text(strict)}"])
    return args, kind, None


def decode(doc, features=None) -> dict:
    """Decode a KubeSchedulerConfiguration document with the scheme of ``features``' version (None: the default
    version); DecodeError with kube's text when it is rejected.

    Each pluginConfig entry gets ``argsKind``: its registered args kind, or None for raw args.
    """
    kinds = scheme(versions.features(features))
    kind, t = _new_object(doc, kinds)
    cfg, strict = _unmarshal(doc, t)
    for i, prof in enumerate(cfg.get("profiles", ())):
        for j, pc in enumerate(prof.get("pluginConfig", ())):
            try:
                args, args_kind, nested = _decode_args(pc.get("name", ""), pc.get("args"), kinds)
            except DecodeError as err:
                raise DecodeError(f"decoding .profiles[{i}].pluginConfig[{j}]: {err}") from None
            pc["args"], pc["argsKind"] = args, args_kind
            if nested is not None:
                strict.append(f"decoding .profiles[{i}].pluginConfig[{j}]: {nested}")
    if strict:
        raise DecodeError(_strict_text(strict))
    if kind != "KubeSchedulerConfiguration":
        raise DecodeError(f"couldn't decode as KubeSchedulerConfiguration, got {API_VERSION}, Kind={kind}: ")
    return cfg
