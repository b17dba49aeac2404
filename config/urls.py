"""URL routes of the Storyteller app."""

from django.contrib import admin
from django.urls import include, path

from config import health
from config.security import csp_report

urlpatterns = [
    path("csp-report/", csp_report, name="csp_report"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("characters.urls")),
    path("", include("combat.urls")),
    path("", include("combat.challenges.urls")),
    path("", include("combat.rounds.urls")),
    path("", include("chases.urls")),
    path("healthz", health.healthz, name="healthz"),
]
