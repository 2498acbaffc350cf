#!/usr/bin/env python3
"""Writes the DRA scenarios of this folder (``dra-oNN-*.scenario.json``): the golden format with the DRA kinds of
../../../../shared/golden-v136/README.md, each covering DRA features alone or mixed. Their vectors come from the
real kube-scheduler (README.md of this folder says how)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GPU, NIC = "gpu.example.com", "nic.example.com"
TS = "2026-01-10T08:00:00Z"
TOLERATIONS = [{"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300} for k in ("not-ready", "unreachable")]


class V(str):
    """A version attribute value."""


def attr(value) -> dict:
    if isinstance(value, V):
        return {"version": str(value)}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def node(name, cpu="8", memory="32Gi", zone="zone-a", labels=None, taints=None, extra=None) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi", **(extra or {})}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                  "kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": zone,
                                                  "topology.kubernetes.io/region": "region-1", **(labels or {})}},
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": dict(alloc), "allocatable": dict(alloc),
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status", "lastHeartbeatTime": TS,
                                       "lastTransitionTime": TS}],
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "v1.36.2",
                                    "containerRuntimeVersion": "containerd://2.1.0", "kernelVersion": "6.8.0",
                                    "osImage": "Ubuntu 24.04", "machineID": "", "systemUUID": "", "bootID": ""}}}


def device(name, attrs=None, capacity=None, **extra) -> dict:
    out = {"name": name}
    if attrs:
        out["attributes"] = {k: attr(v) for k, v in attrs.items()}
    if capacity:
        out["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in capacity.items()}
    out.update(extra)
    return out


def gpu(i, model="a100", memory=80, **extra) -> dict:
    return device(f"gpu-{i}", {"model": model, "memoryGiB": memory, "index": i, **extra.pop("attrs", {})},
                  {"memory": f"{memory}Gi"}, **extra)


def rslice(name, devices, node_name=None, driver=GPU, pool=None, count=1, generation=0, **spec) -> dict:
    body = {"driver": driver, "pool": {"name": pool or node_name or name, "generation": generation,
                                       "resourceSliceCount": count}}
    if node_name:
        body["nodeName"] = node_name
    if devices:
        body["devices"] = devices
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def gpus(node_name, models, driver=GPU) -> dict:
    """A slice of GPUs on a node: ``models`` is a list of model names (index i is gpu-i)."""
    return rslice(f"{node_name}-gpus", [gpu(i, m, 80 if m in ("a100", "h100") else 16) for i, m in enumerate(models)],
                  node_name, driver)


def dclass(name=GPU, expressions=None, driver=None, **spec) -> dict:
    exprs = [f'device.driver == "{driver or name}"'] + list(expressions or ())
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs], **spec}}


def exactly(name="gpu", cls=GPU, count=None, mode=None, sel=(), **extra) -> dict:
    body = {"deviceClassName": cls}
    if mode:
        body["allocationMode"] = mode
    if count is not None:
        body["count"] = count
    if sel:
        body["selectors"] = [{"cel": {"expression": e}} for e in sel]
    body.update(extra)
    return {"name": name, "exactly": body}


def sub(name, cls=GPU, count=None, mode=None, sel=(), **extra) -> dict:
    body = exactly(name, cls, count, mode, sel, **extra)["exactly"]
    return {"name": name, **body}


def first(name, subs) -> dict:
    return {"name": name, "firstAvailable": subs}


def claim_spec(requests, constraints=None) -> dict:
    devices = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def template(name, ns, requests, constraints=None) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": ns}, "spec": {"spec": claim_spec(requests, constraints)}}


def claim(name, ns, requests, allocated=None, node_name=None, reserved=(), constraints=None) -> dict:
    """A ResourceClaim; ``allocated``: [(request, pool, device)] of the GPU driver on ``node_name``, reserved for
    the pods named."""
    out = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
           "spec": claim_spec(requests, constraints)}
    if allocated:
        results = [{"request": r, "driver": GPU, "pool": p, "device": d} for r, p, d in allocated]
        alloc = {"devices": {"results": results}, "allocationTimestamp": TS,
                 "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                     {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}
        out["status"] = {"allocation": alloc,
                         "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in reserved]}
        out["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    return out


def pod(name, ns="ml", templates=None, claims=None, cpu="500m", memory="1Gi", node_name=None, labels=None,
        priority=0, extended=None, **spec) -> dict:
    """A pod; ``templates``: {entry: template name}, ``claims``: {entry: claim name}; every container uses
    every entry. ``extended``: container requests of extended resources."""
    entries = [{"name": e, "resourceClaimTemplateName": t} for e, t in (templates or {}).items()]
    entries += [{"name": e, "resourceClaimName": c} for e, c in (claims or {}).items()]
    requests = {"cpu": cpu, "memory": memory, **(extended or {})}
    resources = {"requests": requests}
    if extended:
        resources["limits"] = dict(extended)
    if entries:
        resources["claims"] = [{"name": e["name"]} for e in entries]
    body = {"containers": [{"name": "main", "image": "registry.example.com/ml/worker:1.0", "resources": resources,
                            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                            "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "securityContext": {}, "schedulerName": "default-scheduler",
            "enableServiceLinks": True, "priority": priority, "preemptionPolicy": "PreemptLowerPriority",
            "tolerations": list(TOLERATIONS)}
    body["tolerations"] += spec.pop("tolerations", [])
    body.update(spec)
    if entries:
        body["resourceClaims"] = entries
    out = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": name.rsplit("-", 1)[0]}},
           "spec": body, "status": {"phase": "Pending"}}
    if node_name:
        body["nodeName"] = node_name
        out["status"] = {"phase": "Running", "startTime": TS, "hostIP": "10.0.0.10",
                         "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": TS}]}
        if entries:
            out["status"]["resourceClaimStatuses"] = [
                {"name": e["name"], "resourceClaimName": f"{name}-{e['name']}"}
                for e in entries if e.get("resourceClaimTemplateName")]
    return out


def namespace(name, labels=None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}}}


def attr_of(name, domain=GPU) -> str:
    return f'device.attributes["{domain}"].{name}'


SCENARIOS = {}


def scenario(name, description, nodes, pending, classes=(dclass(),), slices=(), templates=(), claims=(), pods=(),
             namespaces=("ml",), **extra):
    nss = [n if isinstance(n, dict) else namespace(n) for n in namespaces]
    SCENARIOS[name] = {"name": name, "description": description, "kubeVersion": "1.36", "nodes": list(nodes),
                       "pods": list(pods), "pending": list(pending), "namespaces": nss,
                       "deviceclasses": list(classes), "resourceslices": list(slices),
                       "resourceclaimtemplates": list(templates), "resourceclaims": list(claims), **extra}


def _gpu_nodes(spec: dict) -> tuple:
    """Nodes and their GPU slices from {node: [models]}."""
    return [node(n) for n in spec], [gpus(n, m) for n, m in spec.items() if m]


def build() -> None:
    model = attr_of("model")
    # -- ExactCount, All, several requests and claims --------------------------------------------------------
    nodes, slices = _gpu_nodes({"g2": ["a100"] * 2, "g3": ["a100"] * 3, "g4": ["a100"] * 4})
    scenario("dra-o01-exact-count-three", "ExactCount 3 on nodes with 2, 3 and 4 GPUs; the devices run out.",
             nodes, [pod(f"trio-{i}", templates={"gpu": "three"}) for i in range(3)], slices=slices,
             templates=[template("three", "ml", [exactly(count=3)])])
    nodes, slices = _gpu_nodes({"gn-1": ["a100", "t4"], "gn-2": ["t4", "t4"], "gn-3": ["a100"]})
    slices += [rslice(f"{n}-nics", [device("nic-0", {"speed": 100})], n, NIC) for n in ("gn-1", "gn-3")]
    scenario("dra-o02-two-requests-two-classes", "One claim with a GPU request and a NIC request (two device "
             "classes); gn-2 has no NIC, gn-3's only GPU goes first.",
             nodes, [pod(f"gn-{i}", templates={"dev": "gpu-and-nic"}) for i in range(3)],
             classes=[dclass(), dclass(NIC)], slices=slices,
             templates=[template("gpu-and-nic", "ml", [exactly("gpu"), exactly("nic", NIC)])])
    nodes, slices = _gpu_nodes({"mc-1": ["a100", "a100", "t4"], "mc-2": ["a100", "t4"], "mc-3": ["t4", "t4"]})
    scenario("dra-o03-several-claims-per-pod", "A pod with two template claims (an A100, a T4) and a shared "
             "claim of its team (a T4, allocated by the first pod that uses it).",
             nodes, [pod(f"multi-{i}", templates={"big": "a100", "small": "t4"}, claims={"team": "team-t4"})
                     for i in range(3)], slices=slices,
             templates=[template("a100", "ml", [exactly(sel=[f'{model} == "a100"'])]),
                        template("t4", "ml", [exactly(sel=[f'{model} == "t4"'])])],
             claims=[claim("team-t4", "ml", [exactly(sel=[f'{model} == "t4"'])])])
    nodes, slices = _gpu_nodes({"am-1": ["a100", "a100", "t4"], "am-2": ["t4", "t4"], "am-3": ["a100"]})
    scenario("dra-o04-all-with-selector", "allocationMode All with a selector: every A100 of a node; am-2 has none.",
             nodes, [pod(f"all-a100-{i}", templates={"gpu": "all-a100"}) for i in range(3)], slices=slices,
             templates=[template("all-a100", "ml", [exactly(mode="All", sel=[f'{model} == "a100"'])])])
    nodes, slices = _gpu_nodes({"ap-1": ["a100"] * 2, "ap-2": ["a100"] * 3})
    scenario("dra-o05-all-partly-allocated", "All on two nodes where a running pod holds one GPU of ap-2: All "
             "needs every device, so only ap-1; the second All pod finds nothing.",
             nodes, [pod("all-0", templates={"gpu": "all"}), pod("all-1", templates={"gpu": "all"})], slices=slices,
             templates=[template("all", "ml", [exactly(mode="All")]), template("one", "ml", [exactly()])],
             pods=[pod("holder", templates={"gpu": "one"}, node_name="ap-2")],
             claims=[claim("holder-gpu", "ml", [exactly()], [("gpu", "ap-2", "gpu-1")], "ap-2", ["holder"])])
    # -- firstAvailable ----------------------------------------------------------------------------------------
    nodes, slices = _gpu_nodes({"fa-h": ["h100", "a100"], "fa-a": ["a100", "a100"], "fa-t": ["t4", "t4", "t4"]})
    scenario("dra-o06-first-available-three-levels", "firstAvailable: an H100, else two A100s, else three T4s; "
             "the DynamicResources score ranks nodes by the subrequest they can give.",
             nodes, [pod(f"pl-{i}", templates={"gpu": "ladder"}) for i in range(4)], slices=slices,
             templates=[template("ladder", "ml", [first("gpu", [
                 sub("h100", sel=[f'{model} == "h100"']), sub("a100x2", count=2, sel=[f'{model} == "a100"']),
                 sub("t4x3", count=3, sel=[f'{model} == "t4"'])])])])
    nodes, slices = _gpu_nodes({"fm-1": ["t4", "t4"], "fm-2": ["a100"], "fm-3": ["t4"]})
    scenario("dra-o07-first-available-all-mode", "firstAvailable whose first subrequest is All the T4s of a node "
             "and second one A100.",
             nodes, [pod(f"fm-{i}", templates={"gpu": "all-t4-or-a100"}) for i in range(4)], slices=slices,
             templates=[template("all-t4-or-a100", "ml", [first("gpu", [
                 sub("t4-all", mode="All", sel=[f'{model} == "t4"']), sub("a100", sel=[f'{model} == "a100"'])])])])
    nodes, slices = _gpu_nodes({"fn-1": ["t4"], "fn-2": ["t4", "t4"]})
    scenario("dra-o08-first-available-none-fits", "firstAvailable where no subrequest fits anywhere (H100s or four "
             "T4s), next to one that fits.",
             nodes, [pod("never", templates={"gpu": "none"}), pod("fits", templates={"gpu": "two-t4"})],
             slices=slices,
             templates=[template("none", "ml", [first("gpu", [sub("h100", sel=[f'{model} == "h100"']),
                                                              sub("t4x4", count=4, sel=[f'{model} == "t4"'])])]),
                        template("two-t4", "ml", [first("gpu", [sub("h100", sel=[f'{model} == "h100"']),
                                                                sub("t4x2", count=2)])])])
    # -- CEL ---------------------------------------------------------------------------------------------------
    def cel_nodes(devs):
        return ([node(n) for n in devs],
                [rslice(f"{n}-gpus", [device(f"gpu-{i}", a, c) for i, (a, c) in enumerate(d)], n)
                 for n, d in devs.items()])
    nodes, slices = cel_nodes({
        "cs-1": [({"model": "a100-sxm4", "vendor": "nvidia", "uuid": "GPU-3f2a"}, None)],
        "cs-2": [({"model": "h100-pcie", "vendor": "nvidia", "uuid": "GPU-77aa"}, None)],
        "cs-3": [({"model": "mi300x", "vendor": "amd", "uuid": "AMD-0001"}, None)]})
    scenario("dra-o09-cel-string-functions", "CEL on strings: endsWith, contains, matches (RE2), in a list, size, "
             "lowerAscii... each pod asks one of them.",
             nodes, [pod("ends", templates={"gpu": "ends"}), pod("contains", templates={"gpu": "contains"}),
                     pod("regex", templates={"gpu": "regex"}), pod("inlist", templates={"gpu": "inlist"})],
             slices=slices,
             templates=[template("ends", "ml", [exactly(sel=[f'{model}.endsWith("-pcie")'])]),
                        template("contains", "ml", [exactly(sel=[f'{model}.contains("mi3")'])]),
                        template("regex", "ml", [exactly(sel=[f'{attr_of("uuid")}.matches("^GPU-[0-9a-f]{{4}}$")'])]),
                        template("inlist", "ml", [exactly(sel=[f'{attr_of("vendor")} in ["amd", "intel"] || '
                                                               f'size({model}) > 8'])])])
    nodes, slices = cel_nodes({
        "ci-1": [({"cores": 108, "memoryGiB": 40}, None), ({"cores": 132, "memoryGiB": 80}, None)],
        "ci-2": [({"cores": 40, "memoryGiB": 16}, None)],
        "ci-3": [({"cores": 304, "memoryGiB": 192}, None)]})
    scenario("dra-o10-cel-int-arithmetic", "CEL on ints: arithmetic, comparisons, modulo; two devices per pod on "
             "ci-1 only.",
             nodes, [pod("arith", templates={"gpu": "arith"}), pod("mod", templates={"gpu": "mod"}),
                     pod("pair", templates={"gpu": "pair"})], slices=slices,
             templates=[template("arith", "ml", [exactly(sel=[f'{attr_of("cores")} * 2 > 500'])]),
                        template("mod", "ml", [exactly(sel=[f'{attr_of("memoryGiB")} % 40 == 0 && '
                                                            f'{attr_of("cores")} - 100 >= 8'])]),
                        template("pair", "ml", [exactly(count=2, sel=[f'{attr_of("memoryGiB")} <= 80'])])])
    nodes, slices = cel_nodes({
        "cb-1": [({"healthy": True, "mig": False}, None)], "cb-2": [({"healthy": False, "mig": True}, None)],
        "cb-3": [({"healthy": True, "mig": True}, None)]})
    scenario("dra-o11-cel-bool", "CEL on bools: negation, equality with a literal, ternary.",
             nodes, [pod("not-mig", templates={"gpu": "not-mig"}), pod("sick", templates={"gpu": "sick"}),
                     pod("tern", templates={"gpu": "tern"})], slices=slices,
             templates=[template("not-mig", "ml", [exactly(sel=[f'!{attr_of("mig")}'])]),
                        template("sick", "ml", [exactly(sel=[f'{attr_of("healthy")} == false'])]),
                        template("tern", "ml", [exactly(sel=[f'{attr_of("mig")} ? {attr_of("healthy")} : false'])])])
    nodes, slices = cel_nodes({
        "cv-1": [({"driverVersion": V("535.104.5")}, None)], "cv-2": [({"driverVersion": V("550.54.15")}, None)],
        "cv-3": [({"driverVersion": V("550.54.15-rc.1")}, None)]})
    scenario("dra-o12-cel-semver", "CEL on versions: semver() literals, isGreaterThan, isLessThan, compareTo, "
             "a pre-release (lower than its release), major().",
             nodes, [pod("newer", templates={"gpu": "newer"}), pod("prerelease", templates={"gpu": "prerelease"}),
                     pod("major", templates={"gpu": "major"})], slices=slices,
             templates=[template("newer", "ml", [exactly(sel=[
                 f'{attr_of("driverVersion")}.isGreaterThan(semver("550.54.14"))'])]),
                 template("prerelease", "ml", [exactly(sel=[
                     f'{attr_of("driverVersion")}.compareTo(semver("550.54.15")) < 0 && '
                     f'{attr_of("driverVersion")}.isGreaterThan(semver("540.0.0"))'])]),
                 template("major", "ml", [exactly(sel=[f'{attr_of("driverVersion")}.major() == 535'])])])
    nodes, slices = cel_nodes({
        "cq-1": [({}, {"memory": "40Gi", "bandwidth": "900G"})], "cq-2": [({}, {"memory": "80Gi", "bandwidth": "2T"})],
        "cq-3": [({}, {"memory": "42949672960", "bandwidth": "1500G"})]})
    scenario("dra-o13-cel-capacity-quantity", "CEL on capacity: quantity() in other units, compareTo, "
             "isGreaterThan, isLessThan, asApproximateFloat.",
             nodes, [pod("big", templates={"gpu": "big"}), pod("exact40", templates={"gpu": "exact40"}),
                     pod("bw", templates={"gpu": "bw"})], slices=slices,
             templates=[template("big", "ml", [exactly(sel=[
                 f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("64Gi"))'])]),
                 template("exact40", "ml", [exactly(sel=[
                     f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) == 0'])]),
                 template("bw", "ml", [exactly(sel=[
                     f'device.capacity["{GPU}"].bandwidth.isLessThan(quantity("1.6T")) && '
                     f'device.capacity["{GPU}"].bandwidth.asApproximateFloat() > 1e12'])])])
    nodes, slices = cel_nodes({"cm-1": [({"model": "a100"}, None)], "cm-2": [({"model": "a100", "ecc": True}, None)],
                               "cm-3": [({"model": "t4", "ecc": False}, None)]})
    scenario("dra-o14-cel-missing-attribute-guarded", "Selectors that read an attribute some devices lack, guarded "
             "with has() or a default through the other domain's empty map.",
             nodes, [pod("ecc", templates={"gpu": "ecc"}), pod("no-ecc", templates={"gpu": "no-ecc"}),
                     pod("other-domain", templates={"gpu": "other-domain"})], slices=slices,
             templates=[template("ecc", "ml", [exactly(sel=[f'has({attr_of("ecc")}) && {attr_of("ecc")}'])]),
                        template("no-ecc", "ml", [exactly(sel=[f'!has({attr_of("ecc")}) || !{attr_of("ecc")}'])]),
                        template("other-domain", "ml", [exactly(sel=[
                            '!has(device.attributes["other.example.com"].model)'])])])
    scenario("dra-o15-cel-missing-attribute-error", "A selector that reads an attribute without has(): the devices "
             "that lack it make a runtime error (a scheduler error naming the claim), not a filter failure.",
             nodes, [pod("guarded", templates={"gpu": "ecc"}), pod("unguarded", templates={"gpu": "unguarded"}),
                     pod("after", templates={"gpu": "any"})], slices=slices,
             templates=[template("ecc", "ml", [exactly(sel=[f'has({attr_of("ecc")}) && {attr_of("ecc")}'])]),
                        template("unguarded", "ml", [exactly(sel=[f'{attr_of("ecc")} == true'])]),
                        template("any", "ml", [exactly()])])
    nodes, slices = cel_nodes({
        "cd-1": [({"model": "a100", "numa.example.com/node": 0}, None)],
        "cd-2": [({"model": "a100", "numa.example.com/node": 1}, None)]})
    scenario("dra-o16-cel-qualified-attributes", "Attributes of another domain (numa.example.com/node) next to the "
             "driver's own; selectors read both, and the class selects on the driver name.",
             nodes, [pod("numa1", templates={"gpu": "numa1"}), pod("numa0", templates={"gpu": "numa0"})],
             slices=slices,
             templates=[template("numa1", "ml", [exactly(sel=['device.attributes["numa.example.com"].node == 1'])]),
                        template("numa0", "ml", [exactly(sel=[f'device.attributes["numa.example.com"]["node"] == 0 '
                                                              f'&& {model} == "a100"'])])])
    nodes, slices = _gpu_nodes({"dc-1": ["a100", "t4"], "dc-2": ["t4"], "dc-3": ["h100"]})
    scenario("dra-o17-class-and-request-selectors", "A DeviceClass with two selectors (driver, and datacenter "
             "models) and requests that add their own: every selector must hold.",
             nodes, [pod(f"dcr-{i}", templates={"gpu": t}) for i, t in enumerate(("dc-any", "dc-80g", "dc-any"))],
             classes=[dclass("datacenter.example.com", [f'{model} in ["a100", "h100"]'], driver=GPU)],
             slices=slices,
             templates=[template("dc-any", "ml", [exactly(cls="datacenter.example.com")]),
                        template("dc-80g", "ml", [exactly(cls="datacenter.example.com",
                                                          sel=[f'{attr_of("memoryGiB")} >= 80 && '
                                                               f'{model} != "a100"'])])])
    nodes, slices = _gpu_nodes({"cl-1": ["a100", "t4"], "cl-2": ["l4"], "cl-3": ["h100"]})
    scenario("dra-o18-cel-bind-and-lists", "cel.bind, list macros (exists, all, filter) over literal lists.",
             nodes, [pod("bind", templates={"gpu": "bind"}), pod("exists", templates={"gpu": "exists"}),
                     pod("filter", templates={"gpu": "filter"})], slices=slices,
             templates=[template("bind", "ml", [exactly(sel=[f'cel.bind(m, {model}, m == "h100" || m == "l4")'])]),
                        template("exists", "ml", [exactly(sel=[f'["t4", "l4"].exists(x, x == {model})'])]),
                        template("filter", "ml", [exactly(sel=[
                            f'["a100", "h100", "b200"].filter(x, x.startsWith("a") || x.startsWith("h"))'
                            f'.all(x, x != {model}) == false'])])])
    nodes, slices = cel_nodes({"ct-1": [({"model": "a100", "gen": 3}, None)],
                               "ct-2": [({"model": "t4", "gen": "ampere"}, None)]})
    scenario("dra-o19-cel-type-mismatch", "An attribute that is an int on one device and a string on another: a "
             "comparison with an int fails at run time on the string one.",
             nodes, [pod("gen-ok", templates={"gpu": "gen-str"}), pod("gen-int", templates={"gpu": "gen-int"})],
             slices=slices,
             templates=[template("gen-str", "ml", [exactly(sel=[f'string({attr_of("gen")}) == "ampere"'])]),
                        template("gen-int", "ml", [exactly(sel=[f'{attr_of("gen")} > 2'])])])
    # -- constraints ---------------------------------------------------------------------------------------------
    def numa_slice(n, numas):
        return rslice(f"{n}-gpus", [gpu(i, "a100", attrs={"numa": x}) for i, x in enumerate(numas)], n)
    scenario("dra-o20-match-attribute", "matchAttribute numa over two requests (two GPUs and one more) and over "
             "one request of count 2; nodes whose NUMA nodes are split fail.",
             [node("ma-1"), node("ma-2"), node("ma-3")],
             [pod("ma-pair", templates={"gpu": "pair"}), pod("ma-split", templates={"gpu": "split"}),
              pod("ma-pair2", templates={"gpu": "pair"})],
             slices=[numa_slice("ma-1", [0, 1, 0, 1]), numa_slice("ma-2", [0, 0, 0]), numa_slice("ma-3", [0, 1])],
             templates=[template("pair", "ml", [exactly(count=2)], [{"matchAttribute": f"{GPU}/numa"}]),
                        template("split", "ml", [exactly("a", count=2), exactly("b")],
                                 [{"requests": ["a", "b"], "matchAttribute": f"{GPU}/numa"}])])
    scenario("dra-o21-match-attribute-missing", "matchAttribute on an attribute some devices lack: they never "
             "satisfy the constraint.",
             [node("mm-1"), node("mm-2")],
             [pod("mm-0", templates={"gpu": "pair"}), pod("mm-1", templates={"gpu": "pair"})],
             slices=[rslice("mm-1-gpus", [gpu(0), gpu(1)], "mm-1"), numa_slice("mm-2", [1, 1])],
             templates=[template("pair", "ml", [exactly(count=2)], [{"matchAttribute": f"{GPU}/numa"}])])
    scenario("dra-o22-distinct-attribute", "distinctAttribute: two GPUs on different NUMA nodes.",
             [node("da-1"), node("da-2")],
             [pod("da-0", templates={"gpu": "spread"}), pod("da-1", templates={"gpu": "spread"})],
             slices=[numa_slice("da-1", [0, 0, 0]), numa_slice("da-2", [0, 1, 1])],
             templates=[template("spread", "ml", [exactly(count=2)], [{"distinctAttribute": f"{GPU}/numa"}])])
    # -- admin access -------------------------------------------------------------------------------------------
    nodes, slices = _gpu_nodes({"adm-1": ["a100", "a100"], "adm-2": ["a100"]})
    scenario("dra-o23-admin-access-all", "adminAccess with allocationMode All in a labelled namespace: every "
             "device of the node, allocated or not; then a normal claim on the same devices.",
             nodes, [pod("watch-all", "monitoring", templates={"gpu": "watch-all"}),
                     pod("trainer", templates={"gpu": "one"}), pod("trainer-2", templates={"gpu": "one"})],
             slices=slices,
             namespaces=["ml", namespace("monitoring", {"resource.kubernetes.io/admin-access": "true"})],
             templates=[template("watch-all", "monitoring", [exactly(mode="All", adminAccess=True)]),
                        template("one", "ml", [exactly()])],
             pods=[pod("busy", templates={"gpu": "one"}, node_name="adm-1")],
             claims=[claim("busy-gpu", "ml", [exactly()], [("gpu", "adm-1", "gpu-0")], "adm-1", ["busy"])])
    scenario("dra-o24-admin-access-unlabelled-namespace", "adminAccess asked from a namespace without the label: "
             "the apiserver refuses the template, so the pod's claim never exists; a labelled namespace's pod "
             "gets the device.",
             nodes, [pod("sneaky", "team", templates={"gpu": "peek"}), pod("ok", "ops", templates={"gpu": "peek"})],
             slices=slices,
             namespaces=["team", namespace("ops", {"resource.kubernetes.io/admin-access": "true"})],
             templates=[template("peek", "team", [exactly(adminAccess=True)]),
                        template("peek", "ops", [exactly(adminAccess=True)])])
    # -- partitionable devices ---------------------------------------------------------------------------------
    def parts(n, profiles, counters=("memory",), per=None):
        sets = [{"name": "gpu-0-set", "counters": {c: {"value": v} for c, v in (per or {"memory": "40Gi"}).items()}}]
        devs = []
        for i, (prof, need) in enumerate(profiles):
            devs.append(device(f"gpu-0-{prof}-{i}", {"profile": prof}, {"memory": need["memory"]},
                               consumesCounters=[{"counterSet": "gpu-0-set",
                                                  "counters": {c: {"value": need[c]} for c in counters}}]))
        return [rslice(f"{n}-counters", [], n, pool=f"{n}-pool", count=2, sharedCounters=sets),
                rslice(f"{n}-parts", devs, n, pool=f"{n}-pool", count=2)]
    two = [("4g", {"memory": "20Gi", "slices": "4"}), ("3g", {"memory": "20Gi", "slices": "3"}),
           ("2g", {"memory": "10Gi", "slices": "2"}), ("1g", {"memory": "10Gi", "slices": "1"}),
           ("1g", {"memory": "10Gi", "slices": "1"})]
    prof = attr_of("profile")
    scenario("dra-o25-partitionable-two-counters", "Partitions that consume two counters (memory 40Gi and 7 "
             "slices): a 4g and a 3g exhaust the slices before the memory.",
             [node("pc-1")], [pod(f"p{i}", templates={"gpu": t}) for i, t in enumerate(("g4", "g3", "g1", "g2"))],
             slices=parts("pc-1", two, ("memory", "slices"), {"memory": "40Gi", "slices": "7"}),
             templates=[template(f"g{k}", "ml", [exactly(sel=[f'{prof} == "{k}g"'])]) for k in (1, 2, 3, 4)])
    full = [("full", {"memory": "40Gi"}), ("half", {"memory": "20Gi"}), ("half", {"memory": "20Gi"}),
            ("quarter", {"memory": "10Gi"}), ("quarter", {"memory": "10Gi"})]
    scenario("dra-o26-partitionable-allocated", "Shared counters across two slices of a pool where a running pod "
             "holds a half: the full GPU no longer fits there, the quarters do.",
             [node("pa-1"), node("pa-2")],
             [pod("want-full", templates={"gpu": "full"}), pod("want-quarter", templates={"gpu": "quarter"}),
              pod("want-full-2", templates={"gpu": "full"})],
             slices=parts("pa-1", full) + parts("pa-2", full),
             templates=[template(k, "ml", [exactly(sel=[f'{prof} == "{k}"'])]) for k in ("full", "half", "quarter")],
             pods=[pod("half-holder", templates={"gpu": "half"}, node_name="pa-1")],
             claims=[claim("half-holder-gpu", "ml", [exactly(sel=[f'{prof} == "half"'])],
                           [("gpu", "pa-1-pool", "gpu-0-half-1")], "pa-1", ["half-holder"])])
    scenario("dra-o27-partitionable-count-two", "Two quarters per claim until the counters run out, then a half "
             "that cannot fit.",
             [node("pq-1")], [pod(f"q{i}", templates={"gpu": "two-quarters"}) for i in range(2)]
             + [pod("h", templates={"gpu": "half"})],
             slices=parts("pq-1", [("half", {"memory": "20Gi"})] + [("quarter", {"memory": "10Gi"})] * 4),
             templates=[template("two-quarters", "ml", [exactly(count=2, sel=[f'{prof} == "quarter"'])]),
                        template("half", "ml", [exactly(sel=[f'{prof} == "half"'])])])
    # -- device taints ---------------------------------------------------------------------------------------------
    def tainted(n, taints):
        return rslice(f"{n}-gpus", [gpu(i, taints=t) if t else gpu(i) for i, t in enumerate(taints)], n)
    scenario("dra-o28-device-taint-noexecute", "A NoExecute device taint and a None one (informational): "
             "tolerations by key with Exists, and with an effect.",
             [node("tx-1"), node("tx-2")],
             [pod("plain", templates={"gpu": "plain"}), pod("tol-exec", templates={"gpu": "tol-exec"}),
              pod("plain-2", templates={"gpu": "plain"}), pod("tol-exec-2", templates={"gpu": "tol-exec"})],
             slices=[tainted("tx-1", [[{"key": "gpu.example.com/ecc", "effect": "NoExecute", "value": "dbe"}],
                                      [{"key": "gpu.example.com/ecc", "effect": "NoExecute", "value": "dbe"}]]),
                     tainted("tx-2", [[{"key": "gpu.example.com/note", "effect": "None", "value": "x"}]])],
             templates=[template("plain", "ml", [exactly()]),
                        template("tol-exec", "ml", [exactly(tolerations=[
                            {"key": "gpu.example.com/ecc", "operator": "Exists", "effect": "NoExecute"}])])])
    scenario("dra-o29-device-taint-toleration-mismatch", "Tolerations that do not match: a wrong value, a wrong "
             "effect; and one with tolerationSeconds.",
             [node("tm-1")],
             [pod("wrong-value", templates={"gpu": "wrong-value"}),
              pod("wrong-effect", templates={"gpu": "wrong-effect"}),
              pod("seconds", templates={"gpu": "seconds"})],
             slices=[tainted("tm-1", [[{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule", "value": "true"}],
                                      [{"key": "gpu.example.com/unhealthy", "effect": "NoExecute", "value": "true"}]])],
             templates=[template("wrong-value", "ml", [exactly(tolerations=[
                 {"key": "gpu.example.com/unhealthy", "operator": "Equal", "value": "false"}])]),
                 template("wrong-effect", "ml", [exactly(tolerations=[
                     {"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute"}])]),
                 template("seconds", "ml", [exactly(tolerations=[
                     {"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute",
                      "tolerationSeconds": 60}])])])
    # -- consumable capacity ------------------------------------------------------------------------------------
    def shared_nic(n, caps):
        return rslice(f"{n}-nics", [device("nic-0", {"vendor": "mellanox"}, caps, allowMultipleAllocations=True)],
                      n, NIC)
    scenario("dra-o30-consumable-valid-values", "A capacity with validValues (10G, 25G, 50G): a request of 20G is "
             "rounded up to 25G, one of 60G fits no value.",
             [node("vv-1"), node("vv-2")],
             [pod("bw20", templates={"nic": "bw20"}), pod("bw20b", templates={"nic": "bw20"}),
              pod("bw60", templates={"nic": "bw60"}), pod("bw-default", templates={"nic": "bw-default"})],
             classes=[dclass(NIC)],
             slices=[shared_nic("vv-1", {"bandwidth": {"value": "50G", "requestPolicy": {
                 "default": "10G", "validValues": ["10G", "25G", "50G"]}}}),
                     shared_nic("vv-2", {"bandwidth": {"value": "100G", "requestPolicy": {
                         "default": "10G", "validValues": ["10G", "25G", "50G"]}}})],
             templates=[template(f"bw{g}", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": f"{g}G"}})])
                        for g in (20, 60)] + [template("bw-default", "ml", [exactly("nic", NIC)])])
    scenario("dra-o31-consumable-two-capacities", "Two consumable capacities (bandwidth, queues) on one shared "
             "device; the queues run out first.",
             [node("cc-1")], [pod(f"cc-{i}", templates={"nic": "both"}) for i in range(4)], classes=[dclass(NIC)],
             slices=[shared_nic("cc-1", {"bandwidth": {"value": "100G", "requestPolicy": {
                 "default": "1G", "validRange": {"min": "1G", "step": "1G"}}}, "queues": {"value": "8"}})],
             templates=[template("both", "ml", [exactly("nic", NIC, capacity={"requests": {
                 "bandwidth": "20G", "queues": "3"}})])])
    scenario("dra-o32-consumable-over-max", "validRange with a max: a request above it fits nowhere; requests "
             "that are not a step are rounded up.",
             [node("om-1"), node("om-2")],
             [pod("over", templates={"nic": "over"}), pod("step", templates={"nic": "step"}),
              pod("step2", templates={"nic": "step"}), pod("step3", templates={"nic": "step"})],
             classes=[dclass(NIC)],
             slices=[shared_nic(n, {"bandwidth": {"value": "40G", "requestPolicy": {
                 "default": "5G", "validRange": {"min": "5G", "max": "20G", "step": "5G"}}}})
                     for n in ("om-1", "om-2")],
             templates=[template("over", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": "30G"}})]),
                        template("step", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": "12G"}})])])
    # -- extended resources backed by DRA ---------------------------------------------------------------------------
    nodes, slices = _gpu_nodes({"ex-1": ["a100", "a100"], "ex-2": ["a100"], "ex-3": []})
    scenario("dra-o33-extended-explicit-name", "extendedResourceName on a DeviceClass: pods ask two, then one, "
             "then two more GPUs through container requests.",
             nodes, [pod(f"ext-{i}", extended={"example.com/gpu": str(n)}) for i, n in enumerate((2, 1, 2))],
             classes=[dclass(extendedResourceName="example.com/gpu")], slices=slices)
    scenario("dra-o34-extended-implicit-name", "The implicit extended resource deviceclass.resource.kubernetes.io/"
             "<class> of a class without extendedResourceName.",
             nodes, [pod(f"impl-{i}", extended={f"deviceclass.resource.kubernetes.io/{GPU}": "1"}) for i in range(4)],
             slices=slices)
    scenario("dra-o35-extended-device-plugin-and-dra", "example.com/gpu from a device plugin on one node "
             "(allocatable) and from DRA on another, for pods with and without claims.",
             [node("dp-1", extra={"example.com/gpu": "2"}), node("dra-1")],
             [pod("e0", extended={"example.com/gpu": "1"}), pod("e1", extended={"example.com/gpu": "2"}),
              pod("e2", extended={"example.com/gpu": "1"}, templates={"gpu": "any-gpu"})],
             classes=[dclass(extendedResourceName="example.com/gpu")],
             slices=[gpus("dra-1", ["a100", "a100"])], templates=[template("any-gpu", "ml", [exactly()])])
    gpu_request = {"example.com/gpu": "1"}

    def container(name, gpus, **extra):
        return {"name": name, "image": "registry.example.com/ml/init:1.0",
                "resources": {"requests": {"example.com/gpu": str(gpus)}, "limits": {"example.com/gpu": str(gpus)}},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent", **extra}
    nodes, slices = _gpu_nodes({"xc-1": ["a100"] * 2, "xc-2": ["a100"] * 5})
    scenario("dra-o45-extended-init-and-sidecar", "Extended resources asked by an init container (3 GPUs, reusing "
             "the main container's one), by a sidecar and its main container, next to a claim, and more than is left.",
             nodes, [pod("x-init", extended=gpu_request, initContainers=[container("setup", 3)]),
                     pod("x-sidecar", extended=gpu_request,
                         initContainers=[container("proxy", 1, restartPolicy="Always")]),
                     pod("x-claim", extended=gpu_request, templates={"gpu": "any-gpu"}),
                     pod("x-more", extended={"example.com/gpu": "2"})],
             classes=[dclass(extendedResourceName="example.com/gpu")], slices=slices,
             templates=[template("any-gpu", "ml", [exactly()])])
    # -- NodeVolumeLimits: VolumeAttachments count at 1.36 ---------------------------------------------------------
    ebs = "ebs.csi.aws.com"

    def csinode(name, count=None):
        driver = {"name": ebs, "nodeID": name}
        if count is not None:
            driver["allocatable"] = {"count": count}
        return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
                "spec": {"drivers": [driver]}}

    def volume(i):
        return ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{i}"},
                 "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                          "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem",
                          "csi": {"driver": ebs, "volumeHandle": f"vol-{i}"},
                          "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "ml", "name": f"data-{i}",
                                       "apiVersion": "v1"}},
                 "status": {"phase": "Bound"}},
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": f"data-{i}", "namespace": "ml",
                              "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                          "volumeName": f"pv-{i}", "storageClassName": "", "volumeMode": "Filesystem"},
                 "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}})

    def attachment(node_name, i):
        return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                "metadata": {"name": f"csi-{node_name}-{i}"},
                "spec": {"attacher": ebs, "nodeName": node_name, "source": {"persistentVolumeName": f"pv-{i}"}}}

    def with_volumes(name, *ids):
        return pod(name, volumes=[{"name": f"d{i}", "persistentVolumeClaim": {"claimName": f"data-{i}"}}
                                  for i in ids])
    pvs, pvcs = zip(*(volume(i) for i in range(8)))
    scenario("dra-o46-csi-volume-attachments", "NodeVolumeLimits at 1.36: a node's VolumeAttachments count towards "
             "its CSINode limit (each volume once with its pods'), a node's attachable-volumes-csi-* allocatable "
             "without a CSINode limit no longer limits.",
             [node("va-1"), node("va-2"), node("va-3", extra={f"attachable-volumes-csi-{ebs}": "1"})],
             [with_volumes("one-0", 0), with_volumes("two-1", 1, 2), with_volumes("attached-4", 4),
              with_volumes("three-5", 5, 6, 7)],
             classes=(), namespaces=("ml",), csinodes=[csinode("va-1", 2), csinode("va-2", 3), csinode("va-3")],
             persistentvolumes=list(pvs), persistentvolumeclaims=list(pvcs),
             volumeattachments=[attachment("va-1", 3), attachment("va-1", 4), attachment("va-2", 3)])
    # -- claims held by other pods ---------------------------------------------------------------------------------
    nodes, slices = _gpu_nodes({"ho-1": ["a100", "a100"], "ho-2": ["a100", "a100"]})
    scenario("dra-o36-allocated-to-other-pods", "Three of four GPUs held by running pods' claims; a shared claim "
             "already allocated and reserved for a pod pins its second user to that node.",
             nodes, [pod("new-0", templates={"gpu": "one"}), pod("sharer", claims={"gpu": "shared"}),
                     pod("new-1", templates={"gpu": "one"})], slices=slices,
             templates=[template("one", "ml", [exactly()])],
             pods=[pod("run-a", templates={"gpu": "one"}, node_name="ho-1"),
                   pod("run-b", templates={"gpu": "one"}, node_name="ho-2"),
                   pod("owner", claims={"gpu": "shared"}, node_name="ho-2")],
             claims=[claim("run-a-gpu", "ml", [exactly()], [("gpu", "ho-1", "gpu-0")], "ho-1", ["run-a"]),
                     claim("run-b-gpu", "ml", [exactly()], [("gpu", "ho-2", "gpu-0")], "ho-2", ["run-b"]),
                     claim("shared", "ml", [exactly()], [("gpu", "ho-2", "gpu-1")], "ho-2", ["owner"])])
    nodes, slices = _gpu_nodes({"su-1": ["a100"], "su-2": ["a100"]})
    scenario("dra-o37-shared-claim-unallocated", "Two pods share one claim nobody allocated yet: the first "
             "allocates it, the second follows it; a pod that cannot fit there is refused.",
             [node("su-1", cpu="2"), node("su-2")],
             [pod("s0", claims={"gpu": "team"}, cpu="1"), pod("s1", claims={"gpu": "team"}, cpu="1"),
              pod("s2", claims={"gpu": "team"}, cpu="3")], slices=slices,
             claims=[claim("team", "ml", [exactly()])])
    # -- where devices are ----------------------------------------------------------------------------------------
    scenario("dra-o38-network-attached-devices", "Devices of a slice with a node selector (zone-b) and of one "
             "for all nodes, next to node-local ones.",
             [node("nw-a", zone="zone-a"), node("nw-b1", zone="zone-b"), node("nw-b2", zone="zone-b")],
             [pod("fabric", templates={"acc": "fabric"}), pod("pool", templates={"acc": "pool"}),
              pod("fabric-2", templates={"acc": "fabric"}), pod("local", templates={"acc": "local"})],
             classes=[dclass("acc.example.com")],
             slices=[rslice("zone-b-fabric", [device("fab-0", {"kind": "fabric"}), device("fab-1", {"kind": "fabric"})],
                            driver="acc.example.com", pool="zone-b",
                            nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]}]}]}),
                     rslice("everywhere", [device("pool-0", {"kind": "pooled"})], driver="acc.example.com",
                            pool="global", allNodes=True),
                     rslice("nw-a-local", [device("loc-0", {"kind": "local"})], "nw-a", "acc.example.com")],
             templates=[template(k, "ml", [exactly("acc", "acc.example.com",
                                                   sel=[f'device.attributes["acc.example.com"].kind == "{v}"'])])
                        for k, v in (("fabric", "fabric"), ("pool", "pooled"), ("local", "local"))])
    scenario("dra-o39-multi-slice-pools", "A pool of two slices on one node (devices in both), a pool whose "
             "second slice is missing (incomplete), and an older generation left next to a newer one.",
             [node("ms-1"), node("ms-2"), node("ms-3")],
             [pod(f"ms-{i}", templates={"gpu": "two"}) for i in range(3)],
             slices=[rslice("ms-1-a", [gpu(0)], "ms-1", pool="ms-1", count=2),
                     rslice("ms-1-b", [gpu(1)], "ms-1", pool="ms-1", count=2),
                     rslice("ms-2-a", [gpu(0), gpu(1)], "ms-2", pool="ms-2", count=2),
                     rslice("ms-3-old", [gpu(0), gpu(1)], "ms-3", pool="ms-3", generation=1),
                     rslice("ms-3-new", [gpu(2), gpu(3)], "ms-3", pool="ms-3", generation=2)],
             templates=[template("two", "ml", [exactly(count=2)])])
    # -- mixed -------------------------------------------------------------------------------------------------
    nodes, slices = _gpu_nodes({"mx-a1": ["a100"], "mx-a2": ["a100"], "mx-b1": ["a100"], "mx-b2": ["a100", "a100"]})
    for n, z in zip(nodes, ("zone-a", "zone-a", "zone-b", "zone-b")):
        n["metadata"]["labels"]["topology.kubernetes.io/zone"] = z
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "worker"}}}]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "worker"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    scenario("dra-o40-mixed-spread-anti-affinity", "GPU pods with zone spreading (DoNotSchedule) and host "
             "anti-affinity: the devices and the spread decide together.",
             nodes, [pod(f"worker-{i}", templates={"gpu": "one"}, labels={"app": "worker"},
                         topologySpreadConstraints=spread, affinity=anti) for i in range(5)],
             slices=slices, templates=[template("one", "ml", [exactly()])])
    nodes, slices = _gpu_nodes({"pr-1": ["a100"], "pr-2": ["a100"]})
    for n in nodes:
        n["status"]["allocatable"]["cpu"] = n["status"]["capacity"]["cpu"] = "4"
    scenario("dra-o41-mixed-preemption-claims", "A high-priority GPU pod when every GPU is held by low-priority "
             "pods (preemption cannot free devices), and a high-priority CPU pod that preempts.",
             nodes, [pod("urgent-gpu", templates={"gpu": "one"}, priority=1000),
                     pod("urgent-cpu", cpu="3", priority=1000)],
             slices=slices, templates=[template("one", "ml", [exactly()])],
             pods=[pod("low-a", templates={"gpu": "one"}, node_name="pr-1", cpu="3", priority=10),
                   pod("low-b", templates={"gpu": "one"}, node_name="pr-2", cpu="3", priority=10)],
             claims=[claim("low-a-gpu", "ml", [exactly()], [("gpu", "pr-1", "gpu-0")], "pr-1", ["low-a"]),
                     claim("low-b-gpu", "ml", [exactly()], [("gpu", "pr-2", "gpu-0")], "pr-2", ["low-b"])])
    taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    nodes = [node("tn-1", taints=taint), node("tn-2", taints=taint, cpu="2"), node("tn-3")]
    scenario("dra-o42-mixed-node-taints-resources", "Tainted GPU nodes, a pod that tolerates them and one that "
             "does not, cpu running out on tn-2, and a node with no devices.",
             nodes, [pod("tol-big", templates={"gpu": "one"}, tolerations=tol, cpu="3"),
                     pod("no-tol", templates={"gpu": "one"}), pod("tol-small", templates={"gpu": "one"},
                                                                   tolerations=tol, cpu="1"),
                     pod("tol-third", templates={"gpu": "one"}, tolerations=tol, cpu="1")],
             slices=[gpus("tn-1", ["a100"]), gpus("tn-2", ["a100", "a100"])],
             templates=[template("one", "ml", [exactly()])])
    scenario("dra-o43-bad-selector-refused", "A DeviceClass and a template whose CEL does not compile (a syntax "
             "error, an undeclared name): the apiserver refuses them; pods that use them wait for what does not "
             "exist.",
             [node("bs-1")], [pod("bad-class", templates={"gpu": "uses-bad-class"}),
                              pod("bad-template", templates={"gpu": "bad-template"})],
             classes=[dclass(), dclass("bad.example.com", ['device.attributes["x"].y ==', ], driver=GPU)],
             slices=[gpus("bs-1", ["a100"])],
             templates=[template("uses-bad-class", "ml", [exactly(cls="bad.example.com")]),
                        template("bad-template", "ml", [exactly(sel=['gpu.model == "a100"'])])])
    nodes, slices = _gpu_nodes({"fx-1": ["a100", "a100", "t4"], "fx-2": ["t4", "t4"], "fx-3": ["h100"]})
    for s in slices:
        for i, d in enumerate(s["spec"]["devices"]):
            d["attributes"]["numa"] = {"int": i % 2}
    slices[0]["spec"]["devices"][1]["taints"] = [{"key": "gpu.example.com/degraded", "effect": "NoSchedule"}]
    scenario("dra-o44-mixed-everything", "firstAvailable with a matchAttribute constraint, a tainted device some "
             "requests tolerate, a NIC with consumable bandwidth, and a second claim per pod.",
             nodes + [node("fx-4")],
             [pod(f"fx-{i}", templates={"gpu": t, "nic": "nic"}) for i, t in
              enumerate(("ladder", "ladder-tol", "ladder", "ladder-tol"))],
             classes=[dclass(), dclass(NIC)],
             slices=slices + [shared_nic(n, {"bandwidth": {"value": "50G", "requestPolicy": {
                 "default": "10G", "validRange": {"min": "10G", "step": "10G"}}}}) for n in ("fx-1", "fx-2", "fx-3")],
             templates=[template("ladder", "ml", [first("gpu", [
                 sub("a100x2", count=2, sel=[f'{model} == "a100"']), sub("h100", sel=[f'{model} == "h100"']),
                 sub("t4x2", count=2, sel=[f'{model} == "t4"'])])], [{"matchAttribute": f"{GPU}/numa"}]),
                 template("ladder-tol", "ml", [first("gpu", [
                     sub("a100x2", count=2, sel=[f'{model} == "a100"'],
                         tolerations=[{"key": "gpu.example.com/degraded", "operator": "Exists"}]),
                     sub("t4", sel=[f'{model} == "t4"'])])]),
                 template("nic", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": "20G"}})])])


def main(argv=None) -> int:
    build()
    for old in HERE.glob("dra-o*.scenario.json"):
        old.unlink()
    for name, doc in SCENARIOS.items():
        (HERE / f"{name}.scenario.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(SCENARIOS)} scenarios written to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
