"""The API's pagination: ``page`` and ``page_size`` are checked, not silently replaced by defaults."""
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination


def _whole_number(raw: str) -> int | None:
    """``raw`` as a positive whole number (ASCII digits only), or None."""
    return int(raw) if raw.isascii() and raw.isdigit() and int(raw) > 0 else None


class Pagination(PageNumberPagination):
    """Page-number pagination: a page_size that is not a positive whole number is a 400 (sizes above
    ``max_page_size`` are capped), a page that is not one, or past the end, a 404."""

    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        size = _whole_number(raw)
        if size is None:
            raise ValidationError({self.page_size_query_param: [
                f"expected a whole number from 1 (at most {self.max_page_size} results are returned)"]})
        return min(size, self.max_page_size)

    def get_page_number(self, request, paginator):
        raw = request.query_params.get(self.page_query_param)
        if raw is not None and _whole_number(raw) is None:
            raise NotFound(self.invalid_page_message.format(page_number=raw, message="expected a whole number from 1"))
        return raw or 1

    def get_schema_operation_parameters(self, view):
        params = super().get_schema_operation_parameters(view)
        for param in params:
            param["schema"]["minimum"] = 1
        return params
