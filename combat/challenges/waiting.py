"""What the storyteller's roster says of a scene's open challenges: who is in one and what
each waits on them for (an answer, a bid, a throw, a declared total, the losing side's retest
or acceptance, a loser's choice).

Never what a side threw or declared: only that it has not yet.
"""

from __future__ import annotations

from combat.challenges import reads
from combat.models import ChallengeStatus, Scene
from combat.rules.challenge import Phase

# What the storyteller's roster says a challenger is waited on for (the tablet, at a glance).
TO_ANSWER = "to answer"
TO_BID = "to bid for the mob (C16)"
TO_THROW = "to throw"
TO_DECLARE = "to declare a total (C4)"
TO_RETEST = "to retest or take the result (C8)"
TO_CHOOSE = "to choose a trait to cross off (W8)"


def waiting_on(scene: Scene) -> dict[int, str]:
    """Who the scene's open challenges wait on, by participant id, and for what: an answer
    (the defender, the mob's members, C16), a throw or a declared total (C4), the losing
    side's retest or acceptance (C8), a loser's choice (W8). Never what a side threw or
    declared: only that it has not yet."""
    out: dict[int, str] = {}
    for ch in reads.still_open(reads.phone_rows(scene, reads.NO_PLAYERS)):
        sides = {"attacker": ch.attacker, "defender": ch.defender}

        def wait(side: str, what: str, sides: dict = sides) -> None:
            p = sides.get(side)
            if p is not None:
                out.setdefault(p.pk, what)

        if ch.status == ChallengeStatus.ANSWER:
            awaiting = ch.options.get("awaiting", "")
            if awaiting == "mob":
                for member in reads.unanswered(ch):
                    out.setdefault(member.pk, TO_BID)
            else:
                wait(awaiting, TO_ANSWER)
        elif ch.status == ChallengeStatus.LIVE:
            engine = reads.engine_of(ch)
            phase = engine.phase if engine is not None else None
            if phase is Phase.THROWS and not reads.must_drop(ch, engine):
                for side in sides:
                    if side not in ch.sealed.get("throw", {}):
                        wait(side, TO_THROW)
            elif phase is Phase.DECLARATIONS:
                for side in sides:
                    if side not in ch.sealed.get("declare", {}):
                        wait(side, TO_DECLARE)
            elif phase is Phase.RETESTS and engine.leader is not None:
                losing = "defender" if engine.leader.value == "attacker" else "attacker"
                wait(losing, TO_RETEST)
        for side in ch.options.get("choose", []):
            wait(side, TO_CHOOSE)
    return out


def fighting(scene: Scene) -> set[int]:
    """Everyone in an open challenge of the scene (both sides, the mob's members)."""
    ids: set[int] = set()
    for ch in reads.still_open(reads.phone_rows(scene, reads.NO_PLAYERS)):
        ids |= {p for p in (ch.attacker_id, ch.defender_id) if p is not None}
        ids |= {int(pk) for pk in ch.options.get("mob", {})}
    return ids
