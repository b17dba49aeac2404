"""Negative traits: a side names one of the other's before the first throw (C5, W8) and the
loser picks the trait it crosses off for each one it put at risk (W8).
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser

from combat.challenges import sheets
from combat.challenges.access import declare, require_live, take
from combat.challenges.reads import name_of, participant_of, player_of
from combat.challenges.recording import tell, without
from combat.challenges.refusals import NOT_YOURS, ChallengeError, by_the_rules
from combat.challenges.timers import choice_timer, clear_timer
from combat.challenges.traits import cross_off
from combat.models import Challenge, ChallengeStatus, Scene
from combat.rules.terms import Side
from combat.services import is_storyteller_of_scene

NEGATIVE = declare("challenge.negative")


def challenge_name_negative(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    trait: str,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C5 (W8): before the first throw a side names a negative trait of the other. met_classic:
    a right guess is -1 to their total, a wrong one -1 to the guesser's; met_werewolf: one
    more trait at risk for the one it counts against. The answer is said at once."""
    trait = (trait or "").strip()[:80]
    if not trait:
        raise ChallengeError("Name the negative trait.", "C5")

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        if ch.sealed.get("throw"):
            raise ChallengeError("Negative traits are named before the first throw.", "C5")
        with by_the_rules():
            after = engine.name_negative(side, trait)
        right = after.guesses[-1][2] if after.guesses else False
        rule = "W8" if engine.profile.family.value == "werewolf" else "C5"
        other = name_of(ch, Side(side).other.value)
        if right and engine.mob and Side(side).other is engine.mob_side:
            # C16: the negative may be a member's: say whose (it counts once for the mob)
            holders = [n for n, m in engine.members() if trait in m.negatives]
            other = " and ".join(holders) or other
        text = (
            f"{name_of(ch, side)} names {other} {trait}: "
            + ("right" if right else "wrong")
            + f" ({rule})"
        )
        return tell(scene, ch, by, text, engine=after)

    return take(
        NEGATIVE,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "negative": trait},
        rules=rules,
    )


def _chooser_may_act(by: AbstractBaseUser, scene: Scene, ch: Challenge, asked: Mapping) -> None:
    """W8: the loser's own player picks, or the storyteller (for an absent player, an NPC)."""
    side = asked["side"]
    if side not in ("attacker", "defender"):
        raise ChallengeError(NOT_YOURS)
    if player_of(ch, side) != by.pk and not is_storyteller_of_scene(by, scene):
        raise ChallengeError(NOT_YOURS)


CHOOSE = declare("challenge.choose", may_act=_chooser_may_act)


def challenge_choose_trait(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    trait: str = "",
    token: str | None = None,
    key: str | None = None,
) -> Challenge:
    """W8: the loser picks which of its current traits of the category goes for each trait a
    named negative put at risk; from its own phone, or the storyteller for an absent player
    (or an NPC). The ledger entry lands now; nothing is crossed off until it is chosen."""
    trait = (trait or "").strip()[:80]

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        waiting = list(ch.options.get("choose", []))
        if ch.status != ChallengeStatus.OVER or side not in waiting:
            raise ChallengeError("No trait of that side is waiting to be chosen.", "W8")
        participant = participant_of(ch, side)
        held = sheets.load(participant).traits(ch.category)
        who = name_of(ch, side)
        chooser = "" if player_of(ch, side) == by.pk else " (chosen by the storyteller)"
        if not held:
            text = f"{who} has no {ch.category} trait left to cross off (W6, W8)"
        else:
            if not trait:
                raise ChallengeError("Pick the trait to cross off.", "W8")
            match = next((n for n in held if n.casefold() == trait.casefold()), None)
            if match is None:
                raise ChallengeError(f"{who} has no current {trait} to cross off.", "W8")
            reason = "a trait of the loser's choice (W8)"
            cross_off(ch, participant.character, by, match, reason=reason, rule="W8")
            text = f"{who} crosses off {match} (W8){chooser}"
        waiting.remove(side)
        options = without(ch.options, "choose")
        if waiting:
            options["choose"] = waiting
            choice_timer(ch, waiting[0])
        else:
            clear_timer(ch)
        ch.options = options
        return tell(scene, ch, by, text)  # which trait goes: for the players concerned

    return take(
        CHOOSE,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "choose": trait},
        rules=rules,
    )
