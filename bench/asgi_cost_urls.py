"""``bench/asgi_cost.py``'s routes: the project's, and a tap that does nothing."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import include, path
from django.views.decorators.http import require_POST


@login_required
@require_POST
def noop(request, pk: int) -> HttpResponse:
    return HttpResponse(f"<p>{request.user.pk}</p>")


urlpatterns = [
    path("scenes/<int:pk>/noop/", noop),
    path("", include("config.urls")),
]
