"""Request bodies of the REST API: JSON decoded with a nesting limit (``scheduler_core.documents``), so a
document nested 100,000 deep is a 400, not a RecursionError."""
from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework import parsers, serializers
from rest_framework.exceptions import ParseError
from rest_framework.utils import json

from scheduler_core.documents import load_json


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser (same errors, strict constants) with MAX_DEPTH."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
            return load_json(text, parse_constant=json.strict_constant if self.strict else None)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


class JSONField(serializers.JSONField):
    """A JSON field whose text form (a multipart form's field) is decoded with MAX_DEPTH."""

    def to_internal_value(self, data):
        if self.binary or getattr(data, "is_json_string", False):
            try:
                return load_json(data.decode() if isinstance(data, bytes) else data)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None
        return super().to_internal_value(data)
