"""Django's security middleware and django-csp's, run on the event loop without a thread hop.

Under ASGI a ``MiddlewareMixin`` middleware runs its ``process_request`` and its
``process_response`` each in a worker thread (``MiddlewareMixin.__acall__``): four hops a
request for these two, which only read the request and set headers (no database, no file,
no network). :class:`Inline` calls them on the event loop instead, as their synchronous
``__call__`` does; what they do and in which order is unchanged. ``MIDDLEWARE`` names
Django's and django-csp's (first, so a static file, a tap refused while it waits for its
scene's turn, and every other answer carry their headers: HSTS, nosniff, the CSP, the SSL
redirect); the ASGI handler (``config.handler``) builds these in their place.
"""

from __future__ import annotations

import http.client
from dataclasses import asdict
from typing import Any

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, PolicyParts
from csp.middleware import CSPMiddleware as CSPMiddlewareBase
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.middleware.security import SecurityMiddleware as SecurityMiddlewareBase

KEPT_POLICIES = 64  # policy strings kept (a nonce makes each one new: then they are dropped)
_policies: dict[tuple[bool, str, str], str] = {}


class Inline:
    """A ``MiddlewareMixin`` middleware whose hooks do no I/O: called on the event loop."""

    async def __acall__(self: Any, request: HttpRequest) -> HttpResponseBase:
        response = None
        if hasattr(self, "process_request"):
            response = self.process_request(request)
        response = response or await self.get_response(request)
        if hasattr(self, "process_response"):
            response = self.process_response(request, response)
        return response


class SecurityMiddleware(Inline, SecurityMiddlewareBase):
    """``django.middleware.security.SecurityMiddleware``, its hooks on the event loop."""


def policy(parts: PolicyParts, report_only: bool) -> str:
    """``csp.utils.build_policy``, kept: it reads the policy's setting and the parts alone,
    and the string it builds (some 0.2 ms an answer, twice) is the same for the same ones,
    so both are the key: a changed setting or a response's own policy is a new string."""
    name = "CONTENT_SECURITY_POLICY_REPORT_ONLY" if report_only else "CONTENT_SECURITY_POLICY"
    key = (report_only, repr(getattr(settings, name, None)), repr(parts))
    built = _policies.get(key)
    if built is None:
        if len(_policies) >= KEPT_POLICIES:
            _policies.clear()
        built = _policies[key] = build_policy(**asdict(parts), report_only=report_only)
    return built


class CSPMiddleware(Inline, CSPMiddlewareBase):
    """``csp.middleware.CSPMiddleware``, its hooks on the event loop and its policy strings
    kept (:func:`policy`). ``process_response`` is django-csp 4.0's but for that."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        exempted = (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND)
        if response.status_code in exempted and settings.DEBUG:
            return response
        for report_only, header, exempt, setting in (
            (False, HEADER, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
            (True, HEADER_REPORT_ONLY, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY"),
        ):
            parts = self.get_policy_parts(
                request=request, response=response, report_only=report_only
            )
            csp = policy(parts, report_only)
            if not csp:
                continue
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
            if (
                header not in response
                and getattr(response, exempt, False) is False
                and not request.path_info.startswith(tuple(prefixes))
            ):
                response[header] = csp
        if getattr(request, "_csp_nonce", None) is None:
            request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
