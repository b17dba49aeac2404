"""After the night: the backup command and the prune command."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from characters.idempotency import idempotency_claim
from characters.models import IdempotencyKey
from tests.factories import ChronicleFactory, UserFactory

sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's backup API")


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_it_backs_up_the_whole_sqlite_database(tmp_path: Path) -> None:
    ChronicleFactory(name="Phoenix by Night")
    out = tmp_path / "copy.sqlite3"
    assert f"to {out}" in _run("backup", "--output", str(out))
    copy = sqlite3.connect(out)
    assert copy.execute("select name from characters_chronicle").fetchall() == [
        ("Phoenix by Night",)
    ]
    assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    copy.close()
    with pytest.raises(CommandError, match="exists already"):
        _run("backup", "--output", str(out))


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_it_backs_up_to_a_timestamped_file_under_var_backups(tmp_path, settings) -> None:
    settings.BASE_DIR = tmp_path
    printed = _run("backup")
    (made,) = (tmp_path / "var" / "backups").iterdir()
    assert made.suffix == ".sqlite3"
    assert timezone.now().strftime("%Y%m%d-") in made.name
    assert str(made) in printed


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's answer")
@pytest.mark.django_db
def test_it_says_to_use_pg_dump_on_postgresql(tmp_path, settings) -> None:
    settings.BASE_DIR = tmp_path
    with pytest.raises(CommandError, match=r'pg_dump --format=custom .*"\$DATABASE_URL"'):
        _run("backup")
    assert not (tmp_path / "var").exists()


@pytest.mark.django_db
def test_it_prunes_old_idempotency_keys_and_expired_sessions_only() -> None:
    user = UserFactory()
    for key in ("old", "older", "fresh"):
        claim = idempotency_claim(user=user, action="ledger.spend", key=key, payload={"k": key})
        claim.complete(entry=1)
    IdempotencyKey.objects.filter(key__in=["old", "older"]).update(
        created_at=timezone.now() - timedelta(hours=49)
    )
    live, dead = SessionStore(), SessionStore()
    live.create()
    dead.create()
    Session.objects.filter(session_key=dead.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    assert _run("prune", "--dry-run").splitlines() == [
        "would remove 2 idempotency keys older than 48 hours",
        "would remove 1 expired sessions",
    ]
    assert IdempotencyKey.objects.count() == 3
    assert _run("prune").splitlines() == [
        "removed 2 idempotency keys older than 48 hours",
        "removed 1 expired sessions",
    ]
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["fresh"]
    assert list(Session.objects.values_list("session_key", flat=True)) == [live.session_key]
    assert "removed 0 idempotency keys" in _run("prune")
