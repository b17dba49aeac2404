"""The round's "state you saw" tokens and the soft declaration timer.

A token is a random value drawn each time the fight's state moves (:func:`move_tokens`), and
nothing else: nothing in the state (a hidden declaration, the round, the stage) can be read
from it. There are two: the tablet's, and the phones', which moves only with a change players
see (a new round or stage, or a step of a character they see): a hidden NPC's own step leaves
it, so a phone cannot count those steps. Reads the row only (the selectors use it).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime, timedelta

from django.utils import timezone

from combat.models import Combat

# A soft timer: when a declaration takes longer, the tablet asks the storyteller (declare for
# them or pass over); nothing is ever filled in for a player.
DECLARE_SECONDS = 60


def _where(combat: Combat) -> str:
    """A digest of where the fight stands, hidden declarations included (the parts of a
    split resolved so far count, D14, and a declaration held until its turn). Never sent to
    anyone: it only tells :func:`record_round` that the state moved, and the soft timer when."""
    work = combat.work or {}
    where = [combat.round_number, combat.stage, combat.state or {}, work.get("parts", {})]
    if work.get("early"):
        where.append(work["early"])
    return hashlib.sha256(json.dumps(where, sort_keys=True).encode()).hexdigest()


def state_token(combat: Combat, *, players: bool = False) -> str:
    """Where the fight stands, as a form carries it so a tap made on an older state is
    refused: a random value drawn each time the state moves (:func:`move_tokens`), so nothing in
    the state can be recovered from it. ``players``: the token the phones carry, which moves
    only with a change players see (a hidden NPC's own step leaves it)."""
    # every fight draws its tokens when it starts (its first line is recorded)
    return (combat.work or {}).get("players_token" if players else "token", "")


def move_tokens(combat: Combat, *, players: bool) -> None:
    """The state moved (:func:`_where`): the storyteller's token moves, and the phones' too
    when players see the change (``players``, or a new round or stage, which every screen
    shows)."""
    work = dict(combat.work or {})
    where = _where(combat)
    if work.get("where") != where:
        work["where"] = where
        work["token"] = secrets.token_hex(8)
        stage = [combat.round_number, combat.stage]
        if players or work.get("players_at") != stage:
            work["players_token"] = secrets.token_hex(8)
            work["players_at"] = stage
    combat.work = work


def mark_since(combat: Combat) -> None:
    """Note when the fight reached the state it is in (or was paused or resumed), for the soft
    timer of the declaration it waits on (:func:`declare_deadline`): the tablet's, and the
    phones', which a hidden NPC's own step does not restart."""
    work = dict(combat.work or {})
    now = timezone.now().isoformat()
    for since, players in (("since", False), ("players_since", True)):
        mark = f"{state_token(combat, players=players)}|{combat.paused}"
        if (work.get(since) or {}).get("mark") != mark:
            work[since] = {"mark": mark, "at": now}
    combat.work = work


def declare_deadline(combat: Combat, *, players: bool = False) -> datetime | None:
    """When the soft timer of the declaration the round waits on runs out (None while paused,
    or before anything was noted); ``players``: as the phones show it."""
    since = (combat.work or {}).get("players_since" if players else "since") or {}
    mark = f"{state_token(combat, players=players)}|{combat.paused}"
    if combat.paused or since.get("mark") != mark:
        return None
    return datetime.fromisoformat(since["at"]) + timedelta(seconds=DECLARE_SECONDS)
