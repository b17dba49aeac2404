"""ASGI entry point: one process serves pages, static files and websockets.

HTTP goes through :class:`config.handler.ASGIHandler` (Django's, one thread hop a request).
Websockets pass through ``SameOriginValidator`` (an ``Origin`` other than the page's own, by
scheme, host and port, is refused: config/origin.py) and ``AuthMiddlewareStack`` (the
session's user is on ``scope["user"]``).
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Django must be set up before anything imports models (consumers do).
from config.handler import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.origin import SameOriginValidator  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
