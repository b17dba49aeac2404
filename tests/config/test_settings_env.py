"""Settings read from the environment through small typed helpers."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envint, envlist


@pytest.mark.parametrize(
    ("raw", "expected"), [("1", True), ("true", True), ("Yes", True), ("0", False), ("off", False)]
)
def test_it_reads_yes_no_values(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("SOME_FLAG", raw)
    assert envbool("SOME_FLAG", not expected) is expected


def test_it_rejects_a_flag_that_is_not_yes_or_no(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="SOME_FLAG"):
        envbool("SOME_FLAG", False)


def test_it_uses_defaults_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOME_NUMBER", raising=False)
    monkeypatch.delenv("SOME_LIST", raising=False)
    assert envint("SOME_NUMBER", 7) == 7
    assert envlist("SOME_LIST", ["a"]) == ["a"]


def test_it_splits_lists_and_rejects_bad_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_LIST", "a.example, b.example,,")
    monkeypatch.setenv("SOME_NUMBER", "twelve")
    assert envlist("SOME_LIST", []) == ["a.example", "b.example"]
    with pytest.raises(ImproperlyConfigured, match="SOME_NUMBER"):
        envint("SOME_NUMBER", 0)


def test_it_uses_the_databases_and_layers_the_environment_names() -> None:
    """CI runs the suite twice: PostgreSQL + Redis, then SQLite + in-memory."""
    import os

    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    if os.environ.get("DATABASE_URL"):
        assert engine == "config.postgresql"  # Django's, its pool's check without a round trip
    else:
        assert engine == "django.db.backends.sqlite3"
    if os.environ.get("REDIS_URL"):
        assert layer == "config.layers.RedisChannelLayer"
    else:
        assert layer == "channels.layers.InMemoryChannelLayer"
