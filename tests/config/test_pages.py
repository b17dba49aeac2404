"""The first pages a newcomer sees: login, then home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_renders_the_login_page(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b"Log in" in response.content
    assert b"django_htmx/htmx-2.min" in response.content


def test_it_sends_a_visitor_to_the_login_page(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_logs_in_and_shows_home(client: Client) -> None:
    get_user_model().objects.create_user(username="delilah", password="pw-delilah-1")
    response = client.post(
        "/accounts/login/", {"username": "delilah", "password": "pw-delilah-1"}, follow=True
    )
    assert response.status_code == 200
    assert b'ws-connect="/ws/live/"' in response.content


def test_it_says_clearly_when_the_password_is_wrong(client: Client) -> None:
    get_user_model().objects.create_user(username="melvin", password="right-password")
    response = client.post("/accounts/login/", {"username": "melvin", "password": "wrong"})
    assert response.status_code == 200
    assert b"do not match" in response.content


def test_it_serves_htmx_and_its_websocket_extension_from_django_htmx(client: Client) -> None:
    """htmx 2.0.x and its ws extension 2.0.x, as django-htmx ships them (no npm)."""
    from django.templatetags.static import static

    for name, needle in (
        ("django_htmx/htmx-2.min.js", b'version:"2.0.'),
        ("django_htmx/ext/hx-ws-2.min.js", b'defineExtension("ws"'),
    ):
        response = client.get(static(name))
        assert response.status_code == 200, name
        assert needle in b"".join(response.streaming_content), name


def test_it_runs_the_laptop_database_in_wal_mode(tmp_path: Path) -> None:
    """The embedded default: a SQLite file in WAL mode (the test database is in memory)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["SQLITE_PATH"] = str(tmp_path / "laptop.sqlite3")
    probe = (
        "from django.db import connection; c = connection.cursor(); "
        "c.execute('PRAGMA journal_mode'); print(c.fetchone()[0])"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.strip().splitlines()[-1:] == ["wal"], result.stderr
