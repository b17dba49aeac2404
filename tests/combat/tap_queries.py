"""What a tap's step costs the database: the queries a request runs from its first (the
session) to its commit, through the real middleware and view. The pushes on commit and the
answer come after and are measured elsewhere (bench/tap_cost.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from combat import live

HX = {"HTTP_HX_REQUEST": "true"}


@contextmanager
def step_queries(monkeypatch) -> Iterator[list[str]]:
    """The SQL of the requests made inside, each until its commit (no push is sent). Use in
    a test marked ``django_db(transaction=True)``: BEGIN, savepoints and the commit as in
    production."""
    for name in ("scene_changed", "sheets_changed"):
        monkeypatch.setattr(live, name, lambda *a, **k: None)
    seen: list[str] = []
    counting = [True]

    def count(execute, sql, params, many, context):
        if counting[0] and not sql.startswith("BEGIN"):  # SQLite's; PostgreSQL's is implicit
            seen.append(sql)
        return execute(sql, params, many, context)

    real = connection.run_and_clear_commit_hooks

    def committed() -> None:
        counting[0] = False
        real()

    monkeypatch.setattr(connection, "run_and_clear_commit_hooks", committed)
    with connection.execute_wrapper(count):
        yield seen
    assert not counting[0], "the request never committed"


def log_inserts() -> int:
    """The statements a step's log line and the characters it names take besides the scene's
    UPDATE: none on PostgreSQL (inserted in its statement, ``config.prepared.save_row``'s
    ``then``), two elsewhere."""
    return 0 if connection.vendor == "postgresql" else 2


def without_sheets(queries: list[str]) -> list[str]:
    """All but the reads of the sheets' tables (counted where they are made,
    ``characters.selectors``)."""
    return [q for q in queries if not q.startswith('SELECT "characters_')]


def scene_writes(*, rows: int = 0) -> int:
    """The statements the scene's UPDATE, the players' own seq and ``rows`` of the step's own
    rows saved with it (a challenge) take: one on PostgreSQL (``config.prepared.save_row``'s
    ``rows`` and ``along``), one each elsewhere."""
    return 1 if connection.vendor == "postgresql" else 2 + rows


def ledger_writes() -> int:
    """The statements a ledger entry and its sheet version's bump take: one on PostgreSQL
    (``characters.sheet_versions.insert_ledger_entry``), two elsewhere."""
    return 1 if connection.vendor == "postgresql" else 2
