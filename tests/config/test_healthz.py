"""/healthz: 200 when the database and the channel layer answer, 503 when one does not; no
login needed, nothing else said."""

from __future__ import annotations

import json

import pytest
from channels_redis.core import RedisChannelLayer
from django.test import Client

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_answers_200_when_the_database_and_the_layer_answer() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert json.loads(response.content) == {"ok": True, "database": True, "channel_layer": True}
    assert "no-store" in response["Cache-Control"]
    assert "Set-Cookie" not in response


def test_it_answers_503_when_the_channel_layer_does_not(monkeypatch) -> None:
    # a real Redis layer pointed at a port where nothing listens
    nowhere = RedisChannelLayer(hosts=[{"address": "redis://127.0.0.1:9/0"}])
    monkeypatch.setattr("config.health.get_channel_layer", lambda: nowhere)
    response = Client().get("/healthz")
    assert response.status_code == 503
    assert json.loads(response.content) == {"ok": False, "database": True, "channel_layer": False}
    assert b"127.0.0.1" not in response.content and b"redis" not in response.content.lower()
