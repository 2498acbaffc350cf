"""The project's 404 and 403 handlers: JSON under /api/ (as the API's own errors are), elsewhere a page in the
layout with a way back: the cluster list, and the cluster of the address when the user may see it.

A cluster the user may not see answers 404 exactly as a missing one (``dashboard.access``), so the 404 page
names no cluster but a visible one, and repeats neither the address nor the exception (both may name one).
"""
from __future__ import annotations

import re

from django.http import Http404, HttpResponseNotFound, JsonResponse
from django.shortcuts import render

from .access import get_cluster

API_PREFIX = "/api/"
CLUSTER_PATH = re.compile(r"^/clusters/(?P<name>[-a-zA-Z0-9_]+)/")   # the <slug:name> of the cluster pages
NOT_ALLOWED = "You do not have permission to perform this action."   # DRF's words for a 403


def not_found(request, exception):
    """handler404."""
    if not hasattr(request, "user"):   # a static file: served without the pages' middleware, so no user
        return HttpResponseNotFound("Not found.\n", content_type="text/plain")
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", {"cluster": visible_cluster(request)}, status=404)


def forbidden(request, exception):
    """handler403: the refusal's message (``access.get_cluster`` and the profile services write it for people;
    a 403 concerns a cluster the user sees)."""
    reason = str(exception) or NOT_ALLOWED
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": reason}, status=403)
    return render(request, "403.html", {"cluster": visible_cluster(request), "reason": reason}, status=403)


def visible_cluster(request):
    """The cluster the address is under, if the user may see it (else None)."""
    m = CLUSTER_PATH.match(request.path)
    if m is None:
        return None
    try:
        return get_cluster(request.user, m["name"])[0]
    except Http404:
        return None
