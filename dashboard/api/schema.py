"""The API's OpenAPI schema: drf-spectacular's AutoSchema, plus the error answers each operation can give, so that
clients (and schemathesis) find every status code documented with its body."""
from __future__ import annotations

from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiExample, OpenApiRequest
from rest_framework import serializers

PAGINATION_PARAMETERS = {"page", "page_size"}


class TokenScheme(KnoxTokenScheme):
    """The API token's security scheme (``knoxApiToken``) for the project's knox authentication class."""

    target_class = "dashboard.api.authentication.TokenAuthentication"


class ErrorDetailSerializer(serializers.Serializer):
    """DRF's error body: 401 no or bad credentials, 403 the role does not allow it, 404 no such object or page,
    415 a body of a media type the operation does not take."""

    detail = serializers.CharField()


# DRF's 400 body: messages by field, field path (``spec.taints[0].key``) or ``non_field_errors``; nested for
# nested fields.
VALIDATION_ERROR = {"type": "object", "description": "messages by field", "additionalProperties": {}}


EXAMPLE_OBJECTS = {
    "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "default"},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}},
    "Node": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}},
             "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
}


def object_request(kind: str) -> dict:
    """The request body of a node or pod create (``serializers.ObjectSerializer``): a v1 ``kind`` itself, as
    kubectl sends it, or wrapped in ``{"manifest": ...}``; with an example of each."""
    obj = {"type": "object", "title": f"v1.{kind}", "required": ["metadata"], "additionalProperties": {},
           "description": f"a v1.{kind}, validated as kube-apiserver validates it",
           "properties": {"apiVersion": {"type": "string", "nullable": True, "enum": ["v1", "", None],
                                         "description": "v1 (absent, empty or null: v1)"},
                          "kind": {"type": "string", "nullable": True, "enum": [kind, "", None],
                                   "description": f"{kind} (absent, empty or null: {kind})"},
                          "metadata": {"type": "object", "additionalProperties": {}},
                          "spec": {"type": "object", "nullable": True, "additionalProperties": {}},
                          "status": {"type": "object", "nullable": True, "additionalProperties": {}}}}
    wrapped = {"type": "object", "title": f"manifest: v1.{kind}", "required": ["manifest"],
               "properties": {"manifest": obj}}
    example = EXAMPLE_OBJECTS[kind]
    return {"application/json": OpenApiRequest(
        {"anyOf": [obj, wrapped], "description": f'the v1.{kind} itself, or wrapped: {{"manifest": {{...}}}}'},
        examples=[OpenApiExample(f"a v1.{kind}", value=example),
                  OpenApiExample(f"a v1.{kind} in manifest", value={"manifest": example})])}


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
