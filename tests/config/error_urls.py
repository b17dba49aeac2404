"""The app's URLs plus views that fail on purpose (for the plain error pages)."""

from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.urls import include, path


def _boom(request):
    secret_local = "a-local-value-of-the-code"  # noqa: F841
    raise RuntimeError("database password is hunter2")


def _forbidden(request):
    raise PermissionDenied("only the storyteller of chronicle 7")


def _bad(request):
    raise SuspiciousOperation("bad input in field x")


urlpatterns = [
    path("boom/", _boom),
    path("forbidden/", _forbidden),
    path("bad/", _bad),
    path("", include("config.urls")),
]
