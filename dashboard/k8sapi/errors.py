"""API errors as kube-apiserver reports them: a metav1.Status body with code, reason, message and details."""
from __future__ import annotations


class ApiError(Exception):
    """An error response; ``status()`` is the Status object sent to the client."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict:
        out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": self.message,
               "reason": self.reason}
        if self.details is not None:
            out["details"] = self.details
        out["code"] = self.code
        return out

    # -- constructors named after k8s.io/apimachinery/pkg/api/errors ------------------------------
    @staticmethod
    def _details(res, name: str) -> dict:
        d = {"name": name}
        if res.group:
            d["group"] = res.group
        d["kind"] = res.plural
        return d

    @classmethod
    def not_found(cls, res, name: str):
        return cls(404, "NotFound", f'{res.qualified} "{name}" not found', cls._details(res, name))

    @classmethod
    def already_exists(cls, res, name: str):
        return cls(409, "AlreadyExists", f'{res.qualified} "{name}" already exists', cls._details(res, name))

    @classmethod
    def conflict(cls, res, name: str, why: str, qualified: str | None = None):
        details = cls._details(res, name)
        if qualified:
            details["kind"] = qualified.split(".", 1)[0]
        return cls(409, "Conflict", f'Operation cannot be fulfilled on {qualified or res.qualified} "{name}": {why}',
                   details)

    @classmethod
    def modified(cls, res, name: str):
        return cls.conflict(res, name, "the object has been modified; please apply your changes to the latest "
                                       "version and try again")

    @classmethod
    def invalid(cls, res, name: str, causes: list):
        """``causes``: [(field, reason, message)], message like "Required value" or 'Invalid value: "x": ...'."""
        kind = f"{res.kind}.{res.group}" if res.group else res.kind
        texts = [f"{field}: {msg}" if field else msg for field, _reason, msg in causes]
        agg = texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]"
        details = {"name": name}
        if res.group:
            details["group"] = res.group
        details["kind"] = res.kind
        details["causes"] = [{"reason": reason, "message": msg, "field": field} for field, reason, msg in causes]
        return cls(422, "Invalid", f'{kind} "{name}" is invalid: {agg}', details)

    @classmethod
    def forbidden(cls, res, name: str, why: str):
        return cls(403, "Forbidden", f'{res.qualified} "{name}" is forbidden: {why}', cls._details(res, name))

    @classmethod
    def bad_request(cls, message: str):
        return cls(400, "BadRequest", message)

    @classmethod
    def unauthorized(cls):
        return cls(401, "Unauthorized", "Unauthorized")

    @classmethod
    def method_not_allowed(cls):
        return cls(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                   {})

    @classmethod
    def page_not_found(cls):
        return cls(404, "NotFound", "the server could not find the requested resource", {})

    @classmethod
    def expired(cls, message: str):
        return cls(410, "Expired", message)

    @classmethod
    def unsupported_media_type(cls, accepted):
        return cls(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media "
                                                f"types include: {', '.join(accepted)}")

    @classmethod
    def too_many_requests(cls, message: str, retry_after: int, cause: str):
        """NewTooManyRequests with one DisruptionBudget cause (the eviction subresource's 429)."""
        details = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
        if retry_after:
            details["retryAfterSeconds"] = retry_after
        return cls(429, "TooManyRequests", message, details)

    @classmethod
    def too_large(cls, limit: int):
        return cls(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")

    @classmethod
    def unprocessable(cls, message: str):
        return cls(422, "", message)
