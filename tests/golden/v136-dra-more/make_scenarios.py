#!/usr/bin/env python3
"""Writes the scenarios of this folder (``dra-mNN-*`` and ``v136-nNN-*.scenario.json``): combinations and edge
cases that ../v136-dra-own does not cover (DRA features mixed with each other and with the rest of the default
profile, the refusals of the apiserver, runtime errors of CEL), and v1.36 changes outside DRA. The object builders
are ../v136-dra-own/make_scenarios.py's. Their vectors come from the real kube-scheduler (README.md says how)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("dra_own_builders", HERE.parent / "v136-dra-own" / "make_scenarios.py")
own = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(own)
GPU, NIC, V = own.GPU, own.NIC, own.V
node, device, gpu, rslice, gpus, dclass = own.node, own.device, own.gpu, own.rslice, own.gpus, own.dclass
exactly, sub, first, template, claim, pod = own.exactly, own.sub, own.first, own.template, own.claim, own.pod
namespace, attr_of, scenario, SCENARIOS = own.namespace, own.attr_of, own.scenario, own.SCENARIOS
ADMIN_NS = namespace("monitoring", {"resource.kubernetes.io/admin-access": "true"})


def cel_nodes(devs: dict) -> tuple:
    """Nodes and one GPU slice each from {node: [(attributes, capacity)]}."""
    return ([node(n) for n in devs],
            [rslice(f"{n}-gpus", [device(f"gpu-{i}", a, c) for i, (a, c) in enumerate(d)], n)
             for n, d in devs.items()])


def shared_nic_device(name) -> dict:
    return device(name, {"v": "a"}, {"bandwidth": "50G"}, allowMultipleAllocations=True)


def shared_nic(n, caps) -> dict:
    """A node's slice with one NIC that several claims may share, with the capacities ``caps``."""
    return rslice(f"{n}-nics", [device("nic-0", {"vendor": "mellanox"}, caps, allowMultipleAllocations=True)], n, NIC)


def allocated_claim(name, ns, requests, results, node_selector, reserved=()) -> dict:
    """A claim allocated with ``results`` [(request, driver, pool, device)] and any node selector."""
    out = claim(name, ns, requests)
    out["status"] = {"allocation": {"devices": {"results": [
        {"request": r, "driver": d, "pool": p, "device": dev} for r, d, p, dev in results]},
        "allocationTimestamp": own.TS, **({"nodeSelector": node_selector} if node_selector else {})},
        "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in reserved]}
    out["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    return out


def zone_selector(zone) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}


def build_dra() -> None:
    model = attr_of("model")
    # -- queue order and competition ----------------------------------------------------------------------------
    nodes, slices = own._gpu_nodes({"qo-1": ["a100", "a100"], "qo-2": ["a100"]})
    scenario("dra-m01-queue-order-last-devices", "Four pods of three priorities compete for three GPUs: the queue "
             "order (priority, then creation) decides who gets the last one.",
             nodes, [pod("low-0", templates={"gpu": "one"}, priority=10),
                     pod("high-0", templates={"gpu": "two"}, priority=1000),
                     pod("mid-0", templates={"gpu": "one"}, priority=100),
                     pod("low-1", templates={"gpu": "one"}, priority=10)], slices=slices,
             templates=[template("one", "ml", [exactly()]), template("two", "ml", [exactly(count=2)])])
    nodes, slices = own._gpu_nodes({"sq-1": ["a100", "t4"], "sq-2": ["t4"], "sq-3": ["a100"]})
    scenario("dra-m02-several-pods-two-templates", "Six pods alternating two templates (an A100, any GPU): the "
             "generic ones take A100s too and starve the later A100 pods.",
             nodes, [pod(f"alt-{i}", templates={"gpu": "a100" if i % 2 else "any"}) for i in range(6)],
             slices=slices, templates=[template("a100", "ml", [exactly(sel=[f'{model} == "a100"'])]),
                                       template("any", "ml", [exactly()])])
    # -- firstAvailable combinations ------------------------------------------------------------------------------
    def numa_gpus(n, spec):
        return rslice(f"{n}-gpus", [gpu(i, m, attrs={"numa": x}) for i, (m, x) in enumerate(spec)], n)
    scenario("dra-m03-first-available-constraint-across-requests", "A claim with a firstAvailable request and an "
             "exactly request under one matchAttribute naming the parent request: the chosen subrequest must share "
             "the NUMA node of the NIC.",
             [node("fc-1"), node("fc-2"), node("fc-3")],
             [pod(f"fc-{i}", templates={"dev": "gpu-nic"}) for i in range(4)], classes=[dclass(), dclass(NIC)],
             slices=[numa_gpus("fc-1", [("h100", 0), ("a100", 1), ("a100", 1)]),
                     numa_gpus("fc-2", [("h100", 1), ("a100", 0)]),
                     numa_gpus("fc-3", [("a100", 0), ("a100", 0)]),
                     rslice("fc-1-nics", [device("nic-0", {"numa": 1})], "fc-1", NIC),
                     rslice("fc-2-nics", [device("nic-0", {"numa": 0})], "fc-2", NIC),
                     rslice("fc-3-nics", [device("nic-0", {"numa": 0}), device("nic-1", {"numa": 1})], "fc-3", NIC)],
             templates=[template("gpu-nic", "ml", [
                 first("gpu", [sub("h100", sel=[f'{model} == "h100"']),
                               sub("a100x2", count=2, sel=[f'{model} == "a100"'])]),
                 exactly("nic", NIC)], [{"requests": ["gpu", "nic"], "matchAttribute": f"{GPU}/numa"}])])
    scenario("dra-m04-first-available-subrequest-constraint", "A constraint naming one subrequest only "
             "(request/subrequest): it binds when that subrequest is chosen, not the other.",
             [node("fs-1"), node("fs-2")],
             [pod(f"fs-{i}", templates={"gpu": "ladder"}) for i in range(3)],
             slices=[numa_gpus("fs-1", [("a100", 0), ("a100", 1), ("t4", 0)]),
                     numa_gpus("fs-2", [("a100", 0), ("a100", 0), ("t4", 1), ("t4", 0)])],
             templates=[template("ladder", "ml", [first("gpu", [
                 sub("a100x2", count=2, sel=[f'{model} == "a100"']), sub("t4x2", count=2, sel=[f'{model} == "t4"'])])],
                 [{"requests": ["gpu/a100x2"], "matchAttribute": f"{GPU}/numa"}])])
    nodes, slices = own._gpu_nodes({"ft-1": ["a100", "a100"], "ft-2": ["t4", "t4"]})
    slices[0]["spec"]["devices"][0]["taints"] = [{"key": "maint", "value": "soon", "effect": "NoSchedule"}]
    scenario("dra-m05-first-available-tolerations-per-subrequest", "firstAvailable where only the first "
             "subrequest tolerates a device taint: the tainted A100 counts for it, the second falls back.",
             nodes, [pod(f"tl-{i}", templates={"gpu": "tl"}) for i in range(3)], slices=slices,
             templates=[template("tl", "ml", [first("gpu", [
                 sub("a100x2", count=2, sel=[f'{model} == "a100"'],
                     tolerations=[{"key": "maint", "operator": "Equal", "value": "soon", "effect": "NoSchedule"}]),
                 sub("a100", sel=[f'{model} == "a100"']), sub("t4", sel=[f'{model} == "t4"'])])])])
    nodes, slices = own._gpu_nodes({"fd-1": ["a100", "a100", "a100"], "fd-2": ["a100", "t4"]})
    for s in slices:
        for i, d in enumerate(s["spec"]["devices"]):
            d["attributes"]["numa"] = {"int": i}
    scenario("dra-m06-first-available-distinct", "firstAvailable with distinctAttribute: two A100s on different "
             "NUMA nodes, else any two GPUs; the score prefers the first subrequest.",
             nodes, [pod(f"fd-{i}", templates={"gpu": "fd"}) for i in range(3)], slices=slices,
             templates=[template("fd", "ml", [first("gpu", [
                 sub("a100x2", count=2, sel=[f'{model} == "a100"']), sub("anyx2", count=2)])],
                 [{"distinctAttribute": f"{GPU}/numa"}])])
    # -- admin access combinations --------------------------------------------------------------------------------
    nodes, slices = own._gpu_nodes({"aa-1": ["a100", "t4"], "aa-2": ["t4"]})
    scenario("dra-m07-admin-access-selector-held-devices", "adminAccess ExactCount with a selector on a device "
             "another claim holds, then two admin pods on the same device, then a normal pod.",
             nodes, [pod("mon-0", "monitoring", templates={"gpu": "watch-a100"}),
                     pod("mon-1", "monitoring", templates={"gpu": "watch-a100"}),
                     pod("train", templates={"gpu": "a100"})], slices=slices,
             namespaces=["ml", ADMIN_NS],
             templates=[template("watch-a100", "monitoring", [exactly(sel=[f'{model} == "a100"'], adminAccess=True)]),
                        template("a100", "ml", [exactly(sel=[f'{model} == "a100"'])])],
             pods=[pod("busy", templates={"gpu": "a100"}, node_name="aa-1")],
             claims=[claim("busy-gpu", "ml", [exactly(sel=[f'{model} == "a100"'])], [("gpu", "aa-1", "gpu-0")],
                           "aa-1", ["busy"])])
    scenario("dra-m08-admin-access-with-normal-request", "One claim with an admin request and a normal request "
             "in a labelled namespace: the admin one may take the held device, the normal one may not take it.",
             nodes, [pod("mixed-0", "monitoring", templates={"gpu": "mixed"}),
                     pod("mixed-1", "monitoring", templates={"gpu": "mixed"})], slices=slices,
             namespaces=["ml", ADMIN_NS],
             templates=[template("mixed", "monitoring", [exactly("watch", sel=[f'{model} == "a100"'], adminAccess=True),
                                                         exactly("work", sel=[f'{model} == "t4"'])])],
             pods=[pod("busy", templates={"gpu": "a100"}, node_name="aa-1")],
             claims=[claim("busy-gpu", "ml", [exactly(sel=[f'{model} == "a100"'])], [("gpu", "aa-1", "gpu-0")],
                           "aa-1", ["busy"])])
    # -- partitionable devices ----------------------------------------------------------------------------------
    def two_sets(n):
        sets = [{"name": "gpu-0", "counters": {"memory": {"value": "40Gi"}}},
                {"name": "board", "counters": {"power": {"value": "600"}}}]
        devs = [device(f"p-{i}", {"profile": p}, {"memory": m},
                       consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": m}}},
                                         {"counterSet": "board", "counters": {"power": {"value": w}}}])
                for i, (p, m, w) in enumerate((("big", "30Gi", "400"), ("small", "10Gi", "150"),
                                               ("small", "10Gi", "150"), ("small", "10Gi", "150")))]
        return [rslice(f"{n}-counters", [], n, pool=f"{n}-pool", count=2, sharedCounters=sets),
                rslice(f"{n}-parts", devs, n, pool=f"{n}-pool", count=2)]
    prof = attr_of("profile")
    scenario("dra-m09-partitionable-two-counter-sets", "Devices consuming from two counter sets (memory of a GPU, "
             "power of the board): the power runs out before the memory.",
             [node("cs2-1")], [pod(f"ps-{i}", templates={"gpu": t}) for i, t in
                               enumerate(("big", "small", "small", "small"))],
             slices=two_sets("cs2-1"),
             templates=[template(k, "ml", [exactly(sel=[f'{prof} == "{k}"'])]) for k in ("big", "small")])
    def mig_node(n, held=False):
        sets = [{"name": f"gpu-{g}", "counters": {"memory": {"value": "40Gi"}, "slices": {"value": "7"}}}
                for g in (0, 1)]
        devs = []
        for g in (0, 1):
            for prof_, mem, sl in (("full", "40Gi", "7"), ("3g", "20Gi", "3"), ("3g", "20Gi", "3"),
                                   ("1g", "5Gi", "1")):
                devs.append(device(f"gpu-{g}-{prof_}-{len(devs)}", {"profile": prof_, "parent": g}, {"memory": mem},
                                   consumesCounters=[{"counterSet": f"gpu-{g}", "counters": {
                                       "memory": {"value": mem}, "slices": {"value": sl}}}]))
        return [rslice(f"{n}-counters", [], n, pool=n, count=2, sharedCounters=sets),
                rslice(f"{n}-parts", devs, n, pool=n, count=2)]
    scenario("dra-m10-partitionable-several-sets-count", "Two GPUs, each its own counter set: two 3g partitions "
             "per claim with matchAttribute on the parent GPU, then a full GPU, then what is left.",
             [node("mg-1"), node("mg-2")],
             [pod("pair-0", templates={"gpu": "pair"}), pod("full-0", templates={"gpu": "full"}),
              pod("pair-1", templates={"gpu": "pair"}), pod("full-1", templates={"gpu": "full"}),
              pod("one-1g", templates={"gpu": "1g"})],
             slices=mig_node("mg-1") + mig_node("mg-2"),
             templates=[template("pair", "ml", [exactly(count=2, sel=[f'{prof} == "3g"'])],
                                 [{"matchAttribute": f"{GPU}/parent"}]),
                        template("full", "ml", [exactly(sel=[f'{prof} == "full"'])]),
                        template("1g", "ml", [exactly(sel=[f'{prof} == "1g"'])])])
    # -- consumable capacity --------------------------------------------------------------------------------------
    caps = {"bandwidth": {"value": "100G", "requestPolicy": {"default": "30G",
                                                             "validRange": {"min": "10G", "step": "10G"}}}}
    scenario("dra-m11-consumable-defaults-shared", "Several claims share one multi-allocatable NIC: requests "
             "without capacity take the policy's default (30G), a 5G request is raised to the minimum.",
             [node("sh-1"), node("sh-2", cpu="1")],
             [pod(f"sh-{i}", templates={"nic": t}) for i, t in
              enumerate(("default", "small", "default", "default", "small", "default"))],
             classes=[dclass(NIC)], slices=[shared_nic("sh-1", caps), shared_nic("sh-2", caps)],
             templates=[template("default", "ml", [exactly("nic", NIC)]),
                        template("small", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": "5G"}})])])
    scenario("dra-m12-consumable-no-policy", "A multi-allocatable device whose capacity has no requestPolicy: a "
             "request without capacity takes all of it, one with a capacity takes that much.",
             [node("np-1")],
             [pod("part", templates={"nic": "part"}), pod("whole", templates={"nic": "whole"}),
              pod("part-2", templates={"nic": "part"})],
             classes=[dclass(NIC)], slices=[shared_nic("np-1", {"bandwidth": {"value": "100G"}})],
             templates=[template("whole", "ml", [exactly("nic", NIC)]),
                        template("part", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": "40G"}})])])
    scenario("dra-m13-consumable-same-claim-twice", "One claim with two requests on the same shared NIC (each "
             "consuming 40G of 100G) and a pod with two such claims.",
             [node("st-1"), node("st-2")],
             [pod("double", templates={"nic": "double"}), pod("two-claims", templates={"a": "one", "b": "one"}),
              pod("double-2", templates={"nic": "double"})],
             classes=[dclass(NIC)], slices=[shared_nic(n, {"bandwidth": {"value": "100G"}}) for n in ("st-1", "st-2")],
             templates=[template("double", "ml", [exactly("a", NIC, capacity={"requests": {"bandwidth": "40G"}}),
                                                  exactly("b", NIC, capacity={"requests": {"bandwidth": "40G"}})]),
                        template("one", "ml", [exactly("nic", NIC, capacity={"requests": {"bandwidth": "60G"}})])])
    scenario("dra-m14-consumable-all-mode", "allocationMode All over multi-allocatable NICs with a capacity "
             "request, next to an exclusive device.",
             [node("ca-1"), node("ca-2")],
             [pod("all-0", templates={"nic": "all"}), pod("all-1", templates={"nic": "all"}),
              pod("all-2", templates={"nic": "all"})],
             classes=[dclass(NIC)],
             slices=[rslice("ca-1-nics", [shared_nic_device("nic-0"), shared_nic_device("nic-1")], "ca-1", NIC),
                     rslice("ca-2-nics", [shared_nic_device("nic-0"),
                                          device("nic-1", {"v": "a"}, {"bandwidth": "50G"})], "ca-2", NIC)],
             templates=[template("all", "ml", [exactly("nic", NIC, mode="All",
                                                       capacity={"requests": {"bandwidth": "20G"}})])])
    # -- device taints ---------------------------------------------------------------------------------------------
    def tainted(n, taints):
        return rslice(f"{n}-gpus", [gpu(i, taints=t) if t else gpu(i) for i, t in enumerate(taints)], n)
    scenario("dra-m15-taint-effects-and-operators", "NoSchedule and NoExecute device taints; tolerations with "
             "Exists and an empty key (everything), Equal with a value, Exists on a key without effect.",
             [node("te-1"), node("te-2")],
             [pod("none", templates={"gpu": "none"}), pod("all", templates={"gpu": "all"}),
              pod("equal", templates={"gpu": "equal"}), pod("key", templates={"gpu": "key"}),
              pod("none-2", templates={"gpu": "none"})],
             slices=[tainted("te-1", [[{"key": "a", "value": "x", "effect": "NoSchedule"}],
                                      [{"key": "b", "value": "y", "effect": "NoExecute"}]]),
                     tainted("te-2", [[{"key": "a", "value": "z", "effect": "NoExecute"},
                                       {"key": "b", "value": "y", "effect": "NoSchedule"}]])],
             templates=[template("none", "ml", [exactly()]),
                        template("all", "ml", [exactly(count=3, tolerations=[{"operator": "Exists"}])]),
                        template("equal", "ml", [exactly(tolerations=[
                            {"key": "a", "operator": "Equal", "value": "x", "effect": "NoSchedule"}])]),
                        template("key", "ml", [exactly(tolerations=[{"key": "b", "operator": "Exists"}])])])
    scenario("dra-m16-taint-toleration-refused", "Device tolerations the apiserver refuses: Equal with an empty "
             "key, Exists with a value; pods using them wait for their claims.",
             [node("tr-1")],
             [pod("eq-empty", templates={"gpu": "eq-empty"}), pod("ex-value", templates={"gpu": "ex-value"}),
              pod("fine", templates={"gpu": "fine"})],
             slices=[tainted("tr-1", [[{"key": "a", "value": "x", "effect": "NoSchedule"}], None])],
             templates=[template("eq-empty", "ml", [exactly(tolerations=[{"operator": "Equal", "value": "x"}])]),
                        template("ex-value", "ml", [exactly(tolerations=[{"key": "a", "operator": "Exists",
                                                                          "value": "x"}])]),
                        template("fine", "ml", [exactly(count=2, tolerations=[{"key": "a", "operator": "Equal",
                                                                               "value": "x"}])])])
    # -- CEL --------------------------------------------------------------------------------------------------------
    nodes, slices = cel_nodes({
        "qu-1": [({}, {"memory": "1Gi", "power": "300"})],
        "qu-2": [({}, {"memory": "1073741824", "power": "0.3k"})],
        "qu-3": [({}, {"memory": "1G", "power": "300000m"})]})
    cap = f'device.capacity["{GPU}"]'
    scenario("dra-m17-cel-quantity-units", "Capacity quantities written in different units (1Gi, 1073741824, 1G; "
             "300, 0.3k, 300000m): equality, compareTo and sign().",
             nodes, [pod("gi", templates={"gpu": "gi"}), pod("g", templates={"gpu": "g"}),
                     pod("power", templates={"gpu": "power"})], slices=slices,
             templates=[template("gi", "ml", [exactly(sel=[f'{cap}.memory == quantity("1Gi")'])]),
                        template("g", "ml", [exactly(sel=[f'{cap}.memory.compareTo(quantity("1000M")) == 0'])]),
                        template("power", "ml", [exactly(count=1, sel=[
                            f'{cap}.power.sub(quantity("300")).sign() == 0 && {cap}.power.isInteger()'])])])
    nodes, slices = cel_nodes({
        "sv-1": [({"fw": V("1.2.3"), "name": "alpha"}, None)], "sv-2": [({"fw": V("1.10.0"), "name": "beta"}, None)],
        "sv-3": [({"fw": V("2.0.0-alpha.1"), "name": "Gamma"}, None)]})
    scenario("dra-m18-cel-version-and-string-order", "Version attributes against semver() (1.10.0 above 1.2.3, "
             "unlike strings), minor(), patch(); strings ordered with < and lowerAscii().",
             nodes, [pod("ver", templates={"gpu": "ver"}), pod("minor", templates={"gpu": "minor"}),
                     pod("str", templates={"gpu": "str"})], slices=slices,
             templates=[template("ver", "ml", [exactly(sel=[
                 f'{attr_of("fw")}.isGreaterThan(semver("1.9.0")) && {attr_of("fw")}.major() == 1'])]),
                 template("minor", "ml", [exactly(sel=[f'{attr_of("fw")}.minor() + {attr_of("fw")}.patch() == 5'])]),
                 template("str", "ml", [exactly(sel=[f'{attr_of("name")}.lowerAscii() > "beta"'])])])
    nodes, slices = cel_nodes({"er-1": [({"cores": 0, "model": "a100"}, None)],
                               "er-2": [({"cores": 4, "model": "a100"}, None)]})
    scenario("dra-m19-cel-division-by-zero", "A selector dividing by an attribute that is 0 on one device: a "
             "runtime error, a scheduler error naming the claim.",
             nodes, [pod("div", templates={"gpu": "div"}), pod("safe", templates={"gpu": "safe"})], slices=slices,
             templates=[template("div", "ml", [exactly(sel=[f'64 / {attr_of("cores")} > 1'])]),
                        template("safe", "ml", [exactly(sel=[
                            f'{attr_of("cores")} != 0 && 64 / {attr_of("cores")} > 1'])])])
    scenario("dra-m20-cel-missing-capacity", "device.capacity of a name no device has, read without and with "
             "has(); and a domain missing from the attributes map read with [].",
             nodes, [pod("nocap", templates={"gpu": "nocap"}), pod("hascap", templates={"gpu": "hascap"}),
                     pod("nokey", templates={"gpu": "nokey"})], slices=slices,
             templates=[template("nocap", "ml", [exactly(sel=[
                 f'{cap}.bandwidth.isGreaterThan(quantity("1"))'])]),
                 template("hascap", "ml", [exactly(sel=[f'!has({cap}.bandwidth)'])]),
                 template("nokey", "ml", [exactly(sel=['device.attributes["other.example.com"]["model"] == "a100"'])])])
    nodes, slices = cel_nodes({"ot-1": [({"model": "a100", "cores": 108}, None)],
                               "ot-2": [({"model": "t4", "cores": 40}, None)]})
    scenario("dra-m21-cel-overflow-and-conversions", "CEL int overflow at run time, string(), int() of a string "
             "that is no number, double arithmetic.",
             nodes, [pod("conv", templates={"gpu": "conv"}), pod("dbl", templates={"gpu": "dbl"}),
                     pod("overflow", templates={"gpu": "overflow"}), pod("badint", templates={"gpu": "badint"})],
             slices=slices,
             templates=[template("conv", "ml", [exactly(sel=[f'string({attr_of("cores")}) + {model} == "108a100"'])]),
                        template("dbl", "ml", [exactly(sel=[f'double({attr_of("cores")}) / 3.0 > 30.0'])]),
                        template("overflow", "ml", [exactly(sel=[f'{attr_of("cores")} * 9223372036854775807 > 0'])]),
                        template("badint", "ml", [exactly(sel=[f'int({model}) > 0'])])])
    scenario("dra-m22-cel-not-bool-refused", "Selectors the apiserver refuses: a non-boolean result, a wrong "
             "type in a comparison, an unknown function.",
             [node("nb-1")], [pod("int", templates={"gpu": "int"}), pod("cmp", templates={"gpu": "cmp"}),
                              pod("fn", templates={"gpu": "fn"})],
             slices=[gpus("nb-1", ["a100"])],
             templates=[template("int", "ml", [exactly(sel=[f'{attr_of("index")} + 1'])]),
                        template("cmp", "ml", [exactly(sel=['device.driver == 1'])]),
                        template("fn", "ml", [exactly(sel=[f'{model}.reverse() == "001a"'])])])
    # -- allocation modes ---------------------------------------------------------------------------------------------
    nodes, slices = own._gpu_nodes({"az-1": ["t4"], "az-2": [], "az-3": ["t4", "t4"]})
    scenario("dra-m23-all-mode-no-match", "allocationMode All with a selector no device matches anywhere; All on "
             "nodes without any slice; then All that matches.",
             nodes, [pod("h100-all", templates={"gpu": "h100-all"}), pod("t4-all", templates={"gpu": "t4-all"}),
                     pod("t4-all-2", templates={"gpu": "t4-all"})], slices=slices,
             templates=[template("h100-all", "ml", [exactly(mode="All", sel=[f'{model} == "h100"'])]),
                        template("t4-all", "ml", [exactly(mode="All", sel=[f'{model} == "t4"'])])])
    scenario("dra-m24-count-limits-refused", "Claims the apiserver refuses: count 0, ExactCount with All's "
             "count, a constraint naming a request that does not exist.",
             [node("cl-1")], [pod("zero", templates={"gpu": "zero"}), pod("allcount", templates={"gpu": "allcount"}),
                              pod("badref", templates={"gpu": "badref"}), pod("ok", templates={"gpu": "ok"})],
             slices=[gpus("cl-1", ["a100", "a100"])],
             templates=[template("zero", "ml", [exactly(count=0)]),
                        template("allcount", "ml", [exactly(mode="All", count=2)]),
                        template("badref", "ml", [exactly()],
                                 [{"requests": ["nope"], "matchAttribute": f"{GPU}/model"}]),
                        template("ok", "ml", [exactly(count=2)])])
    # -- claims allocated elsewhere, shared and reserved ------------------------------------------------------------
    nodes = [node("zs-a1", zone="zone-a"), node("zs-a2", zone="zone-a", cpu="1"), node("zs-b1", zone="zone-b")]
    fabric = rslice("zone-a-fabric", [device("fab-0"), device("fab-1")], driver="acc.example.com", pool="zone-a",
                    nodeSelector=zone_selector("zone-a"))
    scenario("dra-m25-allocated-claim-zone-selector", "A shared claim allocated on a zone's fabric (its "
             "allocation's node selector is the zone): its users go to that zone's nodes only, cpu permitting.",
             nodes, [pod(f"fz-{i}", claims={"acc": "fabric-shared"}, cpu="600m") for i in range(4)],
             classes=[dclass("acc.example.com")], slices=[fabric],
             claims=[allocated_claim("fabric-shared", "ml", [exactly("acc", "acc.example.com")],
                                     [("acc", "acc.example.com", "zone-a", "fab-0")], zone_selector("zone-a"))])
    nodes, slices = own._gpu_nodes({"on-1": ["a100"], "on-2": ["a100"]})
    scenario("dra-m26-allocated-claim-other-node", "A claim allocated on on-1 but reserved for nobody (its pod "
             "is gone): a new user must go to on-1, and a pod with it and a fresh claim needs a second device there.",
             nodes, [pod("follow", claims={"gpu": "left"}), pod("both", claims={"old": "left"},
                                                                 templates={"new": "one"})], slices=slices,
             templates=[template("one", "ml", [exactly()])],
             claims=[claim("left", "ml", [exactly()], [("gpu", "on-1", "gpu-0")], "on-1", [])])
    many = [f"user-{i:03d}" for i in range(256)]
    crowded = node("rm-1", extra={"pods": "300"})
    scenario("dra-m27-claim-reserved-for-maximum", "A shared claim reserved for 256 running consumers (the "
             "maximum): a 257th pod that uses it cannot reserve it; one reserved for 255 can take one more.",
             [crowded, node("rm-2")],
             [pod("one-too-many", claims={"gpu": "full-house"}), pod("last-seat", claims={"gpu": "almost"})],
             slices=[gpus("rm-1", ["a100", "a100"]), gpus("rm-2", ["a100"])],
             pods=[pod(u, claims={"gpu": "full-house", **({"other": "almost"} if i < 255 else {})}, cpu="10m",
                       memory="16Mi", node_name="rm-1") for i, u in enumerate(many)],
             claims=[claim("full-house", "ml", [exactly()], [("gpu", "rm-1", "gpu-0")], "rm-1", many),
                     claim("almost", "ml", [exactly()], [("gpu", "rm-1", "gpu-1")], "rm-1", many[:255])])
    # -- extended resources -----------------------------------------------------------------------------------------
    nodes, slices = own._gpu_nodes({"xr-1": ["a100", "a100"], "xr-2": ["a100", "a100", "a100"]})
    scenario("dra-m28-extended-more-than-any-node", "A class with extendedResourceName and config: a pod asks "
             "four GPUs (more than any node has), then three, then two, in two containers.",
             nodes, [pod("four", extended={"example.com/gpu": "4"}), pod("three", extended={"example.com/gpu": "3"}),
                     pod("two", extended={"example.com/gpu": "1"})],
             classes=[dclass(extendedResourceName="example.com/gpu", config=[{"opaque": {
                 "driver": GPU, "parameters": {"sharing": {"strategy": "TimeSlicing"}}}}])],
             slices=slices)
    second = SCENARIOS["dra-m28-extended-more-than-any-node"]["pending"][2]["spec"]
    second["containers"].append(dict(second["containers"][0], name="side"))
    nodes, slices = own._gpu_nodes({"xs-1": ["a100", "t4"], "xs-2": ["t4", "t4"]})
    scenario("dra-m29-extended-class-selector", "An extended resource whose class selects A100s only, next to "
             "the implicit name of a class for T4s; a pod asks both.",
             nodes, [pod("a", extended={"example.com/a100": "1"}),
                     pod("t", extended={"deviceclass.resource.kubernetes.io/t4.example.com": "2"}),
                     pod("both", extended={"example.com/a100": "1",
                                           "deviceclass.resource.kubernetes.io/t4.example.com": "1"})],
             classes=[dclass("a100.example.com", [f'{model} == "a100"'], driver=GPU,
                             extendedResourceName="example.com/a100"),
                      dclass("t4.example.com", [f'{model} == "t4"'], driver=GPU)], slices=slices)
    # -- mixed with the rest of the profile ----------------------------------------------------------------------------
    nodes, slices = own._gpu_nodes({"na-1": ["a100"], "na-2": ["a100", "a100"], "na-3": ["a100"]})
    nodes[1]["metadata"]["labels"]["pool"] = "spot"
    nodes[2]["metadata"]["labels"]["pool"] = "reserved"
    aff = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "pool", "operator": "NotIn", "values": ["reserved"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": {"matchExpressions": [
            {"key": "pool", "operator": "In", "values": ["spot"]}]}}]}}
    spread = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
               "labelSelector": {"matchLabels": {"app": "aff"}}}]
    scenario("dra-m30-mixed-node-affinity-spread", "GPU pods with required and preferred node affinity and "
             "ScheduleAnyway spreading: scores of NodeAffinity, PodTopologySpread and the devices together.",
             nodes, [pod(f"aff-{i}", templates={"gpu": "one"}, labels={"app": "aff"}, affinity=aff,
                         topologySpreadConstraints=spread) for i in range(4)],
             slices=slices, templates=[template("one", "ml", [exactly()])])
    nodes, slices = own._gpu_nodes({"pv-1": ["a100"], "pv-2": ["a100", "a100"]})
    for n in nodes:
        n["status"]["allocatable"]["cpu"] = n["status"]["capacity"]["cpu"] = "4"
    scenario("dra-m31-preemption-victims-hold-devices", "A high-priority GPU pod whose cpu only fits where "
             "low-priority pods hold the GPUs; a high-priority pod that needs cpu on a GPU node.",
             nodes, [pod("urgent", templates={"gpu": "one"}, cpu="3", priority=1000),
                     pod("urgent-cpu", cpu="2", priority=1000)],
             slices=slices, templates=[template("one", "ml", [exactly()])],
             pods=[pod("low-a", templates={"gpu": "one"}, node_name="pv-1", cpu="2", priority=10),
                   pod("low-b", templates={"gpu": "one"}, node_name="pv-2", cpu="2", priority=10),
                   pod("low-c", node_name="pv-2", cpu="1500m", priority=5)],
             claims=[claim("low-a-gpu", "ml", [exactly()], [("gpu", "pv-1", "gpu-0")], "pv-1", ["low-a"]),
                     claim("low-b-gpu", "ml", [exactly()], [("gpu", "pv-2", "gpu-0")], "pv-2", ["low-b"])])
    nodes, slices = own._gpu_nodes({"pl-1": ["a100"], "pl-2": ["a100", "a100"]})
    nodes[0]["status"]["allocatable"]["cpu"] = nodes[0]["status"]["capacity"]["cpu"] = "2"
    plr = {"requests": {"cpu": "1500m", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}}
    scenario("dra-m32-pod-level-resources-claims", "Pod-level resources (spec.resources) on GPU pods: the pod's "
             "requests, not its containers', count for NodeResourcesFit and BalancedAllocation.",
             nodes, [pod(f"plr-{i}", templates={"gpu": "one"}, cpu="200m", resources=plr) for i in range(3)],
             slices=slices, templates=[template("one", "ml", [exactly()])])
    nodes, slices = own._gpu_nodes({"ia-1": ["a100"], "ia-2": ["a100"], "ia-3": ["a100"]})
    anti = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
            "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}},
                                "topologyKey": "kubernetes.io/hostname"}}]},
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}
    nodes[2]["metadata"]["labels"]["topology.kubernetes.io/zone"] = "zone-b"
    scenario("dra-m33-mixed-pod-affinity", "GPU pods that need a cache pod in their zone and prefer hosts "
             "without a db pod; zone-b has a GPU but no cache.",
             nodes, [pod(f"gpu-db-{i}", templates={"gpu": "one"}, labels={"app": "db"}, affinity=anti)
                     for i in range(3)],
             slices=slices, templates=[template("one", "ml", [exactly()])],
             pods=[pod("cache-0", node_name="ia-1", labels={"app": "cache"}),
                   pod("db-old", node_name="ia-1", labels={"app": "db"})])


def build_dra_lookups() -> None:
    """What claims refer to and what selectors read, at their edges."""
    model = attr_of("model")
    nodes, slices = own._gpu_nodes({"lk-1": ["a100"], "lk-2": ["t4"]})
    scenario("dra-m34-missing-device-class", "A template whose request names a DeviceClass that does not exist, and "
             "a firstAvailable whose first subrequest does: the class is looked up per request.",
             nodes, [pod("no-class", templates={"gpu": "no-class"}), pod("fallback", templates={"gpu": "fallback"}),
                     pod("fine", templates={"gpu": "fine"})], slices=slices,
             templates=[template("no-class", "ml", [exactly(cls="missing.example.com")]),
                        template("fallback", "ml", [first("gpu", [sub("ghost", cls="missing.example.com"),
                                                                  sub("real", sel=[f'{model} == "t4"'])])]),
                        template("fine", "ml", [exactly()])])
    scenario("dra-m35-missing-claim", "A pod naming a ResourceClaim that does not exist, next to one whose claim "
             "exists: the first is never queued.",
             nodes, [pod("orphan", claims={"gpu": "nowhere"}), pod("owned", claims={"gpu": "here"})], slices=slices,
             claims=[claim("here", "ml", [exactly()])])
    per_device = rslice("pd-slice", [
        device("gpu-0", {"model": "a100"}, nodeName="pd-1"),
        device("gpu-1", {"model": "a100"}, nodeSelector=zone_selector("zone-b")),
        device("gpu-2", {"model": "t4"}, allNodes=True)], pool="pd", perDeviceNodeSelection=True)
    scenario("dra-m36-per-device-node-selection", "A slice with perDeviceNodeSelection: one device on a node, one "
             "for a zone, one for every node.",
             [node("pd-1"), node("pd-2", zone="zone-b"), node("pd-3")],
             [pod(f"pd-{i}", templates={"gpu": t}) for i, t in enumerate(("a100", "a100", "a100", "any", "any"))],
             slices=[per_device],
             templates=[template("a100", "ml", [exactly(sel=[f'{model} == "a100"'])]),
                        template("any", "ml", [exactly()])])
    nodes, slices = cel_nodes({
        "mp-1": [({"model": "a100", "ecc": True}, {"memory": "80Gi"})],
        "mp-2": [({"model": "t4"}, None)],
        "mp-3": [({}, None)]})
    gpu_attrs = f'device.attributes["{GPU}"]'
    scenario("dra-m37-cel-maps-and-macros", "Selectors over the attribute maps: `in`, size(), exists_one over a "
             "literal list, has() on capacity, allowMultipleAllocations.",
             nodes, [pod("in-map", templates={"gpu": "in-map"}), pod("sized", templates={"gpu": "sized"}),
                     pod("one", templates={"gpu": "one"}), pod("exclusive", templates={"gpu": "exclusive"})],
             slices=slices,
             templates=[template("in-map", "ml", [exactly(sel=[f'"ecc" in {gpu_attrs}'])]),
                        template("sized", "ml", [exactly(sel=[f'size({gpu_attrs}) == 0'])]),
                        template("one", "ml", [exactly(sel=[f'["t4", "l4", "x"].exists_one(m, m == {model})'])]),
                        template("exclusive", "ml", [exactly(sel=[
                            f'!device.allowMultipleAllocations && has(device.capacity["{GPU}"].memory)'])])])
    nodes, slices = cel_nodes({"vs-1": [({"fw": V("1.2.3")}, None)], "vs-2": [({"fw": V("2.0.0")}, None)]})
    scenario("dra-m38-cel-version-against-string", "A version attribute compared with a string: == is false "
             "(different types), < is a runtime error; semver() of a bad literal.",
             nodes, [pod("eq", templates={"gpu": "eq"}), pod("lt", templates={"gpu": "lt"}),
                     pod("badsemver", templates={"gpu": "badsemver"})], slices=slices,
             templates=[template("eq", "ml", [exactly(sel=[
                 f'{attr_of("fw")} == "1.2.3" || {attr_of("fw")}.major() == 2'])]),
                        template("lt", "ml", [exactly(sel=[f'{attr_of("fw")} < "2.0.0"'])]),
                        template("badsemver", "ml", [exactly(sel=[f'{attr_of("fw")}.isLessThan(semver("1.x"))'])])])
    nodes, slices = own._gpu_nodes({"at-1": ["a100", "a100"], "at-2": ["a100"]})
    for d in slices[0]["spec"]["devices"]:
        d["taints"] = [{"key": "broken", "value": "yes", "effect": "NoSchedule"}]
    scenario("dra-m39-admin-access-and-taints", "adminAccess does not pass device taints: an admin claim without "
             "tolerations, one with, and a normal claim.",
             nodes, [pod("adm-plain", "monitoring", templates={"gpu": "adm-plain"}),
                     pod("adm-tol", "monitoring", templates={"gpu": "adm-tol"}),
                     pod("normal", templates={"gpu": "normal"})], slices=slices,
             namespaces=["ml", ADMIN_NS],
             templates=[template("adm-plain", "monitoring", [exactly(mode="All", adminAccess=True)]),
                        template("adm-tol", "monitoring", [exactly(mode="All", adminAccess=True, tolerations=[
                            {"key": "broken", "operator": "Exists"}])]),
                        template("normal", "ml", [exactly(count=2)])])
    nodes, slices = own._gpu_nodes({"ic-1": ["a100"], "ic-2": ["a100", "a100"]})
    init = {"name": "warmup", "image": "registry.example.com/ml/warmup:1",
            "resources": {"requests": {"example.com/gpu": "2"}, "limits": {"example.com/gpu": "2"}}}
    scenario("dra-m40-extended-in-init-containers", "An extended resource backed by DRA asked by an init container "
             "(two) and the app container (one): the pod needs the larger at once.",
             nodes, [pod("warm", extended={"example.com/gpu": "1"}, initContainers=[init]),
                     pod("warm-2", extended={"example.com/gpu": "1"}, initContainers=[init])],
             classes=[dclass(extendedResourceName="example.com/gpu")], slices=slices)
    nodes, slices = own._gpu_nodes({"vd-1": ["a100"], "vd-2": ["a100"]})
    for n in nodes:
        n["status"]["allocatable"]["cpu"] = n["status"]["capacity"]["cpu"] = "2"
    scenario("dra-m41-preemption-frees-devices", "High-priority pods that need a GPU when low-priority pods hold "
             "every GPU through their template claims, with cpu to spare.",
             nodes, [pod("vip", templates={"gpu": "one"}, cpu="500m", priority=1000),
                     pod("vip-2", templates={"gpu": "one"}, cpu="500m", priority=1000)],
             slices=slices, templates=[template("one", "ml", [exactly()])],
             pods=[pod("low-a", templates={"gpu": "one"}, node_name="vd-1", cpu="500m", priority=10),
                   pod("low-b", templates={"gpu": "one"}, node_name="vd-2", cpu="500m", priority=10)],
             claims=[claim("low-a-gpu", "ml", [exactly()], [("gpu", "vd-1", "gpu-0")], "vd-1", ["low-a"]),
                     claim("low-b-gpu", "ml", [exactly()], [("gpu", "vd-2", "gpu-0")], "vd-2", ["low-b"])])


def build_core() -> None:
    """v1.36 changes outside DRA."""
    plain = [node(f"w-{i}", cpu="4", memory="8Gi", zone=z) for i, z in enumerate(("zone-a", "zone-a", "zone-b"))]
    scenario("v136-n01-pod-level-resources", "Pod-level requests larger than the containers' sum, and a pod-level "
             "memory limit only: NodeResourcesFit and BalancedAllocation count the pod's requests.",
             plain, [pod("pl-a", cpu="100m", memory="128Mi", resources={"requests": {"cpu": "3", "memory": "2Gi"}}),
                     pod("pl-b", cpu="1", memory="1Gi", resources={"limits": {"memory": "6Gi"}}),
                     pod("pl-c", cpu="100m", resources={"requests": {"cpu": "2"}, "limits": {"cpu": "2"}})],
             classes=())
    scenario("v136-n02-pod-level-refused", "Pod-level requests below the containers' sum, and a pod-level "
             "resource that is not cpu or memory: refused by the apiserver.",
             plain, [pod("below", cpu="2", resources={"requests": {"cpu": "1"}}),
                     pod("storage", resources={"requests": {"ephemeral-storage": "1Gi"}}),
                     pod("fine", resources={"requests": {"cpu": "1"}})], classes=())
    side = {"name": "proxy", "image": "registry.example.com/proxy:1", "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    init = {"name": "setup", "image": "registry.example.com/setup:1",
            "resources": {"requests": {"cpu": "3500m", "memory": "512Mi"}}}
    scenario("v136-n03-sidecars-and-init", "Sidecar containers (restartPolicy Always) add to every later init "
             "container and to the app containers; a big plain init container dominates only while it runs.",
             plain, [pod("side-only", cpu="2", initContainers=[side]),
                     pod("side-then-init", cpu="500m", initContainers=[side, init]),
                     pod("init-then-side", cpu="500m", initContainers=[init, side])], classes=())
    feat = [node(f"df-{i}", cpu="4") for i in range(3)]
    feat[0]["status"]["declaredFeatures"] = ["PodLevelResourcesResize"]
    feat[1]["status"]["declaredFeatures"] = ["RestartAllContainers", "ExtendWebSocketsToKubelet"]
    scenario("v136-n04-node-declared-features", "Nodes declaring features (status.declaredFeatures) next to one "
             "that declares none, for pods with pod-level resources and plain pods.",
             feat, [pod("plr", resources={"requests": {"cpu": "1"}}), pod("plain"),
                    pod("plr-2", resources={"requests": {"cpu": "2"}})],
             classes=())
    imgs = [node(f"im-{i}", cpu="4") for i in range(3)]
    imgs[0]["status"]["images"] = [{"names": ["registry.example.com/models/llama:7b"], "sizeBytes": 900000000}]
    imgs[1]["status"]["images"] = [{"names": ["registry.example.com/ml/worker:1.0"], "sizeBytes": 600000000}]
    vol = [{"name": "model", "image": {"reference": "registry.example.com/models/llama:7b",
                                       "pullPolicy": "IfNotPresent"}}]
    scenario("v136-n05-image-volumes", "Image volumes (GA in 1.36) next to container images: what ImageLocality "
             "counts.",
             imgs, [pod("iv-0", volumes=vol), pod("iv-1", volumes=vol), pod("plain")], classes=())
    spread_keys = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]}]
    z = [node(f"mk-{i}", cpu="8", zone=zz) for i, zz in enumerate(("zone-a", "zone-b", "zone-c"))]
    scenario("v136-n06-spread-match-label-keys", "Topology spread with matchLabelKeys: only pods of the same "
             "pod-template-hash count; old-revision pods fill zone-a.",
             z, [pod(f"web-new-{i}", labels={"app": "web", "pod-template-hash": "v2"},
                     topologySpreadConstraints=spread_keys) for i in range(4)],
             pods=[pod(f"web-old-{i}", node_name="mk-0", labels={"app": "web", "pod-template-hash": "v1"})
                   for i in range(3)] + [pod("web-v2-b", node_name="mk-1",
                                             labels={"app": "web", "pod-template-hash": "v2"})],
             classes=())
    aff_keys = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "job"}}, "topologyKey": "topology.kubernetes.io/zone",
         "matchLabelKeys": ["batch"]}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 80, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "job"}}, "topologyKey": "kubernetes.io/hostname",
            "mismatchLabelKeys": ["batch"]}}]}}
    scenario("v136-n07-affinity-match-label-keys", "Pod affinity with matchLabelKeys (same batch in the zone) "
             "and anti-affinity with mismatchLabelKeys (away from other batches).",
             z, [pod("job-b1-x", labels={"app": "job", "batch": "b1"}, affinity=aff_keys),
                 pod("job-b2-x", labels={"app": "job", "batch": "b2"}, affinity=aff_keys),
                 pod("job-b3-x", labels={"app": "job", "batch": "b3"}, affinity=aff_keys)],
             pods=[pod("job-b1-0", node_name="mk-1", labels={"app": "job", "batch": "b1"}),
                   pod("job-b2-0", node_name="mk-2", labels={"app": "job", "batch": "b2"}),
                   pod("job-b2-1", node_name="mk-0", labels={"app": "job", "batch": "b2"})], classes=())
    tz = [node(f"ni-{i}", cpu="8", zone=zz, labels={"tier": "gpu" if i == 3 else "cpu"},
               taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if i == 2 else None)
          for i, zz in enumerate(("zone-a", "zone-b", "zone-c", "zone-d"))]
    honor = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": {"app": "hon"}}, "nodeTaintsPolicy": "Honor",
              "nodeAffinityPolicy": "Ignore"}]
    sel = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["cpu"]}]}]}}}
    scenario("v136-n08-node-inclusion-policies", "nodeTaintsPolicy Honor (the tainted zone does not count) with "
             "nodeAffinityPolicy Ignore (the gpu-tier zone counts though the pods cannot go there).",
             tz, [pod(f"hon-{i}", labels={"app": "hon"}, topologySpreadConstraints=honor, affinity=sel)
                  for i in range(4)], classes=())
    mind = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "md"}}, "minDomains": 4}]
    scenario("v136-n09-min-domains", "minDomains 4 over three zones: the global minimum counts as 0, so each "
             "zone takes at most one pod.",
             z, [pod(f"md-{i}", labels={"app": "md"}, topologySpreadConstraints=mind) for i in range(4)], classes=())
    wn = [node(f"vb-{i}", cpu="4", zone=zz) for i, zz in enumerate(("zone-a", "zone-b", "zone-b"))]
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local-wffc"},
          "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}
    def pv(name, host, size):
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                         "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "local-wffc",
                         "volumeMode": "Filesystem", "local": {"path": f"/mnt/{name}"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}}}
    def pvc(name, size):
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "ml"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                         "storageClassName": "local-wffc", "volumeMode": "Filesystem"}}
    scenario("v136-n10-wait-for-first-consumer", "Local volumes with WaitForFirstConsumer: the claims bind where "
             "the pod goes; a claim too big for every volume; two pods needing the same node's volumes.",
             wn, [pod(f"db-{i}", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": f"data-{i}"}}])
                  for i in range(4)],
             persistentvolumes=[pv("pv-0a", "vb-0", "10Gi"), pv("pv-1a", "vb-1", "50Gi"), pv("pv-1b", "vb-1", "20Gi"),
                                pv("pv-2a", "vb-2", "5Gi")],
             persistentvolumeclaims=[pvc("data-0", "40Gi"), pvc("data-1", "8Gi"), pvc("data-2", "100Gi"),
                                     pvc("data-3", "15Gi")],
             storageclasses=[sc], classes=())
    gz = [node("gz-1", cpu="4", zone="zone-a"), node("gz-2", cpu="4", zone="zone-b")]
    scenario("v136-n11-sidecar-pod-level-overhead", "A sidecar with pod-level resources, and a pod whose "
             "sidecar's requests exceed what the pod level allows: refused.",
             gz, [pod("side-plr", cpu="500m", initContainers=[side],
                      resources={"requests": {"cpu": "3", "memory": "4Gi"}}),
                  pod("side-over", cpu="500m", initContainers=[side], resources={"requests": {"cpu": "1"}}),
                  pod("side-plain", cpu="2500m", initContainers=[side])], classes=())


def main(argv=None) -> int:
    build_dra()
    build_dra_lookups()
    build_core()
    for old in list(HERE.glob("dra-m*.scenario.json")) + list(HERE.glob("v136-n*.scenario.json")):
        old.unlink()
    for name, doc in SCENARIOS.items():
        (HERE / f"{name}.scenario.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(SCENARIOS)} scenarios written to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
