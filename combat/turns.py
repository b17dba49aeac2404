"""Taps of one scene take turns in this process before they touch the database.

Every write to a scene locks the scene's row, so its taps run one at a time anyway. Left to
the database, sixty phones tapping at once would each take a pooled connection and wait on
the row lock with it, the pool (``DB_POOL_MAX_SIZE``) would run dry, and every other request
of the process would wait for a connection and fail. So a POST to a scene
(``/scenes/<id>/…``) or a chase (``/chases/<id>/…``) first waits for its turn here, holding
nothing; only the tap whose turn it is goes on to the session, the view and the database.

A tap that waits longer than ``LIVE_TURN_WAIT`` seconds (10), or that finds the database too
busy (no connection free in time, a lock timeout), answers 503 with ``Retry-After``; nothing
was written, and the phone sends it again with the same idempotency key
(``static/js/scene.js``). No tap answers 500 for being one of many.
"""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

TURN_WAIT = 10.0  # seconds a tap waits for its turn before it answers 503
RETRY_AFTER = 2  # seconds the phone waits before it sends the tap again
BUSY = "The server is busy: “{what}” was not sent yet; your phone sends it again in a moment."
TAPS = re.compile(r"^/(scenes|chases)/(\d+)/")


def turn_of(request: HttpRequest) -> str | None:
    """The scene (or chase) whose turn a request waits for; None when it needs none."""
    if request.method != "POST":
        return None
    match = TAPS.match(request.path_info)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def busy(request: HttpRequest) -> HttpResponse:
    """503 + Retry-After, with a sentence in the place a refusal's goes (``.flash``)."""
    what = escape(request.POST.get("label", "") or "your tap") if request.POST else "your tap"
    response = HttpResponse(
        f'<p class="flash error" role="alert" data-busy>{BUSY.format(what=what)}</p>',
        status=503,
    )
    response["Retry-After"] = str(RETRY_AFTER)
    return response


def turn_wait() -> float:
    return float(getattr(settings, "LIVE_TURN_WAIT", TURN_WAIT))


class _Turns:
    """One lock per scene with taps under way, forgotten when nobody waits for it."""

    def __init__(self, make) -> None:
        self.make = make
        self.locks: dict[str, tuple[Any, int]] = {}

    def enter(self, key: str) -> Any:
        lock, users = self.locks.get(key) or (self.make(), 0)
        self.locks[key] = (lock, users + 1)
        return lock

    def leave(self, key: str) -> None:
        lock, users = self.locks[key]
        if users <= 1:
            del self.locks[key]
        else:
            self.locks[key] = (lock, users - 1)


class SceneTurnMiddleware:
    """Waits for the scene's turn (see the module); answers 503 instead of 500 when busy."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
            self.turns = _Turns(asyncio.Lock)  # one event loop: the server's
        else:
            self.turns = _Turns(threading.Lock)
            self.guard = threading.Lock()

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        key = turn_of(request)
        if key is None:
            return self.get_response(request)
        with self.guard:
            lock = self.turns.enter(key)
        try:
            if not lock.acquire(timeout=turn_wait()):
                return busy(request)
            try:
                return self.get_response(request)
            finally:
                lock.release()
        finally:
            with self.guard:
                self.turns.leave(key)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        key = turn_of(request)
        if key is None:
            return await self.get_response(request)
        lock = self.turns.enter(key)
        try:
            try:  # asyncio.timeout, not wait_for: a lock granted as time runs out is not lost
                async with asyncio.timeout(turn_wait()):
                    await lock.acquire()
            except TimeoutError:
                return busy(request)
            try:
                return await self.get_response(request)
            finally:
                lock.release()
        finally:
            self.turns.leave(key)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        """A database too busy to answer (no pooled connection in time, a lock or statement
        timeout, SQLite locked) is the server being busy: 503, and the phone tries again."""
        if isinstance(exception, OperationalError):
            return busy(request)
        return None
