"""PATCH bodies: JSON merge patch (RFC 7386), strategic merge patch (kube's merge keys), JSON patch (RFC 6902)."""
from __future__ import annotations

import copy

from .errors import ApiError

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)

# Lists that strategic merge patch merges instead of replacing: field path -> merge key (None: a set of primitives).
# From the patchStrategy/patchMergeKey tags of k8s.io/api core/v1 and meta/v1 types.
_CONTAINER_LISTS = {"ports": "containerPort", "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath"}
_COMMON = {("metadata", "ownerReferences"): "uid", ("metadata", "finalizers"): None,
           ("status", "conditions"): "type"}
_POD = {("spec", "containers"): "name", ("spec", "initContainers"): "name", ("spec", "ephemeralContainers"): "name",
        ("spec", "volumes"): "name", ("spec", "imagePullSecrets"): "name", ("spec", "hostAliases"): "ip",
        ("spec", "topologySpreadConstraints"): "topologyKey", ("spec", "schedulingGates"): "name",
        ("spec", "resourceClaims"): "name", ("status", "podIPs"): "ip", ("status", "hostIPs"): "ip"}
for _c in ("containers", "initContainers", "ephemeralContainers"):
    for _f, _k in _CONTAINER_LISTS.items():
        _POD[("spec", _c, _f)] = _k
_NODE = {("spec", "podCIDRs"): None, ("status", "addresses"): "type"}
MERGE_LISTS = {"Pod": {**_COMMON, **_POD}, "Node": {**_COMMON, **_NODE}}
_MISSING = object()


def merge_patch(original, patch):
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(original: dict, patch: dict, kind: str) -> dict:
    """kube's strategic merge patch for a built-in kind: lists with a merge key merge item by item."""
    if not isinstance(patch, dict):
        raise ApiError.bad_request("the body of the request was in an unknown format")
    return _smp_map(original, patch, (), MERGE_LISTS.get(kind, _COMMON))


def _smp_map(original, patch: dict, path: tuple, lists: dict):
    directive = patch.get("$patch")
    if directive == "replace":
        return _strip({k: v for k, v in patch.items() if k != "$patch"}, path, lists)
    if directive == "delete":
        return _MISSING
    if directive not in (None, "merge"):
        raise ApiError.bad_request(f"Unknown patch type: {directive} in map: {patch}")
    result = dict(original) if isinstance(original, dict) else {}
    retain = patch.get("$retainKeys")
    if retain is not None:
        result = {k: v for k, v in result.items() if k in retain}
    orders = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            result[field] = [x for x in result.get(field) or [] if x not in value]
            continue
        if value is None:
            result.pop(key, None)
            continue
        sub = path + (key,)
        cur = result.get(key)
        if isinstance(value, dict):
            merged = _smp_map(cur if isinstance(cur, dict) else {}, value, sub, lists)
            if merged is _MISSING:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list) and sub in lists:
            result[key] = _smp_list(cur if isinstance(cur, list) else [], value, lists[sub], sub, lists)
        else:
            result[key] = _strip(value, sub, lists)
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _reorder(result[field], order, lists.get(path + (field,)))
    return result


def _smp_list(original: list, patch: list, key, path: tuple, lists: dict) -> list:
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [_strip(x, path, lists) for x in patch if not (isinstance(x, dict) and x.get("$patch") == "replace")]
    if key is None:  # a set of primitives
        return list(original) + [x for x in patch if x not in original]
    result = [copy.deepcopy(x) for x in original]
    for item in patch:
        if not isinstance(item, dict):
            raise ApiError.bad_request(f"unable to find api field in struct for the list {path[-1]}: "
                                       f"expected a map, got {item!r}")
        if key not in item:
            raise ApiError.bad_request(f"map: {item} does not contain declared merge key: {key}")
        idx = next((i for i, x in enumerate(result) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            result = [x for x in result if not (isinstance(x, dict) and x.get(key) == item[key])]
        elif idx is None:
            result.append(_strip(item, path, lists))
        else:
            merged = _smp_map(result[idx], item, path, lists)
            if merged is _MISSING:
                del result[idx]
            else:
                result[idx] = merged
    return result


def _reorder(items: list, order: list, key) -> list:
    def ident(x):
        return x.get(key) if key is not None and isinstance(x, dict) else x
    wanted = [o.get(key) if key is not None and isinstance(o, dict) else o for o in order]
    rank = {w: i for i, w in enumerate(wanted)}
    listed = sorted((x for x in items if ident(x) in rank), key=lambda x: rank[ident(x)])
    return listed + [x for x in items if ident(x) not in rank]


def _strip(value, path: tuple, lists: dict):
    """A new value from a patch, with patch directives removed."""
    if isinstance(value, dict):
        out = _smp_map({}, value, path, lists)
        return {} if out is _MISSING else out
    if isinstance(value, list):
        return [_strip(x, path, lists) for x in value]
    return value


def _pointer(path: str) -> list:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError.unprocessable(f"the server rejected our request due to an error in our request: "
                                     f"JSON pointer must start with '/': {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts: list):
    for p in parts:
        if isinstance(doc, dict) and p in doc:
            doc = doc[p]
        elif isinstance(doc, list) and p.isdigit() and int(p) < len(doc):
            doc = doc[int(p)]
        else:
            raise ApiError.unprocessable(f"the server rejected our request due to an error in our request: "
                                         f"doc is missing path: /{'/'.join(parts)}")
    return doc


def json_patch(original: dict, ops) -> dict:
    """RFC 6902 operations: add, remove, replace, move, copy, test."""
    if not isinstance(ops, list):
        raise ApiError.bad_request("the body of the request was in an unknown format")
    doc = copy.deepcopy(original)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise ApiError.bad_request(f"invalid JSON patch operation: {op!r}")
        kind, parts = op["op"], _pointer(op["path"])
        if kind in ("move", "copy"):
            src = _pointer(op.get("from", ""))
            value = copy.deepcopy(_walk(doc, src))
            if kind == "move":
                doc = _remove(doc, src)
            doc = _add(doc, parts, value)
        elif kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            doc = _remove(doc, parts)
        elif kind == "replace":
            _walk(doc, parts)
            doc = _add(_remove(doc, parts), parts, copy.deepcopy(op.get("value")))
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise ApiError.unprocessable(f"the server rejected our request due to an error in our request: "
                                             f"testing value {op['path']} failed")
        else:
            raise ApiError.bad_request(f"Unexpected kind: {kind}")
    return doc


def _add(doc, parts: list, value):
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise ApiError.unprocessable(f"the server rejected our request due to an error in our request: "
                                         f"add operation index out of bounds: {last}")
    else:
        raise ApiError.unprocessable("the server rejected our request due to an error in our request: "
                                     f"doc is missing path: /{'/'.join(parts)}")
    return doc


def _remove(doc, parts: list):
    if not parts:
        return None
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    else:
        raise ApiError.unprocessable("the server rejected our request due to an error in our request: "
                                     f"doc is missing path: /{'/'.join(parts)}")
    return doc


def apply_patch(content_type: str, original: dict, body, kind: str) -> dict:
    """The patched object for a PATCH request of ``content_type``."""
    if content_type == JSON_PATCH:
        return json_patch(original, body)
    if not isinstance(body, dict):
        raise ApiError.bad_request("the body of the request was in an unknown format")
    if content_type == MERGE_PATCH:
        return merge_patch(original, body)
    return strategic_merge_patch(original, body, kind)
