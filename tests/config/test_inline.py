"""The security middleware and the CSP as they run on the event loop (config.inline): the
same headers as Django's and django-csp's own, the CSP's strings kept but never stale."""

from __future__ import annotations

import asyncio

from csp.middleware import CSPMiddleware as CSPMiddlewareBase
from django.http import HttpResponse
from django.middleware.security import SecurityMiddleware as SecurityMiddlewareBase
from django.test import RequestFactory

from config import inline


async def _answer(request) -> HttpResponse:
    return HttpResponse("x")


def _headers(middleware, path: str = "/scenes/1/") -> dict[str, str]:
    request = RequestFactory().post(path)
    response = asyncio.run(middleware(_answer)(request))
    return dict(response.items())


def _headers_sync(middleware, path: str = "/scenes/1/") -> dict[str, str]:
    request = RequestFactory().post(path)
    return dict(middleware(lambda r: HttpResponse("x"))(request).items())


def test_the_same_headers_as_the_originals(settings) -> None:
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_SSL_REDIRECT = False
    assert _headers(inline.SecurityMiddleware) == _headers_sync(SecurityMiddlewareBase)
    assert _headers(inline.CSPMiddleware) == _headers_sync(CSPMiddlewareBase)
    assert "default-src 'self'" in _headers(inline.CSPMiddleware)["Content-Security-Policy"]


def test_a_changed_policy_shows_through_the_kept_strings(settings) -> None:
    before = _headers(inline.CSPMiddleware)["Content-Security-Policy"]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    after = _headers(inline.CSPMiddleware)["Content-Security-Policy"]
    assert "default-src 'self'" in before
    assert after == "default-src 'none'"
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"img-src": ["'self'"]}}
    ro = _headers(inline.CSPMiddleware)["Content-Security-Policy-Report-Only"]
    assert "img-src 'self'" in ro


def test_a_nonce_is_in_its_own_answer_only(settings) -> None:
    from csp.constants import NONCE

    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": ["'self'", NONCE]}}

    async def with_nonce(request) -> HttpResponse:
        str(request.csp_nonce)  # a template used it
        return HttpResponse("x")

    seen = []
    for _ in range(2):
        request = RequestFactory().get("/")
        response = asyncio.run(inline.CSPMiddleware(with_nonce)(request))
        seen.append(response["Content-Security-Policy"])
        assert request._csp_nonce in seen[-1]
    assert seen[0] != seen[1]
