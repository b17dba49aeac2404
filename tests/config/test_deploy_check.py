"""Production settings pass Django's deployment checklist."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_passes_check_deploy_with_production_values() -> None:
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="storyteller.example.org",
        CSRF_TRUSTED_ORIGINS="https://storyteller.example.org",
        BEHIND_TLS_PROXY="1",
        DATABASE_URL="postgres://storyteller@db.invalid:5432/storyteller",
        REDIS_URL="redis://redis.invalid:6379/0",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_fails_check_deploy_with_laptop_defaults() -> None:
    """The check is real: the laptop default serves plain HTTP (the venue's wifi), which a
    deployment must not."""
    result = _manage("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stderr + result.stdout


def test_it_fails_check_deploy_with_debug_on() -> None:
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="1",
        SECRET_KEY=secrets.token_urlsafe(50),
        BEHIND_TLS_PROXY="1",
    )
    assert result.returncode != 0
    assert "DEBUG" in result.stderr + result.stdout
