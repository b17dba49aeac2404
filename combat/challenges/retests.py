"""Retests (C8-C10, C6, W10-W12, B2), cancelling one (C8, W10) and the loser taking the result
(C3; W13 in an extended challenge).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from combat.challenges.access import declare, require_live, take
from combat.challenges.outcome import step_on
from combat.challenges.reads import cancel_choices, name_of
from combat.challenges.refusals import ChallengeError, by_the_rules
from combat.challenges.throwing import standing
from combat.challenges.timers import clear_timer, start_timer
from combat.challenges.traits import pay_costs
from combat.models import Challenge, Scene
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.rules.terms import RetestKind, Side

RETEST = declare("challenge.retest")


def challenge_retest(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    kind: str,
    ability: str = "",
    power: str = "",
    declared: int | None = None,
    trait: str = "",
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C8-C10, C6, W10-W12, B2: the losing side calls a retest; the first tap claims it and
    the other phone says who is retesting. Costs go through the ledger at once. An overbid's
    announced total stays on the server: only whether it succeeded is revealed."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        try:
            kind_enum = RetestKind(kind)
        except ValueError:
            raise ChallengeError(f"Unknown retest {kind}.") from None
        contender = engine.side(Side(side))
        opposing = None
        other = Side(side).other
        if engine.defender is not None:
            opposing = engine.side(other).ability
        named = ability
        if kind_enum is RetestKind.ABILITY and not named:
            named = contender.ability or ""
        before = engine
        with by_the_rules():
            engine = engine.retest(
                side,
                kind_enum,
                ability=named or None,
                opposing=opposing,
                power=power or None,
                declared=declared,
                trait=trait or None,
            )
        who = name_of(ch, side)
        rule = engine._rule(kind_enum)
        ch.options = {**ch.options, "before_retest": before.to_dict()}
        if kind_enum is RetestKind.OVERBID and engine.phase is Phase.RETESTS:
            text = f"{who}'s overbid fails: the loss stands ({rule})"
        elif kind_enum is RetestKind.OVERBID:
            text = f"{who} overbids and succeeds: throw again ({rule})"
        else:
            what = named if kind_enum is RetestKind.ABILITY else power or kind
            text = (
                f"{who} retests with {kind_enum.value}"
                + (f" ({what})" if what and what != kind else "")
                + f" ({rule})"
            )
        pay_costs(ch, before, engine, by, side_name=who)
        if (
            engine.phase is Phase.THROWS
            and engine.announced is not None
            and engine.announced.kind in {RetestKind.ABILITY, RetestKind.POWER}
            and engine.defender is not None
            and _may_cancel(ch, engine, other)
        ):
            start_timer(ch, f"{name_of(ch, other.value)} may cancel")
        return step_on(scene, ch, by, text, engine=engine)

    return take(
        RETEST,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={
            "side": side,
            "as_st": as_st,
            "retest": kind,
            "ability": ability,
            "power": power,
            "trait": trait,
            "declared": declared,
        },
        rules=rules,
    )


def _may_cancel(ch: Challenge, engine: Engine, side: Side) -> bool:
    """C8, W10: a cancel window is timed only for a side with the means to cancel (an ability
    point, the same power): to anyone else "may cancel" would be a wait for nothing."""
    if (ch.attacker if side is Side.ATTACKER else ch.defender) is None:
        return False
    choices = cancel_choices(ch, engine, side)
    return bool(choices["abilities"] or choices["powers"])


CANCEL = declare("challenge.cancel")


def challenge_cancel(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    ability: str = "",
    power: str = "",
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """W10: cross off a point of an opposing ability to cancel an ability retest; C8: an
    identical power cancels a power retest. The loss stands."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        if ch.sealed.get("throw"):
            raise ChallengeError(
                "A throw is already in: the retest can no longer be cancelled.", "C8"
            )
        before = engine
        with by_the_rules():
            engine = engine.cancel(side, ability=ability or None, power=power or None)
        who = name_of(ch, side)
        rule = "W10" if ability else "C8"
        text = f"{who} cancels the retest with {ability or power}: the loss stands ({rule})"
        pay_costs(ch, before, engine, by, side_name=who)
        clear_timer(ch)
        return step_on(scene, ch, by, text, engine=engine)

    return take(
        CANCEL,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "cancel": ability or power},
        rules=rules,
    )


ACCEPT = declare("challenge.accept")


def challenge_accept(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C3: the losing side takes the result (no further retest). W13: in an extended
    challenge the throw counts and the next one follows."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        if engine.leader is None or engine.leader.value == side:
            raise ChallengeError("Only the side that is losing takes the result.", "C3")
        before = engine
        with by_the_rules():
            engine = engine.accept()
        text = f"{name_of(ch, side)} takes the result — {standing(ch, before, engine)}"
        return step_on(scene, ch, by, text, engine=engine)

    return take(
        ACCEPT,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "accept": True},
        rules=rules,
    )
