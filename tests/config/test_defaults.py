"""Safe by default: DEBUG only when asked for, a secret key made once and kept private, plain
HTTP on the venue's wifi unless a TLS proxy is in front."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.secret import read_or_make_secret_key

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = (
    "import json; from django.conf import settings as s; print(json.dumps({k: getattr(s, k) "
    "for k in ('DEBUG', 'SECURE_SSL_REDIRECT', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
    "'SECURE_HSTS_SECONDS', 'SECRET_KEY', 'ALLOWED_HOSTS')}))"
)
DROP = {"DEBUG", "SECRET_KEY", "SECRET_KEY_FILE", "BEHIND_TLS_PROXY", "ALLOWED_HOSTS"}


def _settings(tmp_path: Path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in DROP | {"DATABASE_URL"}}
    clean.setdefault("SECRET_KEY_FILE", str(tmp_path / "key"))
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", PRINT_SETTINGS],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_it_keeps_debug_off_and_serves_plain_http_on_the_lan_by_default(tmp_path: Path) -> None:
    values = _settings(tmp_path)
    assert values["DEBUG"] is False
    # no TLS in front: an https redirect or secure-only cookies would lock every phone out
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SESSION_COOKIE_SECURE"] is False
    assert values["CSRF_COOKIE_SECURE"] is False
    assert values["SECURE_HSTS_SECONDS"] == 0
    assert "localhost" in values["ALLOWED_HOSTS"] and "*" not in values["ALLOWED_HOSTS"]


def test_it_turns_debug_on_only_when_asked(tmp_path: Path) -> None:
    assert _settings(tmp_path, DEBUG="1")["DEBUG"] is True


def test_it_goes_https_only_behind_a_tls_proxy(tmp_path: Path) -> None:
    values = _settings(tmp_path, BEHIND_TLS_PROXY="1")
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SESSION_COOKIE_SECURE"] is True and values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_HSTS_SECONDS"] >= 31536000


def test_it_makes_the_secret_key_on_first_run_and_keeps_it(tmp_path: Path) -> None:
    key_file = tmp_path / "var" / "secret_key"
    first = _settings(tmp_path, SECRET_KEY_FILE=str(key_file))["SECRET_KEY"]
    assert len(first) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert _settings(tmp_path, SECRET_KEY_FILE=str(key_file))["SECRET_KEY"] == first
    assert (
        _settings(tmp_path / "other", SECRET_KEY_FILE=str(tmp_path / "k2"))["SECRET_KEY"] != first
    )


def test_it_uses_the_secret_key_the_environment_sets(tmp_path: Path) -> None:
    key = "k" * 60
    assert _settings(tmp_path, SECRET_KEY=key)["SECRET_KEY"] == key
    assert not (tmp_path / "key").exists()


def test_it_refuses_a_key_file_others_may_read(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    key_file.write_text("x" * 60)
    key_file.chmod(0o644)
    with pytest.raises(ImproperlyConfigured, match="chmod 600"):
        read_or_make_secret_key(key_file)


def test_it_says_in_a_sentence_when_the_key_file_cannot_be_made(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with pytest.raises(ImproperlyConfigured, match="set SECRET_KEY or SECRET_KEY_FILE"):
        read_or_make_secret_key(blocked / "secret_key")
