"""Taps of one scene take turns in this process before they touch the database.

Every write to a scene locks the scene's row, so its taps run one at a time anyway. Left to
the database, sixty phones tapping at once would each take a pooled connection and wait on
the row lock with it, the pool (``DB_POOL_MAX_SIZE``) would run dry, and every other request
of the process would wait for a connection and fail. So a POST to a scene
(``/scenes/<id>/…``) or a chase (``/chases/<id>/…``) first waits for its turn here, holding
nothing; only the tap whose turn it is goes on to the session, the view and the database.

A tap's turn ends when its step commits (:func:`committed`, which the step mechanism
calls first thing on commit: ``combat.steps.request_transaction``), not when its answer is
sent: the next tap of the scene writes while this one renders its pushes and its answer. At
most ``DEPTH`` taps of a scene are under way in this process at once (one writing, the
others past their commit), so a burst still holds no more than ``DEPTH`` pooled connections
for the scene. Pushes of two taps may then be published out of order; every fragment carries
the scene's ``seq`` and a phone keeps the newer (``static/js/crossing.js``).

A tap that waits longer than ``LIVE_TURN_WAIT`` seconds (10), or that finds the database too
busy (no connection free in time, a lock timeout), answers 503 with ``Retry-After``; nothing
was written, and the phone sends it again with the same idempotency key
(``static/js/scene.js``). No tap answers 500 for being one of many.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
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
# Taps of one scene under way in a process at once: one writing, one rendering what it wrote.
DEPTH = 2

# Ends the current request's turn (once; later calls do nothing): set while a tap holds it.
_turn_end: ContextVar[Callable[[], None] | None] = ContextVar("turn_end", default=None)


def committed() -> None:
    """The current tap's step committed: its turn ends, the scene's next tap may write (its
    pushes and answer are rendered meanwhile). Outside a turn, nothing."""
    end = _turn_end.get()
    if end is not None:
        end()


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


def _ends(release: Callable[[], None]) -> Callable[[], None]:
    """``release``, called once however many times the result is called."""
    ended = False

    def end() -> None:
        nonlocal ended
        if not ended:
            ended = True
            release()

    return end


def turn_wait() -> float:
    return float(getattr(settings, "LIVE_TURN_WAIT", TURN_WAIT))


class _Turn:
    """A scene's turn in this process: ``write`` (one tap until its commit) and ``depth`` (the
    taps past it, until their answers)."""

    def __init__(self, lock: Callable[[], Any], semaphore: Callable[[int], Any]) -> None:
        self.write = lock()
        self.depth = semaphore(DEPTH)


class _Turns:
    """One turn per scene with taps under way, forgotten when nobody waits for it."""

    def __init__(self, lock: Callable[[], Any], semaphore: Callable[[int], Any]) -> None:
        self.lock = lock
        self.semaphore = semaphore
        self.turns: dict[str, tuple[_Turn, int]] = {}

    def enter(self, key: str) -> _Turn:
        turn, users = self.turns.get(key) or (_Turn(self.lock, self.semaphore), 0)
        self.turns[key] = (turn, users + 1)
        return turn

    def leave(self, key: str) -> None:
        turn, users = self.turns[key]
        if users <= 1:
            del self.turns[key]
        else:
            self.turns[key] = (turn, users - 1)


class SceneTurnMiddleware:
    """Waits for the scene's turn (see the module); answers 503 instead of 500 when busy."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
            self.turns = _Turns(asyncio.Lock, asyncio.Semaphore)  # one event loop: the server's
            self._responding: set[asyncio.Future] = set()  # views under way, kept referenced
        else:
            self.turns = _Turns(threading.Lock, threading.Semaphore)
            self.guard = threading.Lock()

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        key = turn_of(request)
        if key is None:
            return self.get_response(request)
        with self.guard:
            turn = self.turns.enter(key)
        try:
            deadline = time.monotonic() + turn_wait()
            if not turn.depth.acquire(timeout=turn_wait()):
                return busy(request)
            try:
                if not turn.write.acquire(timeout=max(0.0, deadline - time.monotonic())):
                    return busy(request)
                return self._respond(request, _ends(turn.write.release))
            finally:
                turn.depth.release()
        finally:
            with self.guard:
                self.turns.leave(key)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        key = turn_of(request)
        if key is None:
            return await self.get_response(request)
        turn = self.turns.enter(key)
        try:
            try:  # asyncio.timeout, not wait_for: a lock granted as time runs out is not lost
                async with asyncio.timeout(turn_wait()):
                    await turn.depth.acquire()
                    try:
                        await turn.write.acquire()
                    except BaseException:
                        turn.depth.release()
                        raise
            except TimeoutError:
                self.turns.leave(key)
                return busy(request)
        except BaseException:
            self.turns.leave(key)
            raise
        end = _ends(turn.write.release)  # called on the event loop only

        def done(_: Any) -> None:
            self._responding.discard(responding)
            end()
            turn.depth.release()
            self.turns.leave(key)

        loop = asyncio.get_running_loop()
        token = _turn_end.set(lambda: loop.call_soon_threadsafe(end))
        try:  # the task copies the context: its view's commit ends the turn
            responding = asyncio.ensure_future(self.get_response(request))
        except BaseException:
            end()
            turn.depth.release()
            self.turns.leave(key)
            raise
        finally:
            _turn_end.reset(token)
        # The client going away cancels this request's task (config.handler), but not its
        # view, which goes on in its thread, in its transaction, holding the scene's row and
        # a connection: the turn (and its place in DEPTH) ends when the view does, not before.
        self._responding.add(responding)
        responding.add_done_callback(done)
        return await asyncio.shield(responding)

    def _respond(self, request: HttpRequest, end: Callable[[], None]) -> Any:
        token = _turn_end.set(end)
        try:
            return self.get_response(request)
        finally:
            _turn_end.reset(token)
            end()

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        """A database too busy to answer (no pooled connection in time, a lock or statement
        timeout, SQLite locked) is the server being busy: 503, and the phone tries again."""
        if isinstance(exception, OperationalError):
            return busy(request)
        return None
