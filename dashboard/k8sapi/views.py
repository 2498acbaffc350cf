"""The Kubernetes-compatible API of a simulated cluster (/clusters/<name>/k8s/...) and its Connect page.

One view routes every API path the way kube-apiserver does: discovery (/version, /api, /apis, group versions),
then /api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]] and the same under /apis/<group>/<version>.
Errors are Status objects. ``kubectl get`` receives Tables (server-side printing) when it asks for them.
"""
from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import random
import threading
import time

import yaml
from asgiref.sync import sync_to_async
from django import forms
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from scheduler_core.documents import load_json, safe_yaml_load
from scheduler_core.objects import apifields, field
from scheduler_core.objects.field import go_quote, not_supported

from ..models import Cluster, ClusterToken
from ..services import credentials, kubeversions
from ..services.objectstore import json_bytes
from . import openapi, protobuf, registry, resources, tables
from .errors import ApiError
from .params import ListOptions
from .patch import PATCH_TYPES, STRATEGIC_MERGE_PATCH, apply_patch
from .selectors import FieldSelector, LabelSelector
from .watch import Query, Watcher, served

log = logging.getLogger("dashboard.k8sapi")
BOOKMARK_SECONDS = float(os.environ.get("SCHEDSCOPE_K8S_BOOKMARK_SECONDS", "60"))
MIN_REQUEST_TIMEOUT = 1800.0
RETURNS_DELETED_OBJECT = ("Pod", "Namespace", "Service")
UNAUTHENTICATED_PATHS = ("healthz", "livez", "readyz")   # /version names the cluster's version: a token's
JSON = "application/json"
BODY_TYPES = (JSON, "application/yaml", protobuf.MEDIA_TYPE)
FIELD_VALIDATIONS = ("", "Ignore", "Strict", "Warn")   # allowedFieldValidationValues, as kube lists them
STREAM_CHUNK_BYTES = 1 << 20
# One item encoding at a time: concurrent lists share the GIL anyway, and one CPU-bound thread instead of
# several leaves the event loop's thread a turn at the GIL every switch interval.
_ENCODING = threading.Lock()
MAX_BODY_BYTES = int(os.environ.get("SCHEDSCOPE_K8S_MAX_BODY_BYTES", str(3 * 1024 * 1024)))  # kube-apiserver's


def version_info(release: str) -> dict:
    """/version of a cluster whose scheduler runs Kubernetes ``release`` ("v1.36.2")."""
    major, minor = release.lstrip("v").split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": f"{release}+schedscope", "gitCommit": "",
            "gitTreeState": "clean", "buildDate": "", "goVersion": "", "compiler": "schedscope",
            "platform": "linux/amd64"}


def _release(pk: int) -> str:
    """The Kubernetes release the cluster's scheduler runs (its version's), as its API reports it."""
    return kubeversions.release(Cluster.objects.only("kind", "kube_version", "server_version").get(pk=pk))


def _flag(query, name: str) -> bool:
    """A boolean query parameter, as Go's strconv.ParseBool reads it."""
    return query.get(name) in ("1", "t", "T", "true", "TRUE", "True")


def _json(data, status: int = 200) -> HttpResponse:
    return HttpResponse(json_bytes(data), status=status, content_type="application/json")


def _json_list(request, envelope: dict, items) -> HttpResponse:
    """A list (``envelope`` without its items, then ``items``) as JSON, each item encoded on its own: one call
    encoding a list of hundreds of MB would hold the GIL, and so the event loop, for seconds. Under ASGI a body
    over STREAM_CHUNK_BYTES goes out in pieces of about that size, the event loop free between them."""
    parts = [json_bytes(envelope)[:-1], b',"items":[']
    for i, item in enumerate(items):
        if i:
            parts.append(b",")
        with _ENCODING:
            parts.append(json_bytes(item))
    parts.append(b"]}")
    if not isinstance(request, ASGIRequest) or sum(map(len, parts)) <= STREAM_CHUNK_BYTES:
        return HttpResponse(b"".join(parts), content_type=JSON)
    return StreamingHttpResponse(_pieces(parts), content_type=JSON)


async def _pieces(parts: list):
    piece, size = [], 0
    for part in parts:
        piece.append(part)
        size += len(part)
        if size >= STREAM_CHUNK_BYTES:
            yield b"".join(piece)
            piece, size = [], 0
            await asyncio.sleep(0)   # other requests' turn
    if piece:
        yield b"".join(piece)


def _error(err: ApiError) -> HttpResponse:
    return _json(err.status(), err.code)


def _success(res, name: str, uid: str) -> dict:
    details = {"name": name}
    if res.group:
        details["group"] = res.group
    details.update(kind=res.plural, uid=uid)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _negotiate(accept: str) -> str:
    """"Table", "PartialObjectMetadata" or "" (plain JSON), from the first acceptable media range."""
    for media in (accept or "").split(","):
        parts = [p.strip() for p in media.split(";")]
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if parts[0] not in ("application/json", "application/*", "*/*", ""):
            continue
        as_ = params.get("as", "")
        if not as_:
            return ""
        if params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            if as_ == "Table":
                return "Table"
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                return "PartialObjectMetadata"
    return ""


def _body(request, store, patch: bool = False, duplicates: dict | None = None):
    """The object a request sends, as a JSON dict: JSON, YAML or Kubernetes protobuf for create, update, delete,
    binding and eviction (kube-apiserver's serializers), JSON for a PATCH (whose media type names the patch
    kind, see _patch; protobuf read with the field tables of ``store``'s version). Other media types get 415, bodies
    over MAX_BODY_BYTES 413. ``duplicates``: filled with the names a JSON body gives twice in one object
    (``apifields.load_with_duplicates``)."""
    if len(request.body) > MAX_BODY_BYTES:
        raise ApiError.too_large(MAX_BODY_BYTES)
    ctype = JSON if patch else (request.content_type or JSON).lower()
    try:
        if ctype == protobuf.MEDIA_TYPE:
            return protobuf.decode(request.body, store.features.version)
        if ctype == "application/yaml":
            return safe_yaml_load(request.body or b"")
        if ctype == JSON and duplicates is not None:
            body, found = apifields.load_with_duplicates(request.body or b"null")
            duplicates.update(found)
            return body
        if ctype == JSON:
            return load_json(request.body or b"null")
    except (ValueError, yaml.YAMLError) as err:
        raise ApiError.bad_request(f"the body of the request was in an unknown format: {err}") from None
    raise ApiError.unsupported_media_type(BODY_TYPES)


def _field_validation(request, options: str) -> str:
    """The write's ``fieldValidation`` (Ignore, Warn or Strict; Warn when not given), refused as
    ValidateFieldValidation refuses another value (422 of the ``options`` kind, CreateOptions or UpdateOptions)."""
    value = request.GET.get("fieldValidation", "")
    if value not in FIELD_VALIDATIONS:
        err = not_supported("fieldValidation", value, FIELD_VALIDATIONS)
        raise ApiError(422, "Invalid", f'{options}.meta.k8s.io "" is invalid: {err.path}: {err.body()}',
                       {"group": "meta.k8s.io", "kind": options,
                        "causes": [{"reason": "FieldValueNotSupported", "message": err.body(), "field": err.path}]})
    return value or "Warn"


def _decoded_body(request, store, res, options: str) -> tuple:
    """A create's or update's body as the cluster's kube-apiserver decodes it (``apifields.decode`` at its
    version): with ``fieldValidation`` Strict, a field it does not know or a name given twice is refused (400, its
    strict decoding error); with Warn each is a warning; with Ignore it is dropped silently. (body, warnings)."""
    directive = _field_validation(request, options)
    duplicates = {}
    body = _body(request, store, duplicates=duplicates if directive != "Ignore" else None)
    if not isinstance(body, dict):
        return body, []
    kind = body.get("kind") or res.kind
    group_version = body.get("apiVersion") or res.group_version
    decoded = apifields.decode(store.features.version, group_version, kind, body, duplicates)
    if decoded.errors and directive == "Strict":
        raise ApiError.bad_request(f'{kind} in version "{group_version.rsplit("/", 1)[-1]}" cannot be handled as a '
                                   f'{res.kind}: strict decoding error: {", ".join(decoded.errors)}')
    return decoded.obj, decoded.errors if directive == "Warn" else []


def _warned(response: HttpResponse, warnings: list) -> HttpResponse:
    """The response with each warning in a ``Warning`` header, as kube-apiserver sends them (code 299, agent
    "-", the text quoted)."""
    if warnings:
        response["Warning"] = ", ".join(f"299 - {go_quote(w)}" for w in warnings)
    return response


def _encode_continue(rv: int, key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key}).encode()).decode()


def _decode_continue(token: str):
    try:
        data = load_json(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError):
        raise ApiError.bad_request("continue key is not valid: illegal base64 data") from None


class _Route:
    __slots__ = ("res", "namespace", "name", "sub")

    def __init__(self, res, namespace, name, sub):
        self.res, self.namespace, self.name, self.sub = res, namespace, name, sub


def _route(group: str, version: str, rest: list):
    """The resource, namespace, name and subresource of a path below a group version (None: not served)."""
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces" and (
            (group, version, rest[2]) in resources.BY_PATH or (not group and rest[2] == "bindings")):
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    if not group and rest[0] == "bindings":
        return _Route("bindings", namespace, rest[1] if len(rest) > 1 else None, None) if namespace else None
    res = resources.BY_PATH.get((group, version, rest[0]))
    if res is None:
        return None
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if name is not None and res.namespaced and namespace is None:
        return None
    if namespace is not None and not res.namespaced:
        return None
    return _Route(res, namespace, name, sub)


@csrf_exempt
async def api(request, name: str, path: str, token: str = ""):
    """Every API request of one simulated cluster (the token in the Authorization header or the path)."""
    parts = [p for p in path.split("/") if p]
    try:
        request.get_host()   # a Host outside ALLOWED_HOSTS: 400, as Django answers the pages
    except DisallowedHost:
        return _error(ApiError.bad_request("Invalid HTTP_HOST header"))
    try:
        if len(parts) == 1 and parts[0] in UNAUTHENTICATED_PATHS:
            return HttpResponse("ok", content_type="text/plain")
        # The token first, before the cluster is loaded. No cluster of that name answers as a wrong token does, and
        # as late: its token is looked up too, among no cluster's, so that neither the answer nor its time tells
        # which cluster names exist.
        pk = await registry.cluster_id(name)
        await registry.check_token(f"Bearer {token}" if token else request.headers.get("Authorization", ""),
                                   registry.NO_CLUSTER if pk is None else pk)
        store, pk = await registry.lookup(name)
        # off the event loop: a big list (encoding, selectors) must not hold up every other request of the process
        return await sync_to_async(_dispatch, thread_sensitive=False)(request, store, parts, pk)
    except ApiError as err:
        return _error(err)
    except Exception:  # kube-apiserver answers an unexpected failure with a Status too (without Python's text)
        log.exception("k8s API request %s %s of cluster %s failed", request.method, f"/{path}", name)  # no token
        return _error(ApiError(500, "InternalError", "Internal error occurred: the request failed on the server "
                                                     "(see its log)"))


def _dispatch(request, store, parts: list, pk: int):
    if parts == ["version"]:
        return _json(version_info(_release(pk)))
    if parts == ["api"]:
        host = request.get_host()
        return _json({"kind": "APIVersions", "versions": ["v1"],
                      "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]})
    if parts == ["apis"]:
        return _json(resources.api_group_list(store.features.version.api_group_versions))
    if parts == ["openapi", "v2"]:
        body, ctype = openapi.v2(request.headers.get("Accept", ""), _release(pk))
        return HttpResponse(body, content_type=ctype)
    if parts[:2] == ["openapi", "v3"]:
        release = _release(pk)
        served_versions = store.features.version.api_group_versions
        doc = (openapi.root(request.path.rstrip("/")[:-len("/openapi/v3")], release, served_versions)
               if len(parts) == 2 else openapi.group_version("/".join(parts[2:]), release, served_versions))
        if doc is None:
            raise ApiError.page_not_found()
        return _json(doc)
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 2:
        if len(parts) == 2:
            doc = resources.api_group(parts[1], store.features.version.api_group_versions)
            if doc is None:
                raise ApiError.page_not_found()
            return _json(doc)
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise ApiError.page_not_found()
    if not rest:
        doc = resources.api_resource_list(group, version, store.features.version.api_group_versions)
        if doc is None:
            raise ApiError.page_not_found()
        return _json(doc)
    route = _route(group, version, rest)
    if route is None or not apifields.served(store.features.version, f"{group}/{version}" if group else version):
        raise ApiError.page_not_found()
    if request.method in WRITE_METHODS:
        return registry.write(store, pk, lambda: _resource(request, store, route))
    registry.catch_up(store, pk)   # a read: the cache caught up with the store first
    return _resource(request, store, route)


def _resource(request, store, route):
    """A request of a resource: ``store`` is caught up with the cluster's store (a write: in ``registry.write``)."""
    method = request.method
    q = request.GET
    dry_run = q.get("dryRun") == "All"
    if route.res == "bindings":
        if method != "POST" or route.name is not None:
            raise ApiError.method_not_allowed()
        return _bind(store, resources.BY_PATH[("", "v1", "pods")], route.namespace, None, _body(request, store))
    res = route.res
    if route.name is None:
        if method == "GET":
            options = ListOptions(q)
            if _flag(q, "watch"):
                return _watch(request, store, res, route.namespace or "", options)
            return _list(request, store, res, route.namespace or "", options)
        if method == "POST":
            body, warnings = _decoded_body(request, store, res, "CreateOptions")
            return _warned(_json(served(res, store.create(res, route.namespace or "", body, dry_run)), 201),
                           warnings)
        if method == "DELETE":
            ListOptions(q)  # decoded for its errors, as kube decodes it
            return _delete_collection(request, store, res, route.namespace or "", dry_run)
        raise ApiError.method_not_allowed()
    ns, name = route.namespace or "", route.name
    if route.sub == "binding" and res.kind == "Pod":
        if method != "POST":
            raise ApiError.method_not_allowed()
        return _bind(store, res, ns, name, _body(request, store))
    if route.sub == "eviction" and res.kind == "Pod":
        if method != "POST":
            raise ApiError.method_not_allowed()
        store.evict_pod(res, ns, name, _body(request, store), dry_run)
        return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}, 201)
    if route.sub not in (None, "status") or (route.sub == "status" and not res.status):
        raise ApiError.page_not_found()
    sub = route.sub or ""
    if method == "GET":
        return _json(_view(request, res, _get(store, res, ns, name)))
    if method == "PUT":
        body, warnings = _decoded_body(request, store, res, "UpdateOptions")
        return _warned(_json(served(res, store.update(res, ns, name, body, sub, dry_run))), warnings)
    if method == "PATCH":
        obj, warnings = _patch(request, store, res, ns, name, sub, dry_run)
        return _warned(_json(served(res, obj)), warnings)
    if method == "DELETE" and not sub:
        body = _body(request, store) if request.body else {}
        deleted = store.delete(res, ns, name, (body or {}).get("preconditions"), dry_run)
        if res.kind in RETURNS_DELETED_OBJECT:
            return _json(served(res, deleted))
        return _json(_success(res, name, (deleted.get("metadata") or {}).get("uid", "")))
    raise ApiError.method_not_allowed()


WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def _get(store, res, namespace: str, name: str) -> dict:
    with store.lock:
        obj = store.get(res.store, f"{namespace}/{name}" if res.namespaced else name)
    if obj is None:
        raise ApiError.not_found(res, name)
    return obj


def _view(request, res, obj: dict) -> dict:
    """A single object in the representation the client accepts."""
    rep = _negotiate(request.headers.get("Accept", ""))
    out = served(res, obj)
    if rep == "Table":
        rv = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        return tables.table(res.kind, [(out, obj)], time.time(), request.GET.get("includeObject", "Metadata"), rv)
    if rep == "PartialObjectMetadata":
        return tables.partial_metadata(out)
    return out


def _patch(request, store, res, namespace: str, name: str, sub: str, dry_run: bool) -> tuple:
    """A PATCH's stored object and its warnings. A strategic merge patch is checked as ``fieldValidation`` asks
    (``_strategic_patch_errors``); a JSON or merge patch's unknown fields are dropped silently."""
    ctype = (request.content_type or "").lower()
    if ctype not in PATCH_TYPES:
        raise ApiError.unsupported_media_type(PATCH_TYPES)
    directive = _field_validation(request, "PatchOptions")
    checked = ctype == STRATEGIC_MERGE_PATCH and directive != "Ignore"
    duplicates = {}
    body = _body(request, store, patch=True, duplicates=duplicates if checked else None)
    with store.lock:
        current = served(res, _get(store, res, namespace, name))
        patched = apply_patch(ctype, current, body, res.kind)
        if not isinstance(patched, dict):
            raise ApiError.bad_request("the patched object is not an object")
        errors = _strategic_patch_errors(store, res, body, duplicates, patched) if checked else []
        if errors and directive == "Strict":
            err = field.invalid("patch", apifields.go_format(body), f"strict decoding error: {', '.join(errors)}")
            raise ApiError(422, "Invalid", f' "" is invalid: {err.path}: {err.body()}',
                           {"causes": [{"reason": err.reason, "message": err.body(), "field": err.path}]})
        return store.update(res, namespace, name, patched, sub, dry_run), errors


def _strategic_patch_errors(store, res, patch, duplicates: dict, patched: dict) -> list:
    """applyPatchToObject's strict errors: the names the patch gives twice (UnmarshalStrict into a map), then the
    fields the patched object has that the cluster's version does not know (FromUnstructuredWithValidation: sorted
    by their text)."""
    unknown = apifields.decode(store.features.version, patched.get("apiVersion") or res.group_version,
                               patched.get("kind") or res.kind, patched).errors
    return apifields.duplicate_fields(patch, duplicates) + sorted(unknown)


def _bind(store, pods, namespace: str, name, body) -> HttpResponse:
    if not isinstance(body, dict):
        raise ApiError.bad_request("the body of the request was in an unknown format")
    pod_name = ((body.get("metadata") or {}).get("name")) or name or ""
    if name is not None and pod_name != name:
        raise ApiError.bad_request(f"the name of the object ({pod_name}) does not match the name on the URL ({name})")
    store.bind_pod(pods, namespace, pod_name, body)
    return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201)


def _query(request, res, namespace: str) -> Query:
    q = request.GET
    return Query(res, namespace, LabelSelector(q.get("labelSelector")),
                 FieldSelector(q.get("fieldSelector"), res.field_labels))


def _selected(store, query: Query, at_rv: int | None = None) -> tuple:
    """(resourceVersion, matching objects by namespace and name): now, or as they were at ``at_rv``."""
    res = query.res
    with store.lock:
        if at_rv is None:
            rv, objs = store.rv, store.items(res.store)
        else:
            rv, objs = at_rv, store.items_at(res.store, at_rv, res.namespaced)
        items = [o for o in objs if query.matches(o)]
    items.sort(key=lambda o: ((o.get("metadata") or {}).get("namespace", ""),
                              (o.get("metadata") or {}).get("name", "")))
    return rv, items


def _list(request, store, res, namespace: str, options: ListOptions) -> HttpResponse:
    """A list, paged as kube-apiserver pages it: ``limit`` items, then a ``continue`` token that serves the rest
    as of the first page's resourceVersion (410 once the change log no longer reaches back to it);
    ``remainingItemCount`` only without selectors (it would count objects the selectors leave out)."""
    q = request.GET
    query = _query(request, res, namespace)
    if q.get("resourceVersionMatch") == "Exact" and q.get("resourceVersion") not in (None, "", str(store.rv)):
        raise ApiError.expired(f"too old resource version: {q.get('resourceVersion')} ({store.rv})")
    limit = options.limit
    token = q.get("continue")
    if token:
        token_rv, start = _decode_continue(token)
        if token_rv < store.oldest_rv(res.store):
            raise ApiError.expired("The provided continue parameter is too old to display a consistent list result. "
                                   "You can start a new list without the continue parameter.")
        rv, items = _selected(store, query, token_rv)
        items = [o for o in items if _item_key(o) > start]
    else:
        rv, items = _selected(store, query)
    next_token, remaining = "", 0
    if 0 < limit < len(items):
        remaining = len(items) - limit
        items = items[:limit]
        next_token = _encode_continue(rv, _item_key(items[-1]))
    rep = _negotiate(request.headers.get("Accept", ""))
    if rep == "Table":
        rows = [(served(res, o), o) for o in items]
        return _json(tables.table(res.kind, rows, time.time(), q.get("includeObject", "Metadata"), str(rv),
                                  next_token))
    meta = {"resourceVersion": str(rv)}
    if next_token:
        meta["continue"] = next_token
        if not query.labels.requirements and not query.fields.terms:
            meta["remainingItemCount"] = remaining
    if rep == "PartialObjectMetadata":
        envelope = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
        return _json_list(request, envelope, (tables.partial_metadata(served(res, o)) for o in items))
    return _json_list(request, {"kind": f"{res.kind}List", "apiVersion": res.group_version, "metadata": meta},
                      (served(res, o) for o in items))


def _item_key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f'{meta.get("namespace", "")}/{meta.get("name", "")}'


def _delete_collection(request, store, res, namespace: str, dry_run: bool) -> HttpResponse:
    query = _query(request, res, namespace)
    with store.lock:
        _rv, items = _selected(store, query)
        deleted = []
        for o in items:
            meta = o.get("metadata") or {}
            deleted.append(served(res, store.delete(res, meta.get("namespace", ""), meta["name"], None, dry_run)))
        rv = store.rv
    return _json({"kind": f"{res.kind}List", "apiVersion": res.group_version,
                  "metadata": {"resourceVersion": str(rv)}, "items": deleted})


def _watch(request, store, res, namespace: str, options: ListOptions):
    q = request.GET
    timeout = options.timeout_seconds or MIN_REQUEST_TIMEOUT * (1 + random.random())
    w = Watcher(store, _query(request, res, namespace), q.get("resourceVersion", ""),
                _flag(q, "allowWatchBookmarks"), timeout, BOOKMARK_SECONDS,
                as_table=_negotiate(request.headers.get("Accept", "")) == "Table",
                include_object=q.get("includeObject", "Metadata"),
                send_initial=_flag(q, "sendInitialEvents"))
    stream = w.stream_async() if isinstance(request, ASGIRequest) else w.stream_sync()
    response = StreamingHttpResponse(stream, content_type="application/json")
    response["Cache-Control"] = "no-cache, private"
    return response


# -- Connect ----------------------------------------------------------------------------------------
class TokenForm(forms.Form):
    """A new API token of a simulated cluster."""

    name = forms.CharField(max_length=100, initial="kubectl", help_text="what it is for, e.g. kubectl, ci")


def api_base(request, cluster: Cluster) -> str:
    """The address of the cluster's API as this request reached the server."""
    return request.build_absolute_uri(f"/clusters/{cluster.name}/k8s").rstrip("/")


def _create_token(request, cluster: Cluster, form: TokenForm) -> str:
    """A new token named as the form says; its kubeconfig (the only time the token is shown)."""
    _row, token = credentials.create_token(cluster, form.cleaned_data["name"], request.user)
    return credentials.kubeconfig_for_token(api_base(request, cluster), cluster.name, token)


@never_cache
@require_POST
def kubeconfig(request, name: str):
    """Create a token and download its kubeconfig (``<cluster>.kubeconfig``); the token is not shown again."""
    cluster = get_object_or_404(Cluster, name=name, kind=Cluster.SIMULATED)
    form = TokenForm(request.POST)
    if not form.is_valid():
        return connect_page(request, cluster, form, status=400)
    response = HttpResponse(_create_token(request, cluster, form), content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="{cluster.name}.kubeconfig"'
    return response


@never_cache
def connect(request, name: str):
    """The Connect page: how to point kubectl and a scheduler at this simulated cluster; its API tokens (create,
    shown once; revoke)."""
    cluster = get_object_or_404(Cluster, name=name, kind=Cluster.SIMULATED)
    if request.method != "POST":
        return connect_page(request, cluster, TokenForm())
    if "revoke" in request.POST:
        if not request.POST["revoke"].isdigit():
            raise Http404("no such token")
        row = get_object_or_404(ClusterToken, cluster=cluster, pk=int(request.POST["revoke"]))
        credentials.revoke_token(row, request.user)
        return redirect("k8s-connect", cluster.name)
    form = TokenForm(request.POST)
    if not form.is_valid():
        return connect_page(request, cluster, form, status=400)
    return connect_page(request, cluster, TokenForm(), created=_create_token(request, cluster, form))


def connect_page(request, cluster: Cluster, form: TokenForm, created: str = "", status: int = 200):
    """The Connect page with the token form, the cluster's tokens (masked) and ``created``, a new kubeconfig."""
    return render(request, "k8sapi/connect.html", {
        "cluster": cluster, "form": form, "created": created, "base": api_base(request, cluster),
        "tokens": ClusterToken.objects.filter(cluster=cluster).select_related("created_by")}, status=status)
