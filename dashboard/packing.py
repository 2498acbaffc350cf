"""Packed JSON: a JSON value as zstd-compressed orjson bytes, for large documents stored whole. Values packed
before zstd (zlib streams) still read back."""
from __future__ import annotations

import threading
import zlib

import orjson
import zstandard

PACK_OPTIONS = orjson.OPT_NON_STR_KEYS
UNPACK_ERRORS = (zlib.error, zstandard.ZstdError, orjson.JSONDecodeError, TypeError)   # what bad bytes raise
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"   # a zstd frame's first bytes; a zlib stream starts with 0x78
_contexts = threading.local()      # a zstd context serves one thread at a time


def pack_json(value) -> bytes:
    """A JSON value as zstd-compressed UTF-8 JSON. Level 2: a 5,000-node cycle's matrix (21 kB of JSON) in about
    40 µs and 1.4 kB, where zlib at level 1 took 85 µs and 2.2 kB."""
    return _context("compressor", lambda: zstandard.ZstdCompressor(level=2)).compress(
        orjson.dumps(value, option=PACK_OPTIONS))


def unpack_json(data):
    """The JSON value of ``pack_json`` bytes (or of the zlib bytes it made before)."""
    if bytes(data[:4]) != ZSTD_MAGIC:
        return orjson.loads(zlib.decompress(data))
    return orjson.loads(_context("decompressor", zstandard.ZstdDecompressor).decompress(data))


def _context(name: str, make):
    """This thread's zstd context ``name``, made by ``make()`` on first use."""
    context = getattr(_contexts, name, None)
    if context is None:
        context = make()
        setattr(_contexts, name, context)
    return context
