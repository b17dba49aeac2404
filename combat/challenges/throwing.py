"""Throws (C3, sealed until both are in), results thrown by hand (C3) and totals declared after
a draw (C4, W3, sealed until both are in); the reveal and how the challenge then stands.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from combat.challenges.access import declare, require_live, round_tokens, take
from combat.challenges.outcome import step_on
from combat.challenges.reads import (
    BY_HAND,
    THROWS,
    by_hand_pending,
    by_hand_words,
    name_of,
    round_of,
    scene_players,
    sides_for,
)
from combat.challenges.recording import save, tell, without
from combat.challenges.refusals import ChallengeError, by_the_rules
from combat.models import Challenge, Scene
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.rules.terms import Mode, Side, Throw


def require_throw_called(engine: Engine) -> None:
    """C3: a throw (or a result by hand) counts only when the engine calls for one."""
    if engine.phase is not Phase.THROWS:
        raise ChallengeError("No throw is called for right now.", "C3")


THROW = declare("challenge.throw", tokens=round_tokens)


def challenge_throw(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    throw: str,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
    rng: Any = None,
) -> Challenge:
    """C3: a sealed throw. The other side and the storyteller see only "locked in"; the
    thrower may change it until the other side locks in; both are revealed together."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        require_throw_called(engine)
        if not engine.throws and engine.must_drop_out():
            out = ", ".join(engine.must_drop_out())
            raise ChallengeError(f"{out} must drop out before the first throw.", "C16")
        thrown = throw
        if thrown == "random":
            thrown = (rng or secrets.SystemRandom()).choice(THROWS)
        with by_the_rules():
            Throw.parse(thrown)
        sealed = dict(ch.sealed.get("throw", {}))
        changed = side in sealed
        sealed[side] = thrown
        who = name_of(ch, side)
        if len(sealed) < 2:
            ch.sealed = {**ch.sealed, "throw": sealed}
            text = f"{who} changed the throw (locked in)" if changed else f"{who} is locked in"
            save(scene, ch, by, text)
            return ch
        ch.sealed = without(ch.sealed, "throw")
        return reveal(scene, ch, engine, by, sealed["attacker"], sealed["defender"])

    return take(
        THROW,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "throw": throw},
        rules=rules,
    )


def reveal(
    scene: Scene,
    ch: Challenge,
    engine: Engine,
    by: AbstractBaseUser,
    a: str,
    d: str,
    *,
    said: str = "",
) -> Challenge:
    """Both throws are in: the engine steps; ``said`` words a result thrown by hand (the
    pair of throws standing for it is nobody's)."""
    before = engine
    with by_the_rules():
        engine = engine.throw_both(a, d)
    a_name, d_name = name_of(ch, "attacker"), name_of(ch, "defender")
    text = said or f"Throws: {a_name} {a}, {d_name} {d}"
    text += " — " + standing(ch, before, engine) + _wounded_draw(ch, before, a, d)
    ch.options = without(ch.options, "by_hand")
    # C16: the first throw closes a place left by a drop-out: the offers go from every phone
    offered = ch.options.get("mob_dropped") and not before.throws
    return step_on(
        scene, ch, by, text, engine=engine, also=scene_players(scene) if offered else None
    )


def _wounded_draw(ch: Challenge, before: Engine, a: str, d: str) -> str:
    """C6: why a draw was decided without totals: one side is Wounded (both: as usual)."""
    if (
        a != d
        or before.mode in {Mode.SIMPLE, Mode.DIFFICULT}
        or before.profile.family.value == "pools"
    ):
        return ""
    hurt = [
        side
        for side in ("attacker", "defender")
        if (side == "attacker" or before.defender is not None)
        and before.side(Side(side)).health.wounded
    ]
    if len(hurt) != 1:
        return ""
    level = before.side(Side(hurt[0])).health.value.capitalize()
    return f" ({name_of(ch, hurt[0])} is {level} and loses the draw, C6)"


def standing(ch: Challenge, before: Engine, engine: Engine) -> str:
    if engine.phase is Phase.DECLARATIONS:
        return (
            "a draw: declare totals (C4)"
            if engine.profile.family.value == "classic"
            else ("a draw: declare totals (W3)")
        )
    if engine.phase is Phase.OVER:
        return f"{name_of(ch, engine.winner.value)} wins"
    if engine.phase is Phase.THROWS and engine.leader is None:
        if engine.wins or engine.opponent_wins:
            return f"throw counted (wins {engine.wins}–{engine.opponent_wins}); throw again (W13)"
        return "equal totals: throw again (C4)"
    if engine.leader is not None:
        return f"{name_of(ch, engine.leader.value)} is winning"
    return ""


HAND = declare("challenge.by_hand")


def challenge_by_hand(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    result: str,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C3: a pair that threw by hand records the result instead (attacker, defender, draw).
    One side records it; it counts when the other side confirms the same result (or the
    storyteller does, :func:`challenge_st` ``by_hand``). A different result from the other
    side replaces it and waits in turn. The history and the log say "by hand", no throws."""
    if result not in BY_HAND:
        raise ChallengeError("A result by hand is a win for one side or a draw.", "C3")

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        require_throw_called(engine)
        who, other = name_of(ch, side), Side(side).other.value
        words = by_hand_words(ch, result)
        pending = by_hand_pending(ch, engine)
        # the storyteller playing both sides (NPC against NPC) has nobody to wait for
        alone = as_st and other in sides_for(ch, by, as_st=True)
        if alone or (pending and pending["side"] == other and pending["result"] == result):
            how = f"recorded by {who}" if alone else f"recorded by {name_of(ch, other)}"
            if not alone:
                how += f", confirmed by {who}"
            return by_hand_result(scene, ch, engine, by, result, how)
        if pending and pending["side"] == other:
            text = (
                f"{who} records by hand: {words}; {name_of(ch, other)} recorded "
                f"{by_hand_words(ch, pending['result'])}: {name_of(ch, other)} confirms, "
                "or the storyteller rules (C3)"
            )
        else:
            text = f"{who} records by hand: {words}; waiting for {name_of(ch, other)} to confirm"
        ch.options = {
            **ch.options,
            "by_hand": {"side": side, "result": result, "round": round_of(engine)},
        }
        return tell(scene, ch, by, text)

    return take(
        HAND,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "by_hand": result},
        rules=rules,
    )


def by_hand_result(scene, ch, engine, by, result: str, how: str) -> Challenge:
    """C3: the result by hand counts: the engine steps as if the throws had been made."""
    ch.sealed = without(ch.sealed, "throw")
    said = f"By hand: {by_hand_words(ch, result)} ({how})"
    return reveal(scene, ch, engine, by, *BY_HAND[result], said=said)


DECLARE = declare("challenge.declare", tokens=round_tokens)


def challenge_declare(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    total: int,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C4 (W3): after a draw each side declares its total (at most its own, under-declaring
    allowed), sealed until both are in; the server compares them."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        if engine.phase is not Phase.DECLARATIONS:
            raise ChallengeError("Totals are declared only after a draw.", "C4")
        most = engine.total(Side(side))
        if total > most:
            raise ChallengeError(f"You can declare at most {most}.", "C4")
        if total < 0:
            raise ChallengeError("A declared total cannot be negative.", "C4")
        sealed = dict(ch.sealed.get("declare", {}))
        if side in sealed:
            raise ChallengeError("Your total is declared and fixed for this challenge.", "C4")
        sealed[side] = total
        needed = {"attacker"} if engine.defender is None else {"attacker", "defender"}
        who = name_of(ch, side)
        if not needed <= set(sealed):
            ch.sealed = {**ch.sealed, "declare": sealed}
            save(scene, ch, by, f"{who} declared a total (sealed)")
            return ch
        ch.sealed = without(ch.sealed, "declare")
        before = engine
        with by_the_rules():
            engine = engine.declare(sealed["attacker"], sealed.get("defender"))
        shown = f"{name_of(ch, 'attacker')} {sealed['attacker']}"
        shown += (
            f", {name_of(ch, 'defender')} {sealed['defender']}"
            if "defender" in sealed
            else f" against difficulty {engine.difficulty}"
        )
        text = f"Totals: {shown} — {standing(ch, before, engine)}"
        return step_on(scene, ch, by, text, engine=engine)

    return take(
        DECLARE,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "declare": total},
        rules=rules,
    )
