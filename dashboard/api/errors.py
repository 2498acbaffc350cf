"""404 for URLs that match no route: JSON under /api/, as the API's own 404s are; Django's page elsewhere."""
from django.http import JsonResponse
from django.views.defaults import page_not_found


def not_found(request, exception):
    """The project's handler404."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
