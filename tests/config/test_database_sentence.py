"""A DATABASE_URL naming a database that does not exist (or a server that does not answer) is
said in one sentence at start, by migrate and serve: no pool timeout, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = "postgres://postgres@127.0.0.1:5432"
# A guard against a command that never ends, not a timing: on a loaded machine a start takes
# seconds. A pool left waiting for a connection would show as its own error (and a traceback),
# which the sentence's assertions catch however long it took.
HANG_GUARD = 120  # seconds


def _manage(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**env, "DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )


def _postgres_answers() -> bool:
    try:
        psycopg.connect(f"{SERVER}/postgres", connect_timeout=3).close()
    except psycopg.OperationalError:
        return False
    return True


@pytest.mark.parametrize("command", [["migrate"], ["serve", "--port", "1"]])
def test_it_says_in_one_sentence_that_the_database_does_not_exist(command: list[str]) -> None:
    if not _postgres_answers():
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    result = _manage(*command, database_url=f"{SERVER}/st_venue_no_such_database")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert 'The database "st_venue_no_such_database"' in lines[0]
    assert "does not exist" in lines[0] and "Traceback" not in result.stderr
    assert "couldn't get a connection" not in result.stderr  # no pool timeout


def test_it_says_in_one_sentence_that_the_server_does_not_answer() -> None:
    result = _manage("migrate", database_url="postgres://postgres@127.0.0.1:9/storyteller")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "does not answer" in lines[0]
