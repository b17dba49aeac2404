"""Saving a challenge's step: its history line, the row, the scene's log and the pushes
(:func:`combat.services.record_change`, on commit), and the outcome's own log lines.

A challenge with a hidden NPC on a side is never public; one of hidden NPCs alone counts on no
player's phone.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from combat.challenges.reads import CHALLENGE_REGIONS, characters_of, has_hidden, players_of
from combat.logtext import one_line
from combat.models import Challenge, LogKind, Scene
from combat.rules.challenge import Challenge as Engine
from combat.services import record_change


def without(mapping: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A copy of a challenge's ``options`` or ``sealed`` with ``keys`` taken out."""
    return {k: v for k, v in mapping.items() if k not in keys}


def note(challenge: Challenge, text: str, *, repeats: str = "") -> None:
    """A line both sides (and the storyteller) see in the challenge's history.

    A line of the same ``repeats`` kind as the last one (a side calling the storyteller once
    more) replaces it and counts ``times``, so a challenge someone taps on and on keeps a
    short history.
    """
    line = {"step": challenge.step + 1, "text": one_line(text)}
    line |= {"repeats": repeats} if repeats else {}
    last = challenge.history[-1] if challenge.history else None
    if repeats and last and last.get("repeats") == repeats:
        line["times"] = last.get("times", 1) + 1
        challenge.history = [*challenge.history[:-1], line]
    else:
        challenge.history = [*challenge.history, line]


def save(
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    text: str,
    *,
    public: bool = False,
    engine: Engine | None = None,
    also: list[int] | None = None,
) -> None:
    if engine is not None:
        challenge.state = engine.to_dict()
    challenge.step += 1
    hidden = has_hidden(challenge)
    players = list(dict.fromkeys([*players_of(challenge), *(also or [])]))
    # The outcome, when this step ended the challenge, as lines of its own after the step's
    # (same ``seq``): who won and the effect in words for everyone (unless a hidden NPC is in
    # it); what the sheets lose (traits, damage) for the players concerned (and the
    # storyteller). Logged with the step's line: one insert for them all.
    outcome = getattr(challenge, "_outcome_lines", None) or []
    if outcome:
        del challenge._outcome_lines
    data = {"challenge": challenge.pk}
    _count_done(scene, challenge)
    record_change(
        scene,
        by=by,
        kind=LogKind.CHALLENGE,
        text=text,
        public=public and not hidden,
        characters=characters_of(challenge),
        data=data,
        private_user_ids=players,
        # a challenge of hidden NPCs alone is no player's business: no phone counts its steps
        players=not hidden or bool(players),
        # The board's challenge region (the clock and the log go anyway); a cost or a loss
        # pushes the regions that show sheets itself (the ledger announces it on commit).
        regions=CHALLENGE_REGIONS,
        more_lines=[
            (line, shown and not hidden, {**data, "outcome": True}) for line, shown in outcome
        ],
        rows=[challenge],  # saved with the scene: one statement on PostgreSQL
    )


def _count_done(scene: Scene, challenge: Challenge) -> None:
    """The board's count of the scene's finished challenges and its fold's version
    (``Scene.challenges_done``, ``challenges_done_seq``; combat.challenges.board_reads),
    written with the scene by this change: a challenge that finishes now counts once, and
    any change to a finished one (a void) moves the version to this change's ``seq``. A
    finished challenge never opens again, and every write that moves a challenge's step
    comes here."""
    if not challenge.is_done:
        return
    if not challenge.done_when_read:
        scene.challenges_done += 1
        challenge.done_when_read = True  # saved again in this request: counted already
    scene.challenges_done_seq = scene.seq + 1  # record_change's bump: this change's


def tell(
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    text: str,
    *,
    history: str | None = None,
    repeats: str = "",
    public: bool = False,
    engine: Engine | None = None,
    also: list[int] | None = None,
) -> Challenge:
    """A step with no outcome to look for: the challenge's history says ``history`` (else
    ``text``, :func:`note` on ``repeats``), the scene's log says ``text``; saved and
    announced."""
    note(challenge, text if history is None else history, repeats=repeats)
    save(scene, challenge, by, text, public=public, engine=engine, also=also)
    return challenge
