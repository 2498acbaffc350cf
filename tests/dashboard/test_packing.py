"""Packed JSON (dashboard.packing, PackedJSONField): zstd frames, with the zlib values of older rows still read."""
from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor

import orjson
import pytest
from django.core.exceptions import ValidationError

from dashboard.fields import PackedJSONField
from dashboard.packing import PACK_OPTIONS, ZSTD_MAGIC, pack_json, unpack_json

VALUE = {"format": 2, "names": [f"node-{i:04d}" for i in range(2000)], "rows": {1: [1.5, None, True, "x"]}}
AS_READ = orjson.loads(orjson.dumps(VALUE, option=PACK_OPTIONS))   # JSON keys are strings


def test_a_packed_value_is_a_zstd_frame_that_reads_back():
    packed = pack_json(VALUE)
    assert packed[:4] == ZSTD_MAGIC
    assert unpack_json(packed) == unpack_json(memoryview(packed)) == AS_READ
    assert len(packed) < len(orjson.dumps(VALUE, option=PACK_OPTIONS)) // 5


def test_the_zlib_values_of_older_rows_still_read():
    older = zlib.compress(orjson.dumps(VALUE, option=PACK_OPTIONS), 1)
    assert unpack_json(older) == AS_READ
    assert PackedJSONField().to_python(older) == AS_READ


def test_threads_pack_and_unpack_at_once():
    values = [dict(VALUE, n=n) for n in range(64)]
    with ThreadPoolExecutor(8) as pool:
        packed = list(pool.map(pack_json, values))
        assert list(pool.map(unpack_json, packed)) == [dict(AS_READ, n=n) for n in range(64)]


@pytest.mark.parametrize("data", [ZSTD_MAGIC + b"garbage", b"x\x01garbage", b"", b"{}"])
def test_bytes_that_are_not_a_packed_value_are_a_validation_error(data):
    with pytest.raises(ValidationError):
        PackedJSONField().to_python(data)
