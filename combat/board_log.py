"""The storyteller's log panel (the board's ``#scene-log``): the scene's newest lines, read by
a query whose SQL is built once per process (config.prepared) with only the columns the board
shows, and written out as the template would write them.

Both on every change that logs a line (issue 21): building the query cost more CPU than
running it, and the template's loop (two date filters, an ``if`` and five variables a line,
thirty lines) cost more than both.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo
from functools import lru_cache
from typing import NamedTuple

from django.db.models import QuerySet
from django.utils.html import escape
from django.utils.timezone import get_current_timezone, template_localtime

from combat.gametime import format_game_time
from combat.models import SceneLogEntry
from config.prepared import PreparedValues

# What a line of the board shows (items), and what orders the lines.
COLUMNS = ("id", "seq", "game_time", "kind", "public", "text", "created_at")


class Line(NamedTuple):
    """A line as the board shows it (:data:`COLUMNS`, ``pk`` for ``id``): no model instance
    made for each of a board's thirty lines on every change."""

    pk: int
    seq: int
    game_time: int
    kind: str
    public: bool
    text: str
    created_at: datetime | None


def _newest(scene_id: int, *, limit: int) -> QuerySet[SceneLogEntry]:
    lines = SceneLogEntry.objects.filter(scene=scene_id).order_by("-seq", "-pk")
    return lines.values_list(*COLUMNS)[:limit]


_NEWEST = PreparedValues(_newest)


def read(scene_id: int, limit: int) -> list[Line]:
    """The scene's newest ``limit`` lines, oldest first (only :data:`COLUMNS` read)."""
    return [Line(*row) for row in reversed(_NEWEST.run(scene_id, limit=limit))]


# Lines drawn lately: a line never changes once written, and a board shows the same thirty on
# every change of its scene. Kept under everything the drawing reads, the time zone included.
SIZE = 4096


@lru_cache(maxsize=SIZE)
def _item(
    kind: str, public: bool, game_time: int, text: str, at: datetime | None, zone: tzinfo
) -> str:
    stamp = clock = ""
    if at is not None:  # as ``|date:'c'`` and ``|time:'H:i'`` write it, in the current zone
        local = template_localtime(at)
        stamp, clock = local.isoformat(), f"{local.hour:02d}:{local.minute:02d}"
    private = "" if public else " private"
    return (
        f'<li class="log-{escape(kind)}{private}">'
        f'<span class="t">{escape(format_game_time(int(game_time or 0)))}</span> '
        f'<time class="t night" datetime="{escape(stamp)}">{escape(clock)}</time> '
        f"{escape(text)}</li>"
    )


def items(log: Sequence[Line] | Sequence[SceneLogEntry]) -> str:
    """The log's ``<li>`` items, newest first, escaped as the template would."""
    zone = get_current_timezone()
    return "".join(
        _item(str(e.kind), e.public, e.game_time, e.text, e.created_at, zone) for e in reversed(log)
    )
