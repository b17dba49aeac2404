"""Django's ASGI handler with one thread hop a request rather than eighteen.

Under ASGI Django runs each synchronous middleware's ``process_request``, ``process_view``
and ``process_response`` in a worker thread of its own (``MiddlewareMixin.__acall__``), the
view in another, and the ``request_started`` / ``request_finished`` receivers (the
database's connection upkeep) in two more: 18 hops for a tap, each a future, a copy of the
context, a wake-up of the worker and one of the event loop, about as much CPU as the
session, the CSRF check and the user together. :class:`ASGIHandler` splits ``MIDDLEWARE``:

- its head, every middleware up to the first one that would hop (the security headers, the
  CSP: ``config.inline``'s; static files, a scene's turn: :func:`runs_in_loop`), stays on the
  event loop,
  asynchronous; a tap still waits for its scene's turn holding no thread and no connection;
- the rest (the session, CSRF, the user, messages, htmx, the throttle, axes) and the view
  run synchronously in one call of the request's worker thread, as under WSGI, with the
  ``request_started`` receivers before them and the response's ``close`` (its
  ``request_finished`` receivers: the connection goes back to the pool) after them.

What each middleware does, and in which order, is what ``MIDDLEWARE`` says.
"""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed, RequestAborted
from django.core.handlers.asgi import ASGIHandler as DjangoASGIHandler
from django.core.handlers.asgi import get_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponseBase
from django.urls import set_script_prefix
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string

KEEP_THREADS = 64  # idle request threads kept for the next requests; more are let go


def runs_in_loop(middleware: type) -> bool:
    """Whether a middleware runs on the event loop without a thread hop of its own: it is
    asynchronous, and not a ``MiddlewareMixin`` that hops for its hooks (``config.inline``)."""
    if not getattr(middleware, "async_capable", False):
        return False
    if issubclass(middleware, MiddlewareMixin):
        return middleware.__acall__ is not MiddlewareMixin.__acall__
    return True


# Middleware whose hooks do no I/O, run on the event loop as config.inline's (the settings
# name Django's own: ``check --deploy`` looks for the security middleware by that name).
INLINE = {
    "django.middleware.security.SecurityMiddleware": "config.inline.SecurityMiddleware",
    "csp.middleware.CSPMiddleware": "config.inline.CSPMiddleware",
}


def split(paths: list[str]) -> tuple[list[str], list[str]]:
    """``MIDDLEWARE`` as (on the event loop, in the request's thread), each of
    :data:`INLINE` as its counterpart."""
    paths = [INLINE.get(p, p) for p in paths]
    classes = [import_string(p) for p in paths]
    at = next((i for i, c in enumerate(classes) if not runs_in_loop(c)), len(paths))
    return paths[:at], paths[at:]


class ASGIHandler(DjangoASGIHandler):
    """See the module."""

    def __init__(self) -> None:
        self._idle: list[ThreadPoolExecutor] = []
        super().__init__()

    def load_middleware(self, is_async: bool = False) -> None:
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        loop, thread = split(list(settings.MIDDLEWARE))
        inner = self._chain(thread, convert_exception_to_response(self._get_response), False)
        self._in_thread = inner
        hop = convert_exception_to_response(self._hop)
        self._middleware_chain = self._chain(loop, hop, True)

    def _chain(self, paths: list[str], handler: Any, is_async: bool) -> Any:
        """Django's ``load_middleware`` for a part of ``MIDDLEWARE``, every middleware of it
        in one mode; the view's hooks are synchronous (``_get_response`` runs in the thread)."""
        for path in reversed(paths):
            middleware = import_string(path)
            capable = "async_capable" if is_async else "sync_capable"
            if not getattr(middleware, capable, not is_async):
                raise ImproperlyConfigured(f"{path} cannot run {capable.split('_')[0]}hronously")
            try:
                instance = middleware(handler)
            except MiddlewareNotUsed:
                continue
            if instance is None:
                raise ImproperlyConfigured(f"Middleware factory {path} returned None.")
            if hasattr(instance, "process_view"):
                self._view_middleware.insert(0, instance.process_view)
            if hasattr(instance, "process_template_response"):
                self._template_response_middleware.append(instance.process_template_response)
            if hasattr(instance, "process_exception"):
                self._exception_middleware.append(instance.process_exception)
            handler = convert_exception_to_response(instance)
        return handler

    async def _hop(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self._respond, thread_sensitive=True)(request)

    def _respond(self, request: HttpRequest) -> HttpResponseBase:
        """In the request's thread: the request's signals, the rest of the chain, the view."""
        signals.request_started.send(sender=self.__class__, scope=request.scope)
        response = self._in_thread(request)
        if not response.streaming:
            # Its content is in memory: closed here, in the thread that used the database,
            # so the connection goes back to the pool before the answer is written.
            response._handler_class = self.__class__
            response._resource_closers.append(request.close)
            response.close()
        return response

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        # Each request's synchronous calls run in one thread of their own, as in Django (a
        # ThreadSensitiveContext), but that thread is kept for the next request rather than
        # started and joined (two threads started a request): a free list of one-thread
        # executors. One whose request did not end cleanly (the client went away while its
        # thread still worked) is let go.
        executor = self._idle.pop() if self._idle else ThreadPoolExecutor(max_workers=1)
        clean = False
        try:
            async with ThreadSensitiveContext(executor=executor):
                clean = await self.handle(scope, receive, send)
        finally:
            if clean and len(self._idle) < KEEP_THREADS:
                self._idle.append(executor)
            else:
                executor.shutdown(wait=False)

    async def handle(self, scope: dict, receive: Any, send: Any) -> bool:
        """Django's ``ASGIHandler.handle``, less the hops for the signals (``_respond``
        sends them) and for closing a response ``_respond`` closed. True when the request
        ended with its thread idle."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return True
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            body_file.close()
            await self.send_response(error_response, send)
            await sync_to_async(error_response.close)()
            return True

        async def process_request(request: HttpRequest, send: Any) -> HttpResponseBase:
            response = await self.run_get_response(request)
            with contextlib.suppress(asyncio.CancelledError):  # the client went away meanwhile
                await self.send_response(response, send)
            return response

        tasks = [
            asyncio.create_task(self.listen_for_disconnect(receive)),
            asyncio.create_task(process_request(request, send)),
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                try:
                    task.result()
                except RequestAborted:
                    pass
                except AssertionError:
                    body_file.close()
                    raise
            else:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:
            response = tasks[1].result()
        except asyncio.CancelledError:
            await signals.request_finished.asend(sender=self.__class__)
            body_file.close()
            return False
        if not response.closed:  # streamed, or answered on the event loop
            await sync_to_async(response.close)()
        body_file.close()
        return True


def get_asgi_application() -> ASGIHandler:
    """Django's ``get_asgi_application``, with :class:`ASGIHandler`."""
    import django

    django.setup(set_prefix=False)
    return ASGIHandler()
