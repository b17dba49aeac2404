"""D17, G4: Book Keeping, the next round, and the reminders players raise for it."""

from __future__ import annotations

from dataclasses import replace

from django.contrib.auth.models import AbstractBaseUser

from combat.models import Combat, CombatStage, LogKind, Participant, Scene
from combat.rounds.errors import WRONG_STAGE, RoundError, refusal_of
from combat.rounds.fight import (
    ROUND_SECONDS,
    record_round,
    round_step,
    take,
)
from combat.rounds.planning import grapple_from
from combat.rounds.pursuit import require_no_pursuit
from combat.rounds.reads import fight_members, is_visible, kept_work, who_of, wod_state
from combat.rules.errors import RuleError
from combat.rules.grapple import (
    Over,
)
from combat.rules.wod_round import TimedEffect
from combat.services import record_change

BOOK_KEEPING_STEP = round_step("round.book_keeping", storyteller=True)


def combat_book_keeping(
    *, combat: Combat, by: AbstractBaseUser, at: str | None = None, key: str | None = None
) -> Combat:
    """D17, G4: effects measured in rounds tick down and expire, sustained grapples lose a
    point of Control, the reminders players raised are read; the game clock moves on one
    round (fifteen seconds)."""

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.stage != CombatStage.BOOK_KEEPING:
            raise RoundError(WRONG_STAGE.format(stage=combat.get_stage_display()))
        if combat.work.get("booked"):
            raise RoundError(
                f"Book keeping of round {combat.round_number} is done;"
                f" next comes round {combat.round_number + 1} (D17)."
            )
        require_no_pursuit(combat)
        state = wod_state(combat)
        effects = [TimedEffect(**e) for e in combat.effects]
        ending = [e for e in effects if e.rounds_left <= 1]
        try:
            state, running = state.book_keeping(effects)
        except RuleError as error:
            raise refusal_of(error) from error
        grapples = []
        for g in combat.grapples:
            grapple = grapple_from(g)
            if grapple.over is None and grapple.sustained_this_round:
                grapple = grapple.end_round()  # G4
            elif grapple.over is None:
                grapple = replace(grapple, may_perform_effect=False)
            if grapple.over in (None, Over.PINNED) or grapple.released_from_pin:
                grapples.append({**grapple.to_dict(), "round": g.get("round")})
        combat.grapples = grapples
        combat.effects = [vars(e) for e in running]
        combat.state = state.to_dict()
        combat.work = {**combat.work, "booked": True, "expired": list(state.expired)}
        scene.game_time += ROUND_SECONDS.get(combat.ruleset, 15)
        participants = fight_members(combat)

        def seen(who: str) -> bool:
            p = participants.get(int(who)) if who.isdigit() else None
            return p is None or is_visible(p)

        # Players hear what expired on the characters they see; the reminders (each player's
        # own, read to the storyteller, D17) and anything of a hidden NPC are the storyteller's.
        shown = ", ".join(e.name for e in ending if seen(e.who)) or "nothing"
        record_round(
            scene,
            combat,
            by,
            f"Book keeping, round {combat.round_number}: expired {shown}",
            participants=participants,
        )
        expired = ", ".join(state.expired) or "nothing"
        reminders = "; ".join(r["text"] for r in combat.reminders) or "none"
        record_round(
            scene,
            combat,
            by,
            f"Book keeping, round {combat.round_number} (storyteller): expired {expired};"
            f" reminders {reminders}",
            public=False,
            participants=participants,
        )

    return take(BOOK_KEEPING_STEP, combat, by=by, key=key, seen=at, rules=rules)


NEXT_STEP = round_step("round.next", storyteller=True)


def combat_next_round(
    *, combat: Combat, by: AbstractBaseUser, at: str | None = None, key: str | None = None
) -> Combat:
    """D4: after Book Keeping the next round starts with initiative rolled anew."""

    def rules(scene: Scene, combat: Combat) -> None:
        if combat.stage != CombatStage.BOOK_KEEPING or not combat.work.get("booked"):
            raise RoundError("Book keeping comes first (D17).")
        combat.round_number += 1
        combat.stage = CombatStage.INITIATIVE
        combat.initiative = {}
        combat.state = {}
        combat.work = kept_work(combat.work)
        combat.reminders = []
        record_round(scene, combat, by, f"Round {combat.round_number}: roll initiative")

    return take(NEXT_STEP, combat, by=by, key=key, seen=at, rules=rules)


REMIND_STEP = round_step("round.remind")


def combat_remind(
    *,
    combat: Combat,
    by: AbstractBaseUser,
    participant: Participant,
    text: str,
    key: str | None = None,
) -> Combat:
    """D17: a player raises a reminder for Book Keeping (read before the next declarations)."""
    text = (text or "").strip()[:200]
    if not text:
        raise RoundError("Say what to remind the storyteller of.")
    payload = {"c": combat.pk, "p": participant.pk, "t": text}

    def rules(scene: Scene, combat: Combat) -> None:
        combat.reminders = [
            *combat.reminders,
            {"who": who_of(participant), "text": f"{participant.name}: {text}"},
        ]
        combat.save()
        # A reminder is for the storyteller: the other players do not read it.
        record_change(
            scene,
            by=by,
            kind=LogKind.COMBAT,
            text=f"Reminder from {participant.name}: {text}",
            public=False,
            characters=[participant.character] if participant.character_id else [],
            private_user_ids=[by.pk],
        )

    return take(REMIND_STEP, combat, participant, by=by, key=key, payload=payload, rules=rules)
