"""Record what the real kube-apiserver (../shared/envtest, v1.36.2) answers to the writes of a cases file: each
case's HTTP status, its Status message (reason, causes) and its Warning headers, in ``<name>.expected.json`` next to
``<name>.cases.json``. The simulated Kubernetes API's tests compare their answers with these.

    .venv/bin/python tools/apiserver_texts.py tests/golden/apiserver/*.cases.json [--port 8150 --etcd-port 8152]

A cases file: {"cases": [{"name", "method", "path", "query", "body"}]}, each case sent in order to one fresh
control plane as its admin (``body``: the request's JSON text, as sent: duplicate names stay), whose ``default``
namespace has its ServiceAccount (``tests.envtest.ensure_namespace``: no controller-manager makes it).
"""
from __future__ import annotations

import argparse
import json
import ssl
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.envtest import ControlPlane, ensure_namespace  # noqa: E402


def answer(cp: ControlPlane, token: str, case: dict) -> dict:
    url = f"{cp.url}{case['path']}" + (f"?{case['query']}" if case.get("query") else "")
    req = urllib.request.Request(url, data=case["body"].encode(), method=case["method"],
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": case.get("ctype", "application/json"),
                                          "Accept": "application/json"})
    context = ssl._create_unverified_context()   # the control plane's own self-signed serving certificate
    try:
        with urllib.request.urlopen(req, context=context, timeout=30) as resp:
            status, headers, body = resp.status, resp.headers, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        status, headers, body = err.code, err.headers, json.loads(err.read())
    out = {"status": status, "warnings": headers.get_all("Warning") or []}
    if body.get("kind") == "Status":
        out.update(reason=body.get("reason", ""), message=body.get("message", ""))
        causes = (body.get("details") or {}).get("causes")
        if causes:
            out["causes"] = causes
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--port", type=int, default=0, help="the apiserver's port (0: a free one)")
    parser.add_argument("--etcd-port", type=int, default=0, help="etcd's client port, the next one its peers'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ports = (args.port, args.etcd_port) if args.port and args.etcd_port else None
        cp = ControlPlane(Path(tmp) / "cp", ports=ports).start()
        try:
            token = cp.kubeconfig_dict()["users"][0]["user"]["token"]
            from kubernetes import config as kconfig
            with kconfig.new_client_from_config(config_file=str(cp.kubeconfig)) as client:
                ensure_namespace(client, "default")
            for path in args.cases:
                cases = json.loads(Path(path).read_text())["cases"]
                expected = {c["name"]: answer(cp, token, c) for c in cases}
                out = Path(path.replace(".cases.json", ".expected.json"))
                out.write_text(json.dumps({"release": "v1.36.2", "answers": expected}, indent=1, sort_keys=True)
                               + "\n")
                print(f"{out}: {len(expected)} answers")
        finally:
            cp.stop()


if __name__ == "__main__":
    main()
