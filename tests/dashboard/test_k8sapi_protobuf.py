"""dashboard.k8sapi.protobuf on the request bodies the real Kubernetes v1.30 serializers made
(/work/shared/k8s-wire: each ``NAME.pb`` with its ``NAME.json`` twin, the same object as client-go sends it as JSON)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from dashboard.k8sapi import protobuf
from dashboard.k8sapi.protobuf import ProtobufError
from scheduler_core import versions
from scheduler_core.objects.protoschema import ROOTS

WIRE = Path(__file__).resolve().parents[3] / "shared" / "k8s-wire"
if not WIRE.is_dir():
    WIRE = Path("/work/shared/k8s-wire")
V130 = versions.kube_version("1.30")   # the k8s-wire bodies are a v1.30 client's
BODIES = sorted(p.stem for p in WIRE.glob("*.pb") if not p.stem.startswith("watch-"))
pytestmark = pytest.mark.skipif(not BODIES, reason="no k8s-wire fixtures")


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, value) -> bytes:
    """One protobuf field: an int as a varint, bytes/str length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def envelope(api_version: str, kind: str, raw: bytes, encoding: str = "") -> bytes:
    return b"k8s\x00" + field(1, field(1, api_version) + field(2, kind)) + field(2, raw) + field(3, encoding) \
        + field(4, "")


@pytest.mark.parametrize("name", BODIES)
def test_each_body_decodes_to_its_json_twin(name):
    got = protobuf.decode((WIRE / f"{name}.pb").read_bytes(), V130)
    want = json.loads((WIRE / f"{name}.json").read_text())
    assert got == want
    assert list(got)[:2] == ["kind", "apiVersion"]


def test_watch_frame_holds_the_pod():
    frame = (WIRE / "watch-pod-added.pb").read_bytes()
    (size,) = struct.unpack(">I", frame[:4])
    assert size == len(frame) - 4
    # WatchEvent {1 type, 2 object: RawExtension {1 raw}} is no request body: its two fields are read here
    got = {n: v for n, _w, v in protobuf.fields(frame[4:])}
    raw = {n: v for n, _w, v in protobuf.fields(got[2])}[1]
    event = {"type": got[1].decode(), "object": protobuf.decode(raw, V130)}
    assert event == json.loads((WIRE / "watch-pod-added.json").read_text())


def test_zero_values_follow_go_json():
    """Pointers keep their zero values, omitempty scalars drop them, structs are always written."""
    pod = field(1, field(1, "p")) + field(2, field(4, 0) + field(25, 0) + field(30, 0) + field(11, 0))
    out = protobuf.decode(envelope("v1", "Pod", pod), V130)
    spec = out["spec"]
    assert spec["terminationGracePeriodSeconds"] == 0 and spec["priority"] == 0
    assert spec["enableServiceLinks"] is False and "hostNetwork" not in spec
    assert spec["containers"] is None                      # `json:"containers"`: a nil slice is null
    assert out["metadata"] == {"name": "p", "creationTimestamp": None}
    assert out["status"] == {}


def test_negative_numbers_and_packed_repeated():
    opts = field(1, -1)   # gracePeriodSeconds int64 -1: ten-byte two's complement
    assert protobuf.decode(envelope("v1", "DeleteOptions", opts), V130) == {
        "kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": -1}
    # a repeated integer field may come packed (one length-delimited run) or one element per field
    repeated_ints = [(m, n, spec) for m, t in V130.api_fields.items() for n, spec in t.items()
                     if "R" in spec[2] and spec[1] in ("int32", "int64")]
    assert repeated_ints, "the tables have repeated integer fields"
    msg, number, (json_name, _type, _mode) = repeated_ints[0]
    packed = field(number, varint(3) + varint(7))
    assert protobuf.message(msg, packed, V130)[json_name] == [3, 7]
    assert protobuf.message(msg, field(number, 3) + field(number, 7), V130)[json_name] == [3, 7]


@pytest.mark.parametrize("body, error", [
    (b'{"kind":"Binding"}', "does not start with the Kubernetes protobuf magic"),
    (envelope("v1", "Binding", field(1, field(1, "p")) + field(99, "x")),
     "field 99 of k8s.io.api.core.v1.Binding is not known"),
    (envelope("v1", "Binding", field(1, field(1, "p") + field(15, "x"))),
     "field 15 of k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta is not known"),
    (envelope("v1", "Frobnicator", b""), "no kind 'Frobnicator' of version 'v1'"),
    (envelope("v1", "Binding", b"", encoding="gzip"), "content encoding 'gzip' is not supported"),
    (envelope("v1", "Binding", field(1, field(1, "p"))[:-1]), "runs past the end"),
    (envelope("v1", "Binding", field(1, 5)), "Binding.metadata: wire type 0, expected a message"),
    (envelope("v1", "Binding", field(1, field(1, b"\xff\xfe"))), "not UTF-8"),
])
def test_bad_bodies_are_explicit_errors(body, error):
    with pytest.raises(ProtobufError, match=error.replace("(", r"\(").replace(")", r"\)")):
        protobuf.decode(body, V130)


def test_a_cluster_reads_its_versions_fields():
    """A v1.36 client's pod with pod-level resources (PodSpec field 40) decodes at 1.36; a 1.30 cluster does not
    know the field number."""
    resources = field(2, field(1, "cpu") + field(2, field(1, "2")))   # requests: {cpu: "2"}
    body = envelope("v1", "Pod", field(1, field(1, "p")) + field(2, field(40, resources)))
    assert protobuf.decode(body, versions.kube_version("1.36"))["spec"]["resources"] == {"requests": {"cpu": "2"}}
    with pytest.raises(ProtobufError, match="field 40 of k8s.io.api.core.v1.PodSpec is not known to Kubernetes 1.30"):
        protobuf.decode(body, V130)


def test_tables_cover_the_kinds_the_api_serves():
    from dashboard.k8sapi.resources import RESOURCES
    for res in RESOURCES:
        assert (res.group_version, res.kind) in ROOTS, res.plural
