"""The API's OpenAPI schema: drf-spectacular's AutoSchema, plus the error answers each operation can give, so that
clients (and schemathesis) find every status code documented with its body."""
from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

PAGINATION_PARAMETERS = {"page", "page_size"}


class ErrorDetailSerializer(serializers.Serializer):
    """DRF's error body: 401 no or bad credentials, 403 the role does not allow it, 404 no such object or page,
    415 a body of a media type the operation does not take."""

    detail = serializers.CharField()


# DRF's 400 body: messages by field, field path (``spec.taints[0].key``) or ``non_field_errors``; nested for
# nested fields.
VALIDATION_ERROR = {"type": "object", "description": "messages by field", "additionalProperties": {}}


class ApiSchema(AutoSchema):
    """Documents 401 and 403 on every operation, 404 where a path names an object or a list is paged, 400
    where a body or a query parameter is validated and 415 where a body of another media type is refused."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        params = {p["name"] for p in self._get_parameters() if p.get("in") == "query"}
        errors = {"401": ErrorDetailSerializer, "403": ErrorDetailSerializer}
        has_body = self._get_request_body() is not None
        if has_body or params:
            errors["400"] = VALIDATION_ERROR
        if has_body:
            errors["415"] = ErrorDetailSerializer
        if "{" in self.path or params & PAGINATION_PARAMETERS:
            errors["404"] = ErrorDetailSerializer
        for code, body in sorted(errors.items()):
            responses.setdefault(code, self._get_response_for_code(body, code, direction=direction))
        return responses
