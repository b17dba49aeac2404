"""The DEBUG error page never shows a database or Redis password; DEBUG may change after
collectstatic."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from django.test import RequestFactory
from django.views.debug import technical_500_response

ROOT = Path(__file__).resolve().parents[2]
# Made at run time, so that the page's source excerpts cannot show them either.
DB_PASSWORD = "db-" + secrets.token_hex(8)
REDIS_PASSWORD = "redis-" + secrets.token_hex(8)


def _error_page(request) -> str:
    try:
        database_url = f"postgres://storyteller:{DB_PASSWORD}@db.example:5432/st"  # noqa: F841
        raise RuntimeError("boom")
    except RuntimeError:
        return technical_500_response(request, *sys.exc_info()).content.decode()


def test_it_hides_the_database_and_redis_passwords_on_the_debug_page(settings) -> None:
    settings.DEBUG = True
    settings.DATABASE_URL = f"postgres://storyteller:{DB_PASSWORD}@db.example:5432/st"
    settings.REDIS_URL = f"redis://:{REDIS_PASSWORD}@redis.example:6379/0"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"hosts": [settings.REDIS_URL]},
        }
    }
    settings.CACHE_LOCATION = f"rediss://cache:{REDIS_PASSWORD}@cache.example/1"
    # Under runserver, request.META carries the whole environment.
    request = RequestFactory().get(
        "/", DATABASE_URL=settings.DATABASE_URL, SOME_DSN_URL=settings.CACHE_LOCATION
    )
    page = _error_page(request)
    assert "RuntimeError" in page, "it is the debug page"
    assert "DATABASE_URL" in page and "REDIS_URL" in page
    assert DB_PASSWORD not in page
    assert REDIS_PASSWORD not in page
    assert "redis.example" in page, "only the password is masked in other URLs"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


RENDER_LOGIN = """
import django, re
django.setup()
from django.test import Client
response = Client().get("/accounts/login/", secure=True, HTTP_HOST="storyteller.example.org")
assert response.status_code == 200, response.status_code
url = re.search(r'/static/css/app[^"]*\\.css', response.content.decode()).group()
css = Client().get(url, secure=True, HTTP_HOST="storyteller.example.org")
assert css.status_code == 200, (url, css.status_code)
print(url)
"""


def test_it_serves_pages_with_debug_off_after_a_debug_collectstatic(tmp_path: Path) -> None:
    static_root = str(tmp_path / "static")
    collected = _manage(
        "manage.py",
        "collectstatic",
        "--noinput",
        "-v0",
        DEBUG="1",
        SECRET_KEY=secrets.token_urlsafe(50),
        STATIC_ROOT=static_root,
    )
    assert collected.returncode == 0, collected.stderr
    served = _manage(
        "-c",
        RENDER_LOGIN,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="storyteller.example.org",
        STATIC_ROOT=static_root,
        SQLITE_PATH=str(tmp_path / "db.sqlite3"),
    )
    assert served.returncode == 0, served.stderr
    assert served.stdout.strip() == "/static/css/app.css"
