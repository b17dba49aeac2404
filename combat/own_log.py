"""A player's own log (the phone's "Your log"): the newest lines that concern one of their
characters, for several players in one query, as the plain rows the phone shows.

The rule is :func:`combat.selectors.log_for_player`'s with ``public=False``: a line reaches a
player by a character of theirs it names (its ``characters``), so a hidden NPC's line, or
another player's, reaches nobody else; a line naming two of a player's characters comes
once. The newest ``limit`` lines of each player, oldest first.

One statement written out rather than built by the ORM: building and compiling the query
cost more CPU than running it (issue 21, a query on every change), and only the four columns
the phone shows are read (no model, no ``data``, no ``created_at``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from typing import Any

from django.db import connection
from django.utils.html import escape

from characters.models import Character
from combat import board_log
from combat.gametime import format_game_time
from combat.models import SceneLogEntry
from config.prepared import statement_cursor


@dataclass(frozen=True, slots=True)
class OwnLine:
    """One line of a player's own log, as their phone shows it."""

    pk: int
    seq: int
    game_time: int
    text: str


# Readers per statement: four parameters each on SQLite, well under its oldest limit (999)
# and its compound SELECT's (500 arms); five on PostgreSQL (its limit: 65,535).
READERS_AT_ONCE = 200


@cache
def _statement(vendor: str, readers: int, board: bool = False) -> str:
    """One arm per reader, each the newest lines naming one of the reader's characters, found
    from the characters' side: the index on the lines' characters ``(character, line)``
    (migration 0009) walks each character's lines back from its newest, so the lines of
    others (a shared scene's other pairs, an NPC's history) are never read, however many
    (walking the scene's log back from its newest line read every line of others newer than
    the reader's ``limit``-th: 24 ms at 5,000 of them).

    A scene's lines are written only by ``combat.services.record_change``, under the scene's
    lock, so their ids go up with their ``seq``: a character's newest by id are its newest
    by ``(seq, id)``. On PostgreSQL each of the reader's characters gives its ``limit``
    newest in the scene (``LATERAL``), and the arm the ``limit`` newest of those, a line
    naming two of them once; SQLite has no ``LATERAL``: the ``limit`` newest lines naming
    any of them (a character's lines of every scene read, a laptop's night).

    The text depends on the number of readers alone (every id a parameter), so PostgreSQL
    prepares it once per connection and number (:func:`config.prepared.statement_cursor`):
    parsing and planning a text of its own on every push was its costliest statement.

    ``board``: an arm of the scene's newest lines before them, every line whoever it names,
    with the columns the storyteller's log panel shows (:data:`combat.board_log.COLUMNS`;
    the readers' arms read them too: one list of columns)."""
    q = connection.ops.quote_name
    line = q(SceneLogEntry._meta.db_table)
    named = q(SceneLogEntry.characters.through._meta.db_table)
    character = q(Character._meta.db_table)
    more = ", l.kind AS kind, l.public AS public, l.created_at AS created_at" if board else ""
    # the reader's id is cast so the column has a type (an unknown parameter has none)
    if vendor == "postgresql":
        # the scene of each of a character's lines is looked up by the line's key (a scalar
        # subquery): a join lets the planner walk the scene's log instead (a merge join). The
        # subquery answers the comparison itself, a boolean: the planner guesses half the
        # lines pass it and walks the index back from the newest, stopping at the ``limit``-th
        # (``(SELECT scene_id ...) = %s`` it guessed 0.5% pass, fewer than ``limit`` of a
        # night's few hundred lines: every line of the character was read and sorted, 0.45-1.5
        # ms an arm at 270 lines; it walked back only past a few thousand)
        arm = (
            "SELECT * FROM (SELECT DISTINCT CAST(%s AS bigint) AS reader, l.id AS id,"
            f" l.seq AS seq, l.game_time AS game_time, l.text AS text{more}"
            f" FROM {character} c CROSS JOIN LATERAL (SELECT t.scenelogentry_id AS id"
            f" FROM {named} t WHERE t.character_id = c.id"
            f" AND (SELECT m.scene_id = %s FROM {line} m WHERE m.id = t.scenelogentry_id)"
            f" ORDER BY t.scenelogentry_id DESC LIMIT %s) x INNER JOIN {line} l ON l.id = x.id"
            " WHERE c.player_id = %s ORDER BY l.seq DESC, l.id DESC LIMIT %s) arm{n}"
        )
    else:
        arm = (
            "SELECT * FROM (SELECT CAST(%s AS bigint) AS reader, l.id AS id, l.seq AS seq,"
            f" l.game_time AS game_time, l.text AS text{more} FROM {line} l WHERE l.id IN"
            f" (SELECT DISTINCT t.scenelogentry_id FROM {named} t"
            f" INNER JOIN {character} c ON c.id = t.character_id"
            f" INNER JOIN {line} m ON m.id = t.scenelogentry_id"
            " WHERE m.scene_id = %s AND c.player_id = %s"
            " ORDER BY t.scenelogentry_id DESC LIMIT %s)) arm{n}"
        )
    arms = [arm.format(n=n) for n in range(readers)]
    if board:
        arms.insert(
            0,
            "SELECT * FROM (SELECT CAST(%s AS bigint) AS reader, l.id AS id, l.seq AS seq,"
            f" l.game_time AS game_time, l.text AS text{more}"
            f" FROM {line} l WHERE l.scene_id = %s ORDER BY l.seq DESC, l.id DESC LIMIT %s)"
            " board",
        )
    return " UNION ALL ".join(arms)


def _params(vendor: str, reader: int, scene_id: int, limit: int) -> tuple[int, ...]:
    """An arm's parameters, in the order of :func:`_statement`'s text."""
    if vendor == "postgresql":
        return (reader, scene_id, limit, reader, limit)
    return (reader, scene_id, reader, limit)


def read(scene_id: int, user_ids: Iterable[int], limit: int) -> dict[int, list[OwnLine]]:
    """Each player's own log (``user_ids``), oldest line first, in one query (one per
    ``READERS_AT_ONCE`` players). A line naming two of a player's characters is one line
    (``DISTINCT``)."""
    return read_with_board(scene_id, user_ids, limit, 0)[0]


def read_with_board(
    scene_id: int, user_ids: Iterable[int], limit: int, board: int
) -> tuple[dict[int, list[OwnLine]], list[board_log.Line]]:
    """:func:`read`, and in its first statement the storyteller's log panel's ``board``
    newest lines of the scene, oldest first, as :func:`combat.board_log.read` reads them
    (``board`` 0: none): a change that renders players' own parts and the board's log reads
    both in one round trip."""
    ids = sorted({int(u) for u in user_ids})
    logs: dict[int, list[OwnLine]] = {pk: [] for pk in ids}
    newest: list[board_log.Line] = []
    scene_id, limit, board = int(scene_id), int(limit), int(board)
    for at in range(0, max(len(ids), 1), READERS_AT_ONCE):
        readers = ids[at : at + READERS_AT_ONCE]
        vendor = connection.vendor
        with_board = bool(board) and at == 0
        params = [0, scene_id, board] if with_board else []
        params += [p for r in readers for p in _params(vendor, r, scene_id, limit)]
        if not params:
            break
        with statement_cursor(connection) as cursor:
            cursor.execute(_statement(connection.vendor, len(readers), with_board), params)
            for reader, pk, seq, game_time, text, *shown in cursor.fetchall():
                if reader:
                    logs[reader].append(OwnLine(pk, seq, game_time, text))
                else:
                    newest.append(board_log.Line(pk, seq, game_time, *_converted(shown, text)))
    for lines in logs.values():
        lines.sort(key=lambda e: (e.seq, e.pk))  # an arm reads newest first
    newest.sort(key=lambda e: (e.seq, e.pk))
    return logs, newest


def _converted(shown: list[Any], text: str) -> tuple[Any, ...]:
    """A board line's ``kind``, ``public``, ``text`` and ``created_at`` as the ORM gives them
    (SQLite's booleans and times come as numbers and text)."""
    kind, public, created_at = shown
    for column, convert in _converters(connection.vendor):
        if column == "public":
            public = convert(public)
        else:
            created_at = convert(created_at)
    return kind, public, text, created_at


@cache
def _converters(vendor: str) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """The database's converters of a board line's ``public`` and ``created_at`` (the ORM's),
    found once per vendor: none on PostgreSQL."""
    out = []
    for name in ("public", "created_at"):
        field = SceneLogEntry._meta.get_field(name)
        column = field.get_col(SceneLogEntry._meta.db_table)
        for convert in connection.ops.get_db_converters(column) + field.get_db_converters(
            connection
        ):
            out.append((name, partial(_apply, convert, column)))
    return tuple(out)


def _apply(convert: Callable[..., Any], column: Any, value: Any) -> Any:
    return convert(value, column, connection)


EMPTY = '<li class="muted">Nothing yet.</li>'


def items(log: Iterable[OwnLine]) -> str:
    """The log's ``<li>`` items, newest first (the phone's ``#player-log``), escaped as the
    template would: the loop of the template cost more than the read of the lines. Made
    once per process for the same lines (:func:`_items`): a player's log is pushed with every
    change of their prompts and mostly has not changed since."""
    lines = tuple(log)
    if all(type(e) is OwnLine for e in lines):
        return _items(lines)
    return _items.__wrapped__(lines)  # another kind of line may not be all it shows


ITEMS_KEPT = 1024  # players' logs (20 lines, a few KB each) made once per process


@lru_cache(maxsize=ITEMS_KEPT)
def _items(log: tuple[OwnLine, ...]) -> str:
    """:func:`items` of exactly these lines (an ``OwnLine`` is all a line's item shows)."""
    out = [
        f'<li><span class="t">{escape(format_game_time(int(e.game_time or 0)))}</span> '
        f"{escape(e.text)}</li>"
        for e in reversed(log)
    ]
    return "".join(out) or EMPTY
