"""Node: parsed once from v1.Node JSON."""
from __future__ import annotations

from .errors import ParseError, expect, object_meta
from .quantity import QuantityError, resource_amount


class Taint:
    __slots__ = ("key", "value", "effect")

    def __init__(self, key: str, value: str, effect: str):
        self.key, self.value, self.effect = key, value, effect

    def __repr__(self):
        return f"{{{self.key}: {self.value}}}"

    def to_dict(self):
        d = {"key": self.key, "effect": self.effect}
        if self.value:
            d["value"] = self.value
        return d


def parse_resource_list(raw, path: str) -> dict:
    """A v1.ResourceList -> {name: int} in scheduler units (cpu in millicores)."""
    expect(raw, dict, path, "object")
    out = {}
    for name, q in (raw or {}).items():
        try:
            out[name] = resource_amount(name, q)
        except QuantityError as err:
            raise ParseError(f"{path}.{name}", str(err)) from None
    return out


class Node:
    """The fields of a v1.Node that scheduling reads."""

    __slots__ = ("name", "uid", "labels", "annotations", "taints", "unschedulable", "allocatable",
                 "capacity", "images", "conditions", "raw")

    def __init__(self, raw: dict):
        meta, self.name, self.labels, self.annotations = object_meta(raw, "Node")
        self.raw = raw
        self.uid = meta.get("uid") or self.name
        spec = expect(raw.get("spec"), dict, "spec", "object") or {}
        status = expect(raw.get("status"), dict, "status", "object") or {}
        self.unschedulable = bool(spec.get("unschedulable", False))
        taints = []
        for i, t in enumerate(expect(spec.get("taints"), list, "spec.taints", "list") or []):
            p = f"spec.taints[{i}]"
            expect(t, dict, p, "object")
            if not t.get("key"):
                raise ParseError(f"{p}.key", "required value")
            effect = t.get("effect", "")
            if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise ParseError(f"{p}.effect", f'unsupported value "{effect}"')
            taints.append(Taint(t["key"], t.get("value", "") or "", effect))
        self.taints = tuple(taints)
        self.capacity = parse_resource_list(status.get("capacity"), "status.capacity")
        alloc = status.get("allocatable")
        self.allocatable = (parse_resource_list(alloc, "status.allocatable") if alloc is not None
                            else dict(self.capacity))
        images = []
        for i, img in enumerate(expect(status.get("images"), list, "status.images", "list") or []):
            expect(img, dict, f"status.images[{i}]", "object")
            images.append((tuple(img.get("names") or ()), int(img.get("sizeBytes", 0) or 0)))
        self.images = tuple(images)
        self.conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []
                           if isinstance(c, dict)}

    def __repr__(self):
        return f"Node({self.name})"
