"""Headers every answer carries, and where browsers report what the CSP blocked.

- ``Permissions-Policy``: the page may keep the screen awake; camera, microphone and
  geolocation are off.
- ``Cache-Control: private, no-store`` on what is one person's: sheets, phones, tablets, the
  chronicle desk, the scene logs (every view under the routes in ``PRIVATE_ROUTES``, and the
  start page), so a shared browser or a proxy never keeps them.
- The Content-Security-Policy itself comes from django-csp (``CONTENT_SECURITY_POLICY`` in
  settings); its reports land in :func:`csp_report`, which logs them (one line each, a few a
  second per address at most).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from combat.logtext import one_line
from config.throttle import Bucket, by_address

PERMISSIONS_POLICY = "screen-wake-lock=(self), camera=(), microphone=(), geolocation=()"
PRIVATE_ROUTES = ("scenes/", "chases/", "characters/", "chronicles/", "join/")
PRIVATE_VIEWS = {"home"}
MAX_REPORT_BYTES = 8 * 1024

log = logging.getLogger("csp")


def is_private(request: HttpRequest) -> bool:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return False
    return match.url_name in PRIVATE_VIEWS or match.route.startswith(PRIVATE_ROUTES)


def _headers(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
    if is_private(request):
        patch_cache_control(response, private=True, no_store=True)
    return response


class SecurityHeadersMiddleware:
    """``Permissions-Policy`` on every answer; ``Cache-Control: private, no-store`` on the
    private views."""

    async_capable = True
    sync_capable = True

    def __init__(self, get_response: Callable[..., Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self.__acall__(request)
        return _headers(request, self.get_response(request))

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        return _headers(request, await self.get_response(request))


@csrf_exempt  # browsers send reports without a token
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    """A browser's CSP violation report (``report-uri``): logged as one line, never more than
    ``csp_reports`` allows per address."""
    if Bucket.named("csp_reports").wait(by_address(request) or "-"):
        return HttpResponse(status=204)
    try:
        report = json.loads(request.body[:MAX_REPORT_BYTES])
        report = report.get("csp-report", report) if isinstance(report, dict) else report
    except ValueError:
        report = request.body[:200].decode("utf-8", "replace")
    if isinstance(report, dict):
        keys = ("document-uri", "violated-directive", "effective-directive", "blocked-uri")
        report = {k: report[k] for k in (*keys, "source-file", "line-number") if k in report}
    log.warning("CSP violation: %s", one_line(json.dumps(report)[:1000]))
    return HttpResponse(status=204)
