"""Websocket routes. Websockets only push; every player action is a plain HTTP post."""

from django.urls import path, re_path

from combat.consumers import LiveConsumer, NotFoundConsumer, SceneConsumer

websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi()),
    path("ws/scenes/<int:pk>/", SceneConsumer.as_asgi()),
    re_path(r"", NotFoundConsumer.as_asgi()),  # last: an unknown path closes with 4404
]
