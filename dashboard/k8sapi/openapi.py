"""Minimal OpenAPI documents: enough for kubectl apply, which downloads them before it sends anything.

Since 1.27 kubectl reads /openapi/v3: where a PATCH operation of the object's kind declares the
``fieldValidation`` query parameter, it leaves validation to the server and computes strategic merge patches
from its built-in types. Older ones (Debian's 1.20) read /openapi/v2 as protobuf and skip client-side
validation of kinds the document does not define. The documents carry no schemas (``kubectl explain`` has
nothing to show).
"""
from __future__ import annotations

import hashlib
import json


from .resources import RESOURCES

_QUERY = {"in": "query", "schema": {"type": "string", "uniqueItems": True}}
PARAMETERS = [dict(_QUERY, name=n) for n in ("dryRun", "fieldManager", "fieldValidation", "pretty")]


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _hash(group: str, version: str, release: str) -> str:
    return hashlib.sha256(f"{release}:{group}/{version}".encode()).hexdigest()[:16].upper()


def root(prefix: str, release: str, served_versions) -> dict:
    """/openapi/v3: one entry per group version the cluster serves (``served_versions``); ``prefix`` is the API's
    path (client-go requests it as is); ``release``: the Kubernetes release the cluster reports ("v1.36.2")."""
    out = {}
    for group, version in dict.fromkeys((r.group, r.version) for r in RESOURCES
                                        if r.group_version in served_versions):
        gv = _gv_path(group, version)
        out[gv] = {"serverRelativeURL": f"{prefix}/openapi/v3/{gv}?hash={_hash(group, version, release)}"}
    return {"paths": out}


def group_version(gv: str, release: str, served_versions) -> dict | None:
    """/openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>; None when the cluster does not serve it."""
    served = [r for r in RESOURCES if _gv_path(r.group, r.version) == gv and r.group_version in served_versions]
    if not served:
        return None
    paths = {}
    for r in served:
        base = f"/{gv}/namespaces/{{namespace}}/{r.plural}" if r.namespaced else f"/{gv}/{r.plural}"
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        paths[f"{base}/{{name}}"] = {"patch": {
            "operationId": f"patch{r.kind}", "x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk,
            "parameters": PARAMETERS, "responses": {"200": {"description": "OK"}}}}
        paths[base] = {"post": {
            "operationId": f"create{r.kind}", "x-kubernetes-action": "post", "x-kubernetes-group-version-kind": gvk,
            "parameters": PARAMETERS, "responses": {"201": {"description": "Created"}}}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": release}, "paths": paths,
            "components": {"schemas": {}}}



def _pb_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (lengths here are below 128: one varint byte)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def v2(accept: str, release: str) -> tuple:
    """/openapi/v2: (body, content type); gnostic's openapi_v2.Document when protobuf is asked for."""
    if "protobuf" in (accept or ""):
        info = _pb_field(1, b"Kubernetes") + _pb_field(2, release.encode())
        return _pb_field(1, b"2.0") + _pb_field(2, info) + _pb_field(8, b""), "application/octet-stream"
    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": release}, "paths": {}}
    return json.dumps(doc).encode(), "application/json"
