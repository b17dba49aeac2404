"""Under ASGI no middleware runs in a worker thread (config.static: WhiteNoise asynchronous too).

A synchronous middleware in the middle of the asynchronous chain costs two thread hops on every
request, and a tap waiting for its scene's turn (combat.turns) would wait holding a thread."""

from __future__ import annotations

from django.core.handlers import base
from django.core.handlers.asgi import ASGIHandler


def test_no_middleware_is_adapted_to_a_thread_under_asgi(monkeypatch) -> None:
    adapted: list[str] = []
    original = base.BaseHandler.adapt_method_mode

    def watched(self, is_async, method, method_is_async=None, debug=False, name=None):
        out = original(self, is_async, method, method_is_async, debug, name)
        if out is not method and name:  # a whole middleware (named), not a process_view hook
            adapted.append(name)
        return out

    monkeypatch.setattr(base.BaseHandler, "adapt_method_mode", watched)
    ASGIHandler()
    assert adapted == []
