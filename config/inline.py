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

from typing import Any

from csp.middleware import CSPMiddleware as CSPMiddlewareBase
from django.http import HttpRequest, HttpResponseBase
from django.middleware.security import SecurityMiddleware as SecurityMiddlewareBase


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


class CSPMiddleware(Inline, CSPMiddlewareBase):
    """``csp.middleware.CSPMiddleware``, its hooks on the event loop."""
