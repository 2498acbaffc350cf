"""Print a version's differences from the v1.30 field tables (``scheduler_core.objects.protoschema``): the fields
each message gained or lost, and the messages they reach that v1.30 does not have, read from the Go types of that
version's k8s.io/api and k8s.io/apimachinery (struct tags: JSON name, ``protobuf`` number; Go type: pointer,
slice, map). The output is the ``API_FIELDS_ADDED`` / ``API_FIELDS_REMOVED`` tables of ``scheduler_core.versions``.

    .venv/bin/python tools/api_fields.py /work/.mirror/openshift+microshift/repo \\
        deps/github.com/openshift/kubernetes/staging/src/k8s.io

(a third argument names a revision other than HEAD: the v1.30 tables themselves are what it finds no difference
from in kubernetes/autoscaler's cluster-autoscaler-1.30.0, cluster-autoscaler/vendor/k8s.io).
"""
from __future__ import annotations

import pprint
import re
import subprocess
import sys

sys.path.insert(0, ".")
from scheduler_core.objects.protoschema import MESSAGES  # noqa: E402

PACKAGES = {"k8s.io.api.core.v1": "api/core/v1", "k8s.io.api.apps.v1": "api/apps/v1",
            "k8s.io.api.coordination.v1": "api/coordination/v1", "k8s.io.api.events.v1": "api/events/v1",
            "k8s.io.api.policy.v1": "api/policy/v1", "k8s.io.api.resource.v1": "api/resource/v1",
            "k8s.io.api.scheduling.v1": "api/scheduling/v1", "k8s.io.api.storage.v1": "api/storage/v1",
            "k8s.io.apimachinery.pkg.apis.meta.v1": "apimachinery/pkg/apis/meta/v1"}
IMPORTS = {"k8s.io/apimachinery/pkg/api/resource": "k8s.io.apimachinery.pkg.api.resource",
           "k8s.io/apimachinery/pkg/apis/meta/v1": "k8s.io.apimachinery.pkg.apis.meta.v1",
           "k8s.io/apimachinery/pkg/util/intstr": "k8s.io.apimachinery.pkg.util.intstr",
           "k8s.io/apimachinery/pkg/runtime": "k8s.io.apimachinery.pkg.runtime",
           "k8s.io/apimachinery/pkg/types": "k8s.io.apimachinery.pkg.types",
           **{"k8s.io/" + path: pkg for pkg, path in PACKAGES.items()}}
SCALARS = {"string": "string", "int32": "int32", "int64": "int64", "bool": "bool", "float64": "double",
           "int": "int64", "uint32": "int32", "uint64": "int64", "[]byte": "bytes", "types.UID": "string"}
FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([^\s`]+)\s+`([^`]*)`")   # [name] type `tags`
TAG = re.compile(r'(\w+):"([^"]*)"')


def _read(repo: str, root: str, path: str, rev: str) -> str:
    names = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", rev, f"{root}/{path}/"],
                           capture_output=True, text=True, check=True).stdout.split()
    return "\n".join(subprocess.run(["git", "-C", repo, "show", f"{rev}:{n}"], capture_output=True, text=True,
                                    check=True).stdout
                     for n in names if n.endswith(".go") and not n.endswith("_test.go")
                     and "zz_generated" not in n and "generated.pb" not in n)


def parse(repo: str, root: str, rev: str):
    """{package: {type name: ("struct", [(go type, json tag, protobuf tag)]) or ("alias", go type)}}, with each
    package's imports {alias: package}."""
    types, imports = {}, {}
    for pkg, path in PACKAGES.items():
        text = _read(repo, root, path, rev)
        imports[pkg] = {}
        for m in re.finditer(r'^\s*(\w+\s+)?"([^"]+)"$', text, re.M):
            full = IMPORTS.get(m.group(2))
            if full:
                imports[pkg][(m.group(1) or m.group(2).rsplit("/", 1)[-1]).strip()] = full
        held = types.setdefault(pkg, {})
        for m in re.finditer(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
            fields = []
            for line in m.group(2).splitlines():
                f = FIELD.match(line)
                if f:
                    tags = dict(TAG.findall(f.group(3)))
                    if "json" in tags:
                        fields.append((f.group(2), tags["json"], tags.get("protobuf", "")))
            held[m.group(1)] = ("struct", fields)
        for m in re.finditer(r"^type (\w+) (\S[^\n{]*)$", text, re.M):
            held.setdefault(m.group(1), ("alias", m.group(2).strip()))
    return types, imports


def resolve(go_type: str, pkg: str, types, imports) -> tuple:
    """(proto type, mode letters R/M/P) of a Go type in ``pkg``."""
    mode = ""
    while True:
        if go_type in SCALARS:
            return SCALARS[go_type], mode
        if go_type.startswith("*"):
            mode += "P"
            go_type = go_type[1:]
        elif go_type.startswith("[]"):
            mode += "R"
            go_type = go_type[2:]
        elif go_type.startswith("map["):
            mode += "M"
            go_type = go_type[go_type.index("]") + 1:]
        else:
            break
    if "." in go_type:
        alias, name = go_type.split(".", 1)
        target = imports[pkg].get(alias, alias)
    else:
        target, name = pkg, go_type
    kind = types.get(target, {}).get(name)
    if kind is not None and kind[0] == "alias":
        inner, inner_mode = resolve(kind[1], target, types, imports)
        return inner, mode + inner_mode
    return f"{target}.{name}", mode


def message_fields(message: str, types, imports) -> dict:
    """{number: (JSON name, type, mode)} of a message at the parsed version."""
    pkg, name = message.rsplit(".", 1)
    kind = types.get(pkg, {}).get(name)
    out = {}
    if kind is None or kind[0] != "struct":
        return out
    for go_type, json_tag, proto_tag in kind[1]:
        if not proto_tag or json_tag == "-":
            continue
        parts = proto_tag.split(",")
        number = int(parts[1])
        json_name, *opts = json_tag.split(",")
        proto_type, mode = resolve(go_type, pkg, types, imports)
        if "omitempty" in opts:
            mode += "O"
        if "inline" in opts:
            mode += "I"
        out[number] = (json_name, proto_type, "".join(sorted(set(mode), key="RMPOI".index)))
    return out


def main(repo: str, root: str, rev: str = "HEAD") -> None:
    types, imports = parse(repo, root, rev)
    added, removed, todo, seen = {}, {}, list(MESSAGES), set()
    while todo:
        message = todo.pop()
        if message in seen:
            continue
        seen.add(message)
        now = message_fields(message, types, imports)
        if not now:
            continue   # a leaf (Quantity, Time, ...) or a message outside the packages read
        before = MESSAGES.get(message, {})
        for n, (_name, typ, mode) in list(now.items()):
            if "I" in mode and n in before:   # an embedded struct has no JSON name: keep the base table's label
                now[n] = (before[n][0], typ, mode)
        new = {n: f for n, f in now.items() if before.get(n) != f}
        gone = sorted(n for n in before if n not in now)
        if new:
            added[message] = new
        if gone and message in MESSAGES:
            removed[message] = gone
        todo.extend(t for _n, t, _m in now.values() if "." in t)
    print("API_FIELDS_ADDED = ", end="")
    pprint.pprint(added, width=116, sort_dicts=True)
    print("API_FIELDS_REMOVED = ", end="")
    pprint.pprint(removed, width=116, sort_dicts=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
