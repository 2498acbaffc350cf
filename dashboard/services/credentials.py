"""Cluster credentials: real clusters' kubeconfig documents and simulated clusters' API tokens.

A kubeconfig document is stored encrypted (``dashboard.crypto``), with a summary that holds no secret (server
address, context, user); it is decrypted only to build a ``KubeCluster``. A simulated cluster's API token is shown
once, when it is made, and stored as its SHA-256 digest; it can be revoked. Every change goes to the audit log,
never with the secret; nothing here logs a secret or puts one in an error message.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from datetime import timedelta
from urllib.parse import urlsplit

import yaml
from django.utils import timezone

from scheduler_core.documents import safe_yaml_load
from scheduler_core.outbound import host_problem

from .. import crypto
from ..access import EDITOR, at_least, cluster_role
from ..models import Cluster, ClusterToken
from ..profiles.models import AuditLog

TOKEN_BYTES = 24                  # 48 hex characters
PREFIX_CHARS = 8
TOKEN_CACHE_SECONDS = 1.0         # a revoked token is refused by every process within this
LAST_USED_RESOLUTION = timedelta(seconds=60)
EXECUTING_AUTH = ("exec", "auth-provider")
# Fields whose value is a path the kubernetes client reads on the worker: refused in stored documents (their
# ``-data`` form, or ``token``, carries the content instead).
FILE_FIELDS = {"users": ("user", {"tokenFile": "token", "client-certificate": "client-certificate-data",
                                  "client-key": "client-key-data"}),
               "clusters": ("cluster", {"certificate-authority": "certificate-authority-data"})}
KUBECONFIG_FILE_MAX_BYTES = 1 << 20

_cache_guard = threading.Lock()
_valid_tokens = {}                # (cluster id, digest) -> monotonic expiry


class KubeconfigInvalid(ValueError):
    """A kubeconfig document that is not YAML or not a usable kubeconfig; ``path`` names the field."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class KubeconfigUnreadable(Exception):
    """A cluster's stored kubeconfig cannot be decrypted (wrong or missing key)."""


def audit(user, action: str, cluster: Cluster | None, **detail) -> None:
    """An audit-log entry about credentials (of ``cluster``, if given); ``detail`` must hold no secret."""
    if cluster is not None:
        detail = {"cluster": cluster.name, **detail}
    AuditLog.objects.create(user=user if user is not None and user.is_authenticated else None, action=action,
                            cluster=cluster, detail=detail)


# -- kubeconfig documents of real clusters -----------------------------------------------------------------
def _named_entries(doc: dict, key: str, inner: str) -> dict:
    entries = doc.get(key)
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise KubeconfigInvalid(key, "expected a list")
    out = {}
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict):
            raise KubeconfigInvalid(where, "expected an object with name and " + inner)
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise KubeconfigInvalid(f"{where}.name", "required")
        body = entry.get(inner)
        if not isinstance(body, dict):
            raise KubeconfigInvalid(f"{where}.{inner}", "expected an object")
        out[entry["name"]] = (where, body)
    return out


def _is_http_url(value) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    try:
        parts.port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _refuse_worker_files(doc: dict) -> None:
    """A stored document must not make the workers read their files or run commands, whatever its context."""
    for key, (inner, fields) in FILE_FIELDS.items():
        for where, body in _named_entries(doc, key, inner).values():
            for field, instead in fields.items():
                if field in body:
                    raise KubeconfigInvalid(f"{where}.{inner}.{field}", "not accepted: the workers would read a "
                                            f"file of theirs; use {instead}")
            if key == "users":
                for field in EXECUTING_AUTH:
                    if field in body:
                        raise KubeconfigInvalid(f"{where}.{inner}.{field}", "not accepted: the workers would run "
                                                "a command or plugin; use a token or a client certificate")


def parse_kubeconfig(text: str, context: str = "", stored: bool = True) -> dict:
    """The kubeconfig in ``text`` (YAML or JSON), checked as the kubernetes client will use it with ``context``
    (else its current-context). A ``stored`` document (not an admin's file on the workers) may name no file and
    no command (``FILE_FIELDS``, ``EXECUTING_AUTH``). Raises KubeconfigInvalid with the field path; messages
    quote no secret values."""
    try:
        doc = safe_yaml_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise KubeconfigInvalid("", f"not valid YAML{where}: {getattr(err, 'problem', None) or 'syntax error'}") \
            from None
    if not isinstance(doc, dict):
        raise KubeconfigInvalid("", "expected a kubeconfig (a YAML object with clusters, users and contexts)")
    if doc.get("kind", "Config") != "Config":
        raise KubeconfigInvalid("kind", 'expected "Config"')
    clusters = _named_entries(doc, "clusters", "cluster")
    users = _named_entries(doc, "users", "user")
    contexts = _named_entries(doc, "contexts", "context")
    name = context or doc.get("current-context")
    if not name:
        raise KubeconfigInvalid("current-context", "not set, and no context was given")
    if not isinstance(name, str) or name not in contexts:
        raise KubeconfigInvalid("contexts", f"no context named {name!r}")
    where, ctx = contexts[name]
    if not isinstance(ctx.get("cluster"), str) or ctx["cluster"] not in clusters:
        raise KubeconfigInvalid(f"{where}.context.cluster", "names no entry of clusters")
    cwhere, cluster = clusters[ctx["cluster"]]
    if not _is_http_url(cluster.get("server")):
        raise KubeconfigInvalid(f"{cwhere}.cluster.server", "expected an http(s) URL")
    problem = host_problem(urlsplit(cluster["server"]).hostname or "")
    if problem:
        raise KubeconfigInvalid(f"{cwhere}.cluster.server", f"{problem}: refused for API servers")
    if ctx.get("user") is not None and (not isinstance(ctx["user"], str) or ctx["user"] not in users):
        raise KubeconfigInvalid(f"{where}.context.user", "names no entry of users")
    if stored:
        _refuse_worker_files(doc)
    return doc


def summarize(doc: dict, context: str = "") -> str:
    """Server (scheme, host and port only), context and user of a parsed kubeconfig: nothing secret."""
    name = context or doc["current-context"]
    ctx = next(c["context"] for c in doc["contexts"] if c["name"] == name)
    server = next(c["cluster"]["server"] for c in doc["clusters"] if c["name"] == ctx["cluster"])
    parts = urlsplit(server)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    origin = f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}"
    text = f"server {origin}, context {name}, user {ctx.get('user') or '(none)'}"
    limit = Cluster._meta.get_field("kubeconfig_summary").max_length
    return text if len(text) <= limit else text[:limit - 1] + "…"


def set_kubeconfig(cluster: Cluster, text: str, user=None) -> None:
    """Store ``text`` (parsed and checked first, against the cluster's kube_context) encrypted, or clear the
    stored document when ``text`` is empty; saves the cluster and audits the change."""
    if not text.strip():
        if not cluster.kubeconfig_secret:
            return
        cluster.kubeconfig_secret = cluster.kubeconfig_summary = ""
        cluster.save(update_fields=["kubeconfig_secret", "kubeconfig_summary"])
        audit(user, "kubeconfig.clear", cluster)
        return
    summary = summarize(parse_kubeconfig(text, cluster.kube_context), cluster.kube_context)
    action = "kubeconfig.change" if cluster.kubeconfig_secret else "kubeconfig.set"
    cluster.kubeconfig_secret = crypto.encrypt(text)
    cluster.kubeconfig_summary = summary
    cluster.save(update_fields=["kubeconfig_secret", "kubeconfig_summary"])
    audit(user, action, cluster, summary=summary)


def kubeconfig_status(cluster: Cluster) -> str:
    """What may be shown of a cluster's kubeconfig: "set: <summary>", the path, or "not set"."""
    if cluster.kubeconfig_secret:
        return f"set: {cluster.kubeconfig_summary}"
    if cluster.kubeconfig:
        return f"file {cluster.kubeconfig}"
    return "not set"


def _unreadable(cluster: Cluster, err: crypto.DecryptionFailed) -> KubeconfigUnreadable:
    return KubeconfigUnreadable(f"cluster {cluster.name}: the stored kubeconfig cannot be decrypted: {err}")


def _decrypted(cluster: Cluster) -> str:
    try:
        return crypto.decrypt(cluster.kubeconfig_secret)
    except crypto.DecryptionFailed as err:
        raise _unreadable(cluster, err) from None


def kubeconfig_document(cluster: Cluster) -> dict:
    """The decrypted kubeconfig of ``cluster``, checked again (a document stored before a rule existed is
    refused: KubeconfigInvalid); KubeconfigUnreadable names the cluster, never the content."""
    return parse_kubeconfig(_decrypted(cluster), cluster.kube_context)


def check_kubeconfig_file(cluster: Cluster) -> None:
    """KubeconfigInvalid unless the cluster's kubeconfig path (an admin's file on the workers) holds a kubeconfig
    usable with its context; its file fields and commands are the admin's choice. The content is never quoted."""
    path = cluster.kubeconfig
    try:
        with open(path, "rb") as f:
            data = f.read(KUBECONFIG_FILE_MAX_BYTES + 1)
    except OSError as err:
        raise KubeconfigInvalid("", f"file {path} cannot be read: {err.strerror}") from None
    if len(data) > KUBECONFIG_FILE_MAX_BYTES:
        raise KubeconfigInvalid("", f"file {path} is larger than {KUBECONFIG_FILE_MAX_BYTES} bytes")
    try:
        parse_kubeconfig(data.decode("utf-8"), cluster.kube_context, stored=False)
    except UnicodeDecodeError:
        raise KubeconfigInvalid("", f"file {path} is not UTF-8 text") from None
    except KubeconfigInvalid as err:
        raise KubeconfigInvalid("", f"file {path}: {err}") from None


def stored_summary(cluster: Cluster, context: str) -> str:
    """The summary of the cluster's stored kubeconfig used with another ``context`` (KubeconfigInvalid when the
    document has no such context, KubeconfigUnreadable when it cannot be decrypted)."""
    text = _decrypted(cluster)
    return summarize(parse_kubeconfig(text, context), context)


def set_summary(cluster: Cluster, summary: str, user=None) -> None:
    """Record the summary of the stored kubeconfig after its context changed (``stored_summary``)."""
    cluster.kubeconfig_summary = summary
    cluster.save(update_fields=["kubeconfig_summary"])
    audit(user, "kubeconfig.context", cluster, summary=summary)


def kube_cluster_for(cluster: Cluster, cluster_class=None, **options):
    """A ``KubeCluster`` (or ``cluster_class``, a subclass) on a real cluster: from its stored kubeconfig
    (decrypted here, handed over as a dict), else from its kubeconfig path; ``options`` go to the class (qps,
    read_only, ...)."""
    from scheduler_core.cluster.kube import KubeCluster
    cls = cluster_class or KubeCluster
    context = cluster.kube_context or None
    if cluster.kubeconfig_secret:
        return cls(kubeconfig_dict=kubeconfig_document(cluster), context=context, **options)
    if cluster.kubeconfig:
        check_kubeconfig_file(cluster)
        return cls(kubeconfig=cluster.kubeconfig, context=context, **options)
    raise KubeconfigInvalid("kubeconfig", f"cluster {cluster.name} has no kubeconfig")


def reencrypt_all() -> int:
    """Re-encrypt every stored kubeconfig with the first key (after a rotation); returns how many."""
    done = 0
    for cluster in Cluster.objects.exclude(kubeconfig_secret="").only("pk", "name", "kubeconfig_secret"):
        try:
            secret = crypto.rotate(cluster.kubeconfig_secret)
        except crypto.DecryptionFailed as err:
            raise _unreadable(cluster, err) from None
        Cluster.objects.filter(pk=cluster.pk).update(kubeconfig_secret=secret)
        done += 1
    return done


# -- REST API tokens (knox) -----------------------------------------------------------------------------------
def _api_token_saved(sender, instance, created: bool, **kwargs) -> None:
    if created:
        audit(None, "apitoken.create", None, owner=instance.user.get_username(), prefix=instance.token_key[:8])


def _api_token_deleted(sender, instance, **kwargs) -> None:
    audit(None, "apitoken.delete", None, owner=instance.user.get_username(), prefix=instance.token_key[:8])


def _user_deleted(sender, instance, **kwargs) -> None:
    revoke_tokens_of(instance)


def audit_api_tokens() -> None:
    """Audit the creation and deletion of REST API tokens (knox AuthToken), wherever they happen (admin,
    ``manage.py apitoken``): their owner and first characters; a deleted user's cluster tokens are revoked."""
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_delete, post_save, pre_delete
    from knox.models import AuthToken
    post_save.connect(_api_token_saved, sender=AuthToken, dispatch_uid="schedscope-api-token-saved")
    post_delete.connect(_api_token_deleted, sender=AuthToken, dispatch_uid="schedscope-api-token-deleted")
    pre_delete.connect(_user_deleted, sender=get_user_model(), dispatch_uid="schedscope-user-tokens-revoked")


# -- API tokens of simulated clusters ----------------------------------------------------------------------
def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(cluster: Cluster, name: str, user=None) -> tuple[ClusterToken, str]:
    """A new API token of ``cluster``: (its row, the token). The token is not stored and cannot be shown again."""
    token = secrets.token_hex(TOKEN_BYTES)
    row = ClusterToken.objects.create(cluster=cluster, name=name, digest=_digest(token),
                                      prefix=token[:PREFIX_CHARS],
                                      created_by=user if user is not None and user.is_authenticated else None)
    audit(user, "clustertoken.create", cluster, token=name, prefix=row.prefix)
    return row, token


def revoke_token(row: ClusterToken, user=None) -> None:
    """Revoke ``row`` (kept, with its revocation time, for the record)."""
    if row.revoked is not None:
        return
    row.revoked = timezone.now()
    row.save(update_fields=["revoked"])
    with _cache_guard:
        _valid_tokens.pop((row.cluster_id, row.digest), None)
    audit(user, "clustertoken.revoke", row.cluster, token=row.name, prefix=row.prefix)


def _creator_may_edit(row: ClusterToken) -> bool:
    """A token follows its creator: it works while the user who made it is active and an editor of its cluster
    (a token made by an operator's command, with no creator, is the operator's)."""
    user = row.created_by
    return user is None or at_least(cluster_role(user, row.cluster), EDITOR)


def revoke_tokens_of(user) -> None:
    """A user is deleted: the cluster tokens they made are revoked first (the row would lose its creator)."""
    for row in ClusterToken.objects.filter(created_by=user, revoked__isnull=True).select_related("cluster"):
        revoke_token(row)


def token_recently_valid(cluster_id: int, token: str) -> bool:
    """True when ``token`` was checked valid for the cluster less than TOKEN_CACHE_SECONDS ago (no database)."""
    with _cache_guard:
        expiry = _valid_tokens.get((cluster_id, _digest(token)))
    return expiry is not None and expiry > time.monotonic()


def authenticate_token(cluster_id: int, token: str) -> bool:
    """Whether ``token`` is a live (unrevoked) token of the cluster whose creator may still edit the cluster
    (``_creator_may_edit``); digests compared in constant time. Marks the token's last use (at most once a
    minute)."""
    if len(token) != 2 * TOKEN_BYTES:
        return False
    digest = _digest(token)
    candidates = (ClusterToken.objects.filter(cluster_id=cluster_id, prefix=token[:PREFIX_CHARS],
                                              revoked__isnull=True)
                  .select_related("cluster", "created_by").only("pk", "digest", "last_used", "cluster",
                                                                 "created_by"))
    for row in candidates:
        if hmac.compare_digest(row.digest, digest):
            if not _creator_may_edit(row):
                return False
            now = timezone.now()
            if row.last_used is None or now - row.last_used >= LAST_USED_RESOLUTION:
                ClusterToken.objects.filter(pk=row.pk).update(last_used=now)
            clock = time.monotonic()
            with _cache_guard:
                for key in [k for k, expiry in _valid_tokens.items() if expiry <= clock]:
                    del _valid_tokens[key]
                _valid_tokens[(cluster_id, digest)] = clock + TOKEN_CACHE_SECONDS
            return True
    return False


def kubeconfig_for_token(base: str, cluster_name: str, token: str) -> str:
    """A kubeconfig for a simulated cluster's API at ``base`` (``.../clusters/<name>/k8s``) with ``token``, as
    kubectl and the client read it. Over plain HTTP the token is also in the server's path: kubectl sends
    tokens only over TLS."""
    base = base.rstrip("/")
    server = base if base.startswith("https://") else f"{base}/t/{token}"
    entry = f"schedscope-{cluster_name}"
    doc = {"apiVersion": "v1", "kind": "Config", "preferences": {},
           "clusters": [{"name": entry, "cluster": {"server": server}}],
           "users": [{"name": entry, "user": {"token": token}}],
           "contexts": [{"name": entry, "context": {"cluster": entry, "user": entry, "namespace": "default"}}],
           "current-context": entry}
    return yaml.safe_dump(doc, sort_keys=False)
