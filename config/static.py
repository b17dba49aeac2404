"""Static files from the app server (WhiteNoise), without a thread hop on every other request.

WhiteNoise's middleware is synchronous only. Under ASGI (``manage.py serve``) a synchronous
middleware in the middle of the asynchronous ones makes Django hop into a worker thread for it
and back onto the event loop for the rest of the chain, on every request: two thread hops
per tap before the view's own, and a tap that waits for its scene's turn
(``combat.turns``) would wait holding a thread. :class:`StaticFilesMiddleware` is WhiteNoise's
middleware, asynchronous as well: a request for a static file is served as WhiteNoise serves
it; any other request goes straight on to the next middleware.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse
from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise, synchronous or asynchronous as the chain around it is."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(get_response, *args, **kwargs)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if self.autorefresh:  # DEBUG: looks on disk, so off the event loop
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return await sync_to_async(self.serve)(static_file, request)
        return await self.get_response(request)
