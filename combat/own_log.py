"""A player's own log (the phone's "Your log"): the newest lines that concern one of their
characters, for several players in one query, as the plain rows the phone shows.

The rule is :func:`combat.selectors.log_for_player`'s with ``public=False``: a line reaches a
player by a character of theirs it names (its ``characters``), so a hidden NPC's line, or
another player's, reaches nobody else; a line naming two of a player's characters comes
once. The newest ``limit`` lines of each player, oldest first.

One statement written out rather than built by the ORM: building and compiling the ranked
query cost more CPU than running it (issue 21, a query on every change), and only the four
columns the phone shows are read (no model, no ``data``, no ``created_at``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection
from django.utils.html import escape

from characters.models import Character
from combat.gametime import format_game_time
from combat.models import SceneLogEntry


@dataclass(frozen=True, slots=True)
class OwnLine:
    """One line of a player's own log, as their phone shows it."""

    pk: int
    seq: int
    game_time: int
    text: str


def _statement(readers: int) -> str:
    q = connection.ops.quote_name
    line = q(SceneLogEntry._meta.db_table)
    named = q(SceneLogEntry.characters.through._meta.db_table)
    marks = ", ".join(["%s"] * readers)
    # DENSE_RANK: a line naming two of a reader's characters comes twice with one rank (the
    # copy is dropped in read()), so it takes one of the reader's ``limit`` places.
    return (
        "SELECT reader, id, seq, game_time, text FROM ("
        f" SELECT c.player_id AS reader, l.id AS id, l.seq AS seq, l.game_time AS game_time,"
        " l.text AS text, DENSE_RANK() OVER"
        " (PARTITION BY c.player_id ORDER BY l.seq DESC, l.id DESC) AS place"
        f" FROM {line} l INNER JOIN {named} t ON t.scenelogentry_id = l.id"
        f" INNER JOIN {q(Character._meta.db_table)} c ON c.id = t.character_id"
        f" WHERE l.scene_id = %s AND c.player_id IN ({marks})"
        ") ranked WHERE place <= %s ORDER BY seq, id"
    )


def read(scene_id: int, user_ids: Iterable[int], limit: int) -> dict[int, list[OwnLine]]:
    """Each player's own log (``user_ids``), oldest line first, in one query."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    logs: dict[int, list[OwnLine]] = {pk: [] for pk in ids}
    seen: set[tuple[int, int]] = set()
    with connection.cursor() as cursor:
        cursor.execute(_statement(len(ids)), [scene_id, *ids, limit])
        for reader, pk, seq, game_time, text in cursor.fetchall():
            if (reader, pk) not in seen:
                seen.add((reader, pk))
                logs[reader].append(OwnLine(pk, seq, game_time, text))
    return logs


EMPTY = '<li class="muted">Nothing yet.</li>'


def items(log: Iterable[OwnLine]) -> str:
    """The log's ``<li>`` items, newest first (the phone's ``#player-log``), escaped as the
    template would: the loop of the template cost more than the read of the lines."""
    out = [
        f'<li><span class="t">{escape(format_game_time(int(e.game_time or 0)))}</span> '
        f"{escape(e.text)}</li>"
        for e in reversed(list(log))
    ]
    return "".join(out) or EMPTY
