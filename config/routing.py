"""Websocket routes. Websockets only push; every player action is a plain HTTP post."""

from django.urls import path

from combat.consumers import LiveConsumer

websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi()),
]
