"""Credentials at rest: real clusters' kubeconfigs encrypted (never shown back, never logged), simulated clusters'
API tokens and REST API tokens stored as digests, shown once, revocable; every change audited."""
from __future__ import annotations

import io
import json
import logging

import pytest
import yaml
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection
from knox.models import AuthToken

from dashboard import crypto
from dashboard.models import Cluster, ClusterToken
from dashboard.profiles.models import AuditLog
from dashboard.services import credentials

from .conftest import api_client, page_client, small_scenario

SECRET_TOKEN = "eyJhbGciOiJSUzI1NiJ9.s3cr3t-bearer-for-prod"
SECRET_KEY_DATA = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tc2VjcmV0"


def kubeconfig_text(server="https://k8s.example.com:6443", token=SECRET_TOKEN, context="prod", cluster=None,
                    **user) -> str:
    user = user or {"token": token}
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "prod-cluster", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "deployer", "user": user}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod-cluster", "user": "deployer"}},
                     {"name": "other", "context": {"cluster": "prod-cluster"}}]})


def raw_row(table: str, pk: int) -> str:
    with connection.cursor() as cur:
        cur.execute(f"SELECT * FROM {table} WHERE id = %s", [pk])
        return repr(cur.fetchone())


@pytest.fixture
def keys(monkeypatch):
    """Set SCHEDSCOPE_ENCRYPTION_KEYS for the test: ``keys("k1,k2")``."""
    def use(value: str):
        monkeypatch.setenv(crypto.KEYS_ENV, value)
    return use


@pytest.fixture
def simulated(api):
    assert api.post("/api/clusters/", {"name": "sim", "tie_break": "name"}, format="json").status_code == 201
    assert api.post("/api/clusters/sim/scenario/", {"scenario": small_scenario(2)}, format="json").status_code == 201
    return Cluster.objects.get(name="sim")


# -- kubeconfig documents of real clusters --------------------------------------------------------------------
def test_kubeconfig_is_stored_encrypted_shown_masked_and_audited(api, client, admin_user, caplog):
    caplog.set_level(logging.DEBUG)
    text = kubeconfig_text(**{"client-certificate-data": SECRET_KEY_DATA, "client-key-data": SECRET_KEY_DATA,
                              "token": SECRET_TOKEN})
    made = api.post("/api/clusters/", {"name": "prod", "kind": "real", "kubeconfig_document": text}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["kubeconfig_status"] == "set: server https://k8s.example.com:6443, context prod, user deployer"
    assert "kubeconfig_document" not in made.json()
    cluster = Cluster.objects.get(name="prod")
    row = raw_row("dashboard_cluster", cluster.pk)
    assert SECRET_TOKEN not in row and SECRET_KEY_DATA not in row and "k8s.example.com:6443, context" in row
    assert credentials.kubeconfig_document(cluster) == yaml.safe_load(text)

    seen = [api.get("/api/clusters/").content, api.get("/api/clusters/prod/").content,
            client.get(f"/admin/dashboard/cluster/{cluster.pk}/change/").content,
            client.get("/admin/dashboard/cluster/").content, client.get("/api/schema/").content,
            client.get("/admin/profiles/auditlog/").content]
    assert b"context prod, user deployer" in seen[2]   # the admin shows the summary
    for body in seen:
        assert SECRET_TOKEN.encode() not in body and SECRET_KEY_DATA.encode() not in body

    other = kubeconfig_text(server="https://10.0.0.1:6443", token="another-secret-token")
    assert api.patch("/api/clusters/prod/", {"kubeconfig_document": other}, format="json").status_code == 200
    # a new context of the stored document: checked and summarized without sending it again
    changed = api.patch("/api/clusters/prod/", {"kube_context": "other"}, format="json")
    assert changed.json()["kubeconfig_status"] == "set: server https://10.0.0.1:6443, context other, user (none)"
    bad = api.patch("/api/clusters/prod/", {"kube_context": "nosuch"}, format="json")
    assert bad.status_code == 400 and bad.json() == {"kubeconfig_document": ["contexts: no context named 'nosuch'"]}
    assert api.patch("/api/clusters/prod/", {"kubeconfig_document": ""}, format="json").status_code == 400
    cleared = api.patch("/api/clusters/prod/", {"kubeconfig_document": "", "kubeconfig": "/etc/kube/config"},
                        format="json")   # a real cluster needs one or the other
    assert cleared.json()["kubeconfig_status"] == "file /etc/kube/config"
    assert Cluster.objects.get(name="prod").kubeconfig_secret == ""

    entries = list(AuditLog.objects.filter(cluster=cluster).order_by("id").values_list("action", "user", "detail"))
    assert [(a, u) for a, u, _d in entries] == [("kubeconfig.set", admin_user.pk), ("kubeconfig.change", admin_user.pk),
                                               ("kubeconfig.context", admin_user.pk),
                                               ("kubeconfig.clear", admin_user.pk)]
    assert entries[0][2] == {"cluster": "prod",
                             "summary": "server https://k8s.example.com:6443, context prod, user deployer"}
    logged = "\n".join(r.getMessage() for r in caplog.records) + repr(entries)
    assert SECRET_TOKEN not in logged and "another-secret-token" not in logged and SECRET_KEY_DATA not in logged


@pytest.mark.parametrize("text, message", [
    ("clusters: [a\nusers: {", "not valid YAML at line 2, column 6: expected ',' or ']', but got ':'"),
    ("- just a list", "expected a kubeconfig (a YAML object with clusters, users and contexts)"),
    (kubeconfig_text(server="k8s.example.com"), "clusters[0].cluster.server: expected an http(s) URL"),
    (kubeconfig_text(server="https://k8s.example.com:port"), "clusters[0].cluster.server: expected an http(s) URL"),
    (kubeconfig_text(context="nosuch"), "contexts: no context named 'nosuch'"),
    (kubeconfig_text(exec={"command": "aws", "args": [SECRET_TOKEN]}),
     "users[0].user.exec: not accepted: the workers would run a command or plugin; use a token or a client "
     "certificate"),
    (kubeconfig_text().replace("name: deployer", "name: ''"), "users[0].name: required"),
    # the workers' own files: only the -data forms (or token) are taken
    (kubeconfig_text(tokenFile="/srv/secret_key"),
     "users[0].user.tokenFile: not accepted: the workers would read a file of theirs; use token"),
    (kubeconfig_text(**{"client-certificate": "/etc/ssl/c.pem", "client-key-data": SECRET_KEY_DATA}),
     "users[0].user.client-certificate: not accepted: the workers would read a file of theirs; use "
     "client-certificate-data"),
    (kubeconfig_text(**{"client-certificate-data": SECRET_KEY_DATA, "client-key": "/etc/ssl/k.pem"}),
     "users[0].user.client-key: not accepted: the workers would read a file of theirs; use client-key-data"),
    (kubeconfig_text(cluster={"certificate-authority": "/etc/ssl/ca.pem"}),
     "clusters[0].cluster.certificate-authority: not accepted: the workers would read a file of theirs; use "
     "certificate-authority-data"),
])
def test_a_bad_kubeconfig_is_a_400_with_its_field_path(api, text, message):
    resp = api.post("/api/clusters/", {"name": "bad", "kind": "real", "kubeconfig_document": text}, format="json")
    assert resp.status_code == 400 and resp.json() == {"kubeconfig_document": [message]}
    assert not Cluster.objects.filter(name="bad").exists()


def test_a_stored_document_naming_a_file_of_the_workers_is_refused_when_used(api, tmp_path):
    """A document stored before the file fields were refused does not make the worker send a file's content."""
    secret_file = tmp_path / "secret_key"
    secret_file.write_text("the-server-secret-key")
    text = kubeconfig_text(server="http://127.0.0.1:9", tokenFile=str(secret_file))
    cluster = Cluster.objects.create(name="old", kind=Cluster.REAL, kubeconfig_secret=crypto.encrypt(text),
                                     kubeconfig_summary="server http://127.0.0.1:9, context prod, user deployer")
    with pytest.raises(credentials.KubeconfigInvalid) as err:
        credentials.kube_cluster_for(cluster, qps=0)
    assert str(err.value) == ("users[0].user.tokenFile: not accepted: the workers would read a file of theirs; "
                              "use token")
    # another context of the document is no way around it
    Cluster.objects.filter(pk=cluster.pk).update(kube_context="other")
    with pytest.raises(credentials.KubeconfigInvalid):
        credentials.kube_cluster_for(Cluster.objects.get(pk=cluster.pk), qps=0)


def test_an_admins_kubeconfig_file_may_name_files_of_the_workers(api, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(SECRET_TOKEN)
    path = tmp_path / "config"
    path.write_text(kubeconfig_text(tokenFile=str(token_file)))
    cluster = Cluster.objects.create(name="mounted", kind=Cluster.REAL, kubeconfig=str(path))
    kube = credentials.kube_cluster_for(cluster, qps=0)
    assert kube.api.configuration.api_key["BearerToken"] == f"Bearer {SECRET_TOKEN}"


def test_a_real_cluster_needs_a_kubeconfig_document_or_path(api):
    resp = api.post("/api/clusters/", {"name": "bare", "kind": "real"}, format="json")
    assert resp.status_code == 400 and resp.json() == {"kubeconfig_document": [
        "required for a real cluster (or kubeconfig: the path of a kubeconfig file on the workers)"]}
    made = api.post("/api/clusters/", {"name": "mounted", "kind": "real", "kubeconfig": "/etc/kube/config"},
                    format="json")
    assert made.status_code == 201 and made.json()["kubeconfig_status"] == "file /etc/kube/config"


def test_the_worker_gets_the_decrypted_kubeconfig_as_a_dict(api):
    api.post("/api/clusters/", {"name": "prod", "kind": "real", "kubeconfig_document": kubeconfig_text()},
             format="json")
    kube = credentials.kube_cluster_for(Cluster.objects.get(name="prod"), qps=0)
    assert kube.api.configuration.host == "https://k8s.example.com:6443"
    assert kube.api.configuration.api_key["BearerToken"] == f"Bearer {SECRET_TOKEN}"


def test_wrong_key_is_a_clear_error_and_keys_rotate(api, keys):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    keys(old)
    api.post("/api/clusters/", {"name": "prod", "kind": "real", "kubeconfig_document": kubeconfig_text()},
             format="json")
    keys(new)   # the old key lost
    cluster = Cluster.objects.get(name="prod")
    with pytest.raises(credentials.KubeconfigUnreadable) as err:
        credentials.kube_cluster_for(cluster)
    assert str(err.value) == ("cluster prod: the stored kubeconfig cannot be decrypted: no key in "
                              "SCHEDSCOPE_ENCRYPTION_KEYS (nor the one derived from SECRET_KEY) decrypts it: the key "
                              "is wrong or missing")
    assert api.get("/api/clusters/prod/").status_code == 200   # reads need no decryption
    bad = api.patch("/api/clusters/prod/", {"kube_context": "other"}, format="json")
    assert bad.status_code == 400 and "cannot be decrypted" in bad.json()["kube_context"][0]
    assert SECRET_TOKEN not in bad.content.decode()

    keys(f"{new},{old}")   # rotation: the new key first, the old one still decrypts
    assert credentials.kubeconfig_document(cluster)["users"][0]["user"]["token"] == SECRET_TOKEN
    out = io.StringIO()
    call_command("reencrypt", stdout=out)
    assert out.getvalue().strip() == "re-encrypted 1 kubeconfig(s)"
    keys(new)   # the old key can go now
    assert credentials.kubeconfig_document(Cluster.objects.get(name="prod"))["users"][0]["user"]["token"] == \
        SECRET_TOKEN


def test_stored_before_keys_were_set_is_reencrypted_with_them(api, monkeypatch, keys):
    monkeypatch.delenv(crypto.KEYS_ENV, raising=False)
    api.post("/api/clusters/", {"name": "prod", "kind": "real", "kubeconfig_document": kubeconfig_text()},
             format="json")
    first = Fernet.generate_key().decode()
    keys(first)
    call_command("reencrypt", stdout=io.StringIO())
    secret = Cluster.objects.get(name="prod").kubeconfig_secret
    assert yaml.safe_load(Fernet(first).decrypt(secret.encode()).decode())["current-context"] == "prod"


def test_key_checks(settings, monkeypatch, keys):
    settings.DEBUG = False
    monkeypatch.delenv(crypto.KEYS_ENV, raising=False)
    assert [w.id for w in crypto.check_keys_set()] == ["schedscope.W001"]
    settings.DEBUG = True   # make run: nothing to set
    assert crypto.check_keys_set() == []
    keys("not-a-fernet-key")
    assert [e.id for e in crypto.check_keys_valid()] == ["schedscope.E001"]
    keys(Fernet.generate_key().decode())
    assert crypto.check_keys_valid() == [] and crypto.check_keys_set() == []


# -- API tokens of simulated clusters -----------------------------------------------------------------------------
def test_cluster_tokens_are_digests_shown_once_revocable_and_audited(simulated, api, client, admin_user, caplog):
    made = api.post("/api/clusters/sim/tokens/", {"name": "ci"}, format="json")
    assert made.status_code == 201 and made["Cache-Control"] == "no-store"
    token = made.json()["token"]
    cfg = yaml.safe_load(made.json()["kubeconfig"])
    assert cfg["users"][0]["user"]["token"] == token
    assert cfg["clusters"][0]["cluster"]["server"] == f"http://testserver/clusters/sim/k8s/t/{token}"
    row = ClusterToken.objects.get(name="ci")
    assert token not in raw_row("dashboard_clustertoken", row.pk) and row.prefix == token[:8]
    listed = api.get("/api/clusters/sim/tokens/").json()["results"]
    assert [(t["name"], t["token"], t["created_by"], t["last_used"], t["revoked"]) for t in listed] == [
        ("ci", f"{token[:8]}…", admin_user.username, None, None)]
    for body in (api.get("/api/clusters/sim/tokens/").content, client.get("/clusters/sim/k8s/connect/").content,
                 client.get("/admin/dashboard/clustertoken/").content):
        assert token.encode() not in body and f"{token[:8]}…".encode() in body

    bearer = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert client.get("/clusters/sim/k8s/api/v1/nodes", **bearer).status_code == 200
    assert client.get(f"/clusters/sim/k8s/t/{token}/api/v1/nodes").status_code == 200
    assert ClusterToken.objects.get(pk=row.pk).last_used is not None
    same_prefix = token[:-1] + ("1" if token[-1] == "0" else "0")
    assert client.get("/clusters/sim/k8s/api/v1/nodes", HTTP_AUTHORIZATION=f"Bearer {same_prefix}").status_code == 401

    assert api.delete(f"/api/clusters/sim/tokens/{row.pk}/").status_code == 204
    assert client.get("/clusters/sim/k8s/api/v1/nodes", **bearer).status_code == 401
    assert ClusterToken.objects.get(pk=row.pk).revoked is not None
    caplog.set_level(logging.INFO)
    assert client.get(f"/clusters/sim/k8s/t/{token}/api/v1/nodes").status_code == 401
    assert "Unauthorized: /clusters/sim/k8s/t/[redacted]/api/v1/nodes" in caplog.text and token not in caplog.text
    tokens = AuditLog.objects.filter(cluster=simulated, action__startswith="clustertoken.").order_by("id")
    assert [(e.action, e.user_id, e.detail) for e in tokens] == [
        ("clustertoken.create", admin_user.pk, {"cluster": "sim", "token": "ci", "prefix": token[:8]}),
        ("clustertoken.revoke", admin_user.pk, {"cluster": "sim", "token": "ci", "prefix": token[:8]})]


def test_tokens_of_one_cluster_do_not_open_another(simulated, api, client):
    api.post("/api/clusters/", {"name": "other", "tie_break": "name"}, format="json")
    token = api.post("/api/clusters/sim/tokens/", {"name": "ci"}, format="json").json()["token"]
    assert client.get("/clusters/other/k8s/api/v1/nodes", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


def test_connect_page_makes_lists_and_revokes_tokens(simulated, client, viewer_user, editor_user):
    assert page_client(viewer_user).get("/clusters/sim/k8s/connect/").status_code == 403
    editor = page_client(editor_user)
    shown = editor.post("/clusters/sim/k8s/connect/", {"name": "laptop"})
    assert shown.status_code == 200 and "no-store" in shown["Cache-Control"]
    row = ClusterToken.objects.get(name="laptop")
    assert row.created_by == editor_user
    text = shown.content.decode()
    assert "Shown only this once" in text and text.count(row.prefix) >= 2   # in the kubeconfig and the list
    page = editor.get("/clusters/sim/k8s/connect/").content.decode()
    assert "Shown only this once" not in page and f"{row.prefix}…" in page and "Revoke</button>" in page
    assert editor.post("/clusters/sim/k8s/connect/", {"name": ""}).status_code == 400
    assert editor.post("/clusters/sim/k8s/connect/", {"revoke": "x"}).status_code == 404
    assert editor.post("/clusters/sim/k8s/connect/", {"revoke": row.pk})["Location"] == "/clusters/sim/k8s/connect/"
    row.refresh_from_db()
    assert row.revoked is not None and "revoked" in editor.get("/clusters/sim/k8s/connect/").content.decode()


def test_clustertoken_command(simulated, client):
    out = io.StringIO()
    call_command("clustertoken", "sim", "--name", "pipeline", "--server", "https://schedscope.example.com/",
                 stdout=out)
    cfg = yaml.safe_load(out.getvalue())
    token = cfg["users"][0]["user"]["token"]
    assert cfg["clusters"][0]["cluster"]["server"] == "https://schedscope.example.com/clusters/sim/k8s"
    assert client.get("/clusters/sim/k8s/api/v1/nodes", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200
    call_command("clustertoken", "sim", "--revoke", "pipeline", stderr=io.StringIO())
    assert client.get("/clusters/sim/k8s/api/v1/nodes", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401
    with pytest.raises(Exception, match="no simulated cluster named 'nosuch'"):
        call_command("clustertoken", "nosuch")


# -- REST API tokens (knox) ---------------------------------------------------------------------------------------
def test_api_tokens_are_digests_and_work_for_the_api_and_pages(simulated, editor_user):
    out = io.StringIO()
    call_command("apitoken", "editor", stdout=out)
    token = out.getvalue().strip()
    row = AuthToken.objects.get(user=editor_user)
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM knox_authtoken")
        assert token not in repr(cur.fetchall())
    assert row.expiry is None   # until deleted
    header = {"HTTP_AUTHORIZATION": f"Token {token}"}
    assert api_client().get("/api/clusters/", **header).status_code == 200
    assert page_client().get("/clusters/sim/", **header).status_code == 200
    refused = api_client().get("/api/clusters/", HTTP_AUTHORIZATION=f"Token {token[:-1]}x")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"
    row.delete()
    assert api_client().get("/api/clusters/", **header).status_code == 401
    assert page_client().get("/clusters/sim/", **header).status_code == 302   # to the sign-in page
    assert [(e.action, e.detail) for e in AuditLog.objects.filter(action__startswith="apitoken.").order_by("id")] == [
        ("apitoken.create", {"owner": "editor", "prefix": token[:8]}),
        ("apitoken.delete", {"owner": "editor", "prefix": token[:8]})]


def test_admin_takes_a_kubeconfig_and_never_shows_it(api, client, admin_user):
    api.post("/api/clusters/", {"name": "prod", "kind": "real", "kubeconfig": "/etc/kube/config"}, format="json")
    url = f"/admin/dashboard/cluster/{Cluster.objects.get(name='prod').pk}/change/"
    page = client.get(url)
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    for inline in page.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        data.update({management.add_prefix(k): v for k, v in management.initial.items()})
        data[management.add_prefix("TOTAL_FORMS")] = management.initial["INITIAL_FORMS"]   # no blank extra row

    refused = client.post(url, dict(data, kubeconfig_document=kubeconfig_text(context="nosuch")))
    assert refused.status_code == 200 and "contexts: no context named &#x27;nosuch&#x27;" in refused.content.decode()
    assert SECRET_TOKEN not in refused.content.decode()   # not even sent back into the form
    assert client.post(url, dict(data, kubeconfig_document=kubeconfig_text())).status_code == 302
    cluster = Cluster.objects.get(name="prod")
    assert credentials.kubeconfig_status(cluster).startswith("set: server https://k8s.example.com:6443")
    changed = client.get(url).content.decode()
    assert SECRET_TOKEN not in changed and "context prod, user deployer" in changed
    assert client.post(url, dict(data, clear_kubeconfig="on")).status_code == 302
    assert Cluster.objects.get(name="prod").kubeconfig_secret == ""
    assert list(AuditLog.objects.filter(cluster=cluster).order_by("id").values_list("action", "user")) == [
        ("kubeconfig.set", admin_user.pk), ("kubeconfig.clear", admin_user.pk)]


@pytest.mark.parametrize("server", ["https://169.254.169.254:6443", "https://[64:ff9b::a9fe:a9fe]",
                                    "https://[2002:a9fe:a9fe::1]:443", "http://2852039166"])
def test_a_real_clusters_kubeconfig_may_not_name_a_link_local_server(server):
    from dashboard.services.credentials import KubeconfigInvalid, parse_kubeconfig
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "k", "cluster": {"server": server}}],
           "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "users": [{"name": "u", "user": {}}]}
    with pytest.raises(KubeconfigInvalid, match="link-local or a cloud metadata address: refused for API servers"):
        parse_kubeconfig(json.dumps(doc))
    parse_kubeconfig(json.dumps(dict(doc, clusters=[{"name": "k", "cluster": {"server": "https://10.0.0.1:6443"}}])))
