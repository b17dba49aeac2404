"""The answer a challenge waits for (C1: a bid, C2/W5: relent, or nothing to bid) and a relent
from either side before the first throw.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from combat.challenges.access import declare, require_live, take
from combat.challenges.building import build, build_unanswered, check_pool, side_options
from combat.challenges.outcome import step_on
from combat.challenges.reads import name_of, participant_of
from combat.challenges.refusals import ChallengeError, by_the_rules
from combat.challenges.timers import clear_timer
from combat.models import Challenge, ChallengeStatus, Scene
from combat.rules.challenge import Challenge as Engine

ANSWER = declare("challenge.answer")


def challenge_answer(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    answer: str,
    bid: str = "",
    ability: str = "",
    effect: str = "",
    weapon: int | None = None,
    attribute: str = "",
    skill: str = "",
    bonus: int = 0,
    prone: bool = False,
    counterattack: bool = False,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C1: the side asked to answer bids from its current traits, relents (C2, W5: nobody
    loses a trait) or has nothing to bid (C1: the attacker's effect happens, no test)."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        if ch.status != ChallengeStatus.ANSWER or ch.options.get("awaiting") != side:
            raise ChallengeError("No answer is asked of you now.")
        who = name_of(ch, side)
        options = dict(ch.options)
        options.pop("awaiting", None)
        if answer in {"relent", "no_bid"}:
            engine = build_unanswered(ch, options, side)
            with by_the_rules():
                engine = engine.relent(side) if answer == "relent" else engine.no_bid()
            text = (
                f"{who} relents: nobody loses a trait"
                if answer == "relent"
                else f"{who} has nothing to bid: the effect happens, no test"
            )
            ch.options = options
            ch.status = ChallengeStatus.LIVE
            rule = "W5" if scene.ruleset == "met_werewolf" else "C2" if answer == "relent" else "C1"
            return step_on(
                scene, ch, by, text, engine=engine, history=f"{text} ({rule})", public=True
            )
        if answer != "bid":
            raise ChallengeError("Answer with a bid, relent, or nothing to bid.")
        if scene.ruleset == "met_bns":
            check_pool(participant_of(ch, side), attribute, skill)
        side_opts = side_options(
            {
                "bid": bid,
                "ability": ability,
                "weapon": weapon,
                "attribute": attribute,
                "skill": skill,
                "bonus": bonus,
                "prone": prone,
                "effect": effect,
            }
        )
        if counterattack:
            side_opts["counterattack"] = True
        options[side] = {**options.get(side, {}), **side_opts}
        if side == "defender":
            ch.defender_effect = effect[:300]
        engine = build(ch, options)
        ch.options = options
        ch.status = ChallengeStatus.LIVE
        clear_timer(ch)
        shown = bid or (attribute and f"{attribute} pool") or ch.category
        said = f"{who} bids {shown}" + (f" · {effect}" if effect else "")
        return step_on(scene, ch, by, f"{who} answers with {shown}", engine=engine, history=said)

    return take(
        ANSWER,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "answer": answer, "bid": bid, "ability": ability},
        rules=rules,
    )


RELENT = declare("challenge.relent")


def challenge_relent(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C2 (W5): either side relents before the first throw; nobody loses a trait."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        if ch.status == ChallengeStatus.ANSWER:
            engine = _before_the_answer(ch, side)
        else:
            engine = require_live(ch)
        with by_the_rules():
            engine = engine.relent(side)
        ch.sealed = {}
        text = f"{name_of(ch, side)} relents: nobody loses a trait"
        return step_on(scene, ch, by, text, engine=engine, public=True)

    return take(
        RELENT,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "relent": True},
        rules=rules,
    )


def _before_the_answer(ch: Challenge, side: str) -> Engine:
    """C2, W5: the attacker relents while it waits for the defender's answer: the engine
    starts with the defender's bid unsaid (the defender itself answers with Relent)."""
    awaiting = ch.options.get("awaiting")
    if awaiting == side or awaiting != "defender":
        raise ChallengeError("Answer the challenge with Relent.")
    options = {k: v for k, v in ch.options.items() if k != "awaiting"}
    engine = build_unanswered(ch, options, awaiting)
    ch.options = options
    ch.status = ChallengeStatus.LIVE
    clear_timer(ch)
    return engine
