"""The storyteller's calls on a challenge (time, pause, force, deny or allow a retest, rule,
Stamina and surprise rulings, set a winner, void, confirm a result by hand) and a side
calling the storyteller.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from characters.models import LedgerEntry
from characters.selectors import entry_counts
from characters.services import ledger_reverse
from combat.challenges.access import declare, require_live, storyteller_may_act, take
from combat.challenges.building import build, build_unanswered
from combat.challenges.mob import mob_formed
from combat.challenges.outcome import step_on
from combat.challenges.reads import BY_HAND, THROWS, by_hand_pending, name_of, unanswered
from combat.challenges.recording import note, tell, without
from combat.challenges.refusals import CLOSED, ChallengeError, by_the_rules
from combat.challenges.throwing import by_hand_result, require_throw_called, reveal, standing
from combat.challenges.timers import clear_timer, seconds_for, start_timer
from combat.models import Challenge, ChallengeStatus, Scene
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.rules.terms import Side

STORYTELLER = declare("challenge.st", may_act=storyteller_may_act)


def challenge_st(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    action: str,
    seconds: int = 0,
    side: str = "",
    text: str = "",
    token: str | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Challenge:
    """The storyteller's calls: add time, pause/resume, force a step (random throws for
    whoever has not thrown, full totals, take the result), deny or allow a retest, rule a
    dispute, set a winner, void (reversing the challenge's ledger entries with a reason)."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        handler = _ST_ACTIONS.get(action)
        if handler is None:
            raise ChallengeError(f"Unknown storyteller action {action}.")
        handler(scene, ch, by, seconds=seconds, side=side, text=text, rng=rng)
        return ch

    return take(
        STORYTELLER,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"st": action, "side": side, "text": text},
        rules=rules,
    )


def _require_timer_kept(ch: Challenge) -> None:
    """The storyteller keeps the time of an open challenge, or of W8's pick after its end."""
    if not ch.is_open and not (ch.options.get("choose") and ch.timer_label):
        raise ChallengeError(CLOSED)


def _st_time(scene, ch, by, *, seconds, **_):
    """Add time to the timer that runs (an expired one runs again from now). Nothing runs
    while paused (a resume starts the timer afresh) or when no timer is set: refused."""
    _require_timer_kept(ch)
    if not 1 <= seconds <= 600:
        raise ChallengeError("Add 1 to 600 seconds.")
    if ch.paused:
        raise ChallengeError(
            "The challenge is paused: resume it and its timer starts afresh "
            f"({seconds_for(ch.timer_label)}s)."
            if ch.timer_label
            else "The challenge is paused and no timer is set."
        )
    if not ch.timer_label or ch.deadline is None:
        raise ChallengeError("No timer is running: there is nothing to add time to.")
    base = max(ch.deadline, timezone.now())
    ch.deadline = base + timedelta(seconds=seconds)
    text = f"The storyteller adds {seconds}s to the timer ({ch.timer_label})"
    tell(scene, ch, by, text)


def _st_pause(scene, ch, by, **_):
    """Pause the timer (or the challenge's pace, when none runs); a resume starts the timer
    afresh at its own length (a cancel window's 30 seconds, an answer's 90)."""
    _require_timer_kept(ch)
    ch.paused = not ch.paused
    if ch.paused:
        ch.deadline = None
        text = "Paused by the storyteller" + (f" ({ch.timer_label})" if ch.timer_label else "")
    elif ch.timer_label:
        seconds = seconds_for(ch.timer_label)
        start_timer(ch, ch.timer_label)
        text = f"Resumed by the storyteller: {ch.timer_label}, {seconds}s afresh"
    else:
        text = "Resumed by the storyteller"
    tell(scene, ch, by, text)


def _keep_out(ch: Challenge, options: dict[str, Any]) -> str:
    """C16: the storyteller keeps every member who has not bid out of the mob (it bids for
    nobody); the words for the history."""
    gone = unanswered(ch)
    options["mob"] = {pk: answer for pk, answer in options.get("mob", {}).items() if answer}
    names = ", ".join(m.name for m in gone)
    return f"The storyteller keeps {names} out of the mob: no answer (C16)" if gone else ""


def _force_answer(scene, ch, by) -> None:
    """Force the answer a challenge waits for: C16, the members of a forming mob who have
    not bid stay out (the defender is asked); C1, a defender who does not answer does not
    bid (the attacker's effect happens, no test, nobody loses a trait). A player's own bid
    for a test the storyteller called is theirs alone: that is refused."""
    awaiting = ch.options.get("awaiting")
    options = dict(ch.options)
    if awaiting == "mob":
        text = _keep_out(ch, options) + mob_formed(ch, options)
        ch.options = options
        tell(scene, ch, by, text)
        return
    if awaiting != "defender":
        raise ChallengeError(
            f"Only {name_of(ch, awaiting or 'attacker')} bids for their test: add time, set a "
            "winner or void.",
            "C1",
        )
    who = name_of(ch, "defender")
    options.pop("awaiting", None)
    engine = build_unanswered(ch, options, "defender")
    with by_the_rules():
        engine = engine.no_bid()
    ch.options = options
    ch.status = ChallengeStatus.LIVE
    clear_timer(ch)
    text = f"{who} did not answer: no bid, the effect happens, no test (C1; the storyteller's call)"
    step_on(scene, ch, by, text, engine=engine, public=True)


def _engine_unanswered(ch: Challenge) -> Engine:
    """The engine of a challenge still waiting for an answer, for the storyteller's winner:
    the side asked has not bid (nothing of it is at risk); C16, a mob member who has not
    bid stays out; a test's required bid (W14) is not asked for any more."""
    options = dict(ch.options)
    awaiting = options.pop("awaiting", None)
    notes = []
    if awaiting == "mob":
        notes.append(_keep_out(ch, options))
        awaiting = "defender"
    unasked = {awaiting: {}} if awaiting in ("attacker", "defender") else {}
    ch.options = options  # the mob's members are read from the row
    engine = build(ch, {**options, **unasked, "bid_required": False})
    ch.status = ChallengeStatus.LIVE
    for text in notes:
        if text:
            note(ch, text)
    return engine


def _st_force(scene, ch, by, *, rng=None, **_):
    """Force the step that is waiting: the answer (see :func:`_force_answer`); random throws
    for whoever has not thrown; full totals for whoever has not declared; the loser takes
    the result."""
    if ch.status == ChallengeStatus.ANSWER:
        _force_answer(scene, ch, by)
        return
    engine = require_live(ch)
    if engine.phase is Phase.THROWS:
        sealed = dict(ch.sealed.get("throw", {}))
        rand = rng or secrets.SystemRandom()
        for s in ("attacker", "defender"):
            sealed.setdefault(s, rand.choice(THROWS))
        ch.sealed = without(ch.sealed, "throw")
        note(ch, "The storyteller forced the throws (random for whoever had not thrown)")
        reveal(scene, ch, engine, by, sealed["attacker"], sealed["defender"])
        return
    if engine.phase is Phase.DECLARATIONS:
        sealed = dict(ch.sealed.get("declare", {}))
        sealed.setdefault("attacker", engine.total(Side.ATTACKER))
        if engine.defender is not None:
            sealed.setdefault("defender", engine.total(Side.DEFENDER))
        ch.sealed = without(ch.sealed, "declare")
        before = engine
        engine = engine.declare(sealed["attacker"], sealed.get("defender"))
        text = (
            f"The storyteller forced the totals: {sealed['attacker']}"
            + (f" against {sealed['defender']}" if "defender" in sealed else "")
            + f" — {standing(ch, before, engine)}"
        )
        step_on(scene, ch, by, text, engine=engine)
        return
    before = engine
    engine = engine.accept()
    text = f"The storyteller closes the retests — {standing(ch, before, engine)}"
    step_on(scene, ch, by, text, engine=engine)


def _st_deny(scene, ch, by, *, text="", **_):
    """Deny the retest just called: back to before it; its costs are reversed."""
    engine = require_live(ch)
    snapshot = ch.options.get("before_retest")
    if not snapshot or engine.announced is None or ch.sealed.get("throw"):
        raise ChallengeError("There is no retest waiting for its throw to deny.")
    restored = Engine.from_dict(snapshot)
    reason = text or "retest denied by the storyteller"
    _reverse_since(ch, restored, engine, by, reason)
    ch.options = without(ch.options, "before_retest")
    clear_timer(ch)
    history = f"The storyteller denies the retest: {reason}"
    tell(scene, ch, by, f"Retest denied: {reason}", history=history, engine=restored)


def _reverse_since(ch, restored: Engine, engine: Engine, by, reason: str) -> None:
    """Reverse the ledger entries the denied retest wrote (the newest of this challenge)."""
    count = len(engine.spent) - len(restored.spent) + len(engine.lost_now) - len(restored.lost_now)
    if count <= 0:
        return
    entries = LedgerEntry.objects.filter(source=ch.source, reverses__isnull=True).order_by("-pk")
    for entry in list(entries)[:count]:
        ledger_reverse(entry=entry, by=by, reason=reason)


def _st_allow(scene, ch, by, **_):
    require_live(ch)
    ch.options = without(ch.options, "before_retest", "dispute")
    tell(scene, ch, by, "Retest allowed", history="The storyteller allows the retest")


def _st_rule(scene, ch, by, *, text="", **_):
    if not text.strip():
        raise ChallengeError("Write the ruling.")
    ch.options = without(ch.options, "dispute")
    ruling = text.strip()[:200]
    tell(scene, ch, by, f"Ruling: {ruling}", history=f"Storyteller's ruling: {ruling}", public=True)


def _st_stamina(scene, ch, by, *, side="", **_):
    """C12, C15: the storyteller says whether the defender's bid is Stamina-based."""
    if ch.status != ChallengeStatus.ANSWER:
        raise ChallengeError("The ruling is given before the defender's bid.", "C12")
    ch.options = {**ch.options, "stamina_ruling": side == "yes"}
    history = f"Storyteller: Stamina-based bids {'yes' if side == 'yes' else 'no'} (C12)"
    tell(scene, ch, by, "Stamina ruling given", history=history)


def _st_surprise(scene, ch, by, *, side="", **_):
    """C12: the storyteller's call on whether the defender is surprised (Heightened Senses
    or Telepathy may prevent it), given before the defender's bid."""
    if ch.status != ChallengeStatus.ANSWER or ch.defender is None:
        raise ChallengeError("Surprise is ruled on before the defender's bid.", "C12")
    if side not in ("yes", "no"):
        raise ChallengeError("Say whether the defender is surprised.", "C12")
    ch.options = {**ch.options, "surprise_ruling": side == "yes"}
    said = f"{name_of(ch, 'defender')} is {'' if side == 'yes' else 'not '}surprised"
    tell(scene, ch, by, f"Storyteller: {said} (C12)")


def _st_winner(scene, ch, by, *, side="", text="", **_):
    """The storyteller sets the winner, at any step of an open challenge: also one still
    waiting for an answer that never comes (the side asked has bid nothing to lose)."""
    if side not in ("attacker", "defender"):
        raise ChallengeError("Pick the winning side.")
    waiting = ch.status == ChallengeStatus.ANSWER
    engine = _engine_unanswered(ch) if waiting else require_live(ch)
    if engine.defender is None and side == "defender":
        engine = replace(engine, phase=Phase.OVER, leader=Side.DEFENDER, decided_by="storyteller")
    else:
        engine = replace(
            engine, phase=Phase.OVER, leader=Side(side), pending=(), decided_by="storyteller"
        )
    ch.sealed = {}
    winner = name_of(ch, side)
    step_on(
        scene,
        ch,
        by,
        f"Storyteller sets the winner: {winner}",
        engine=engine,
        history=f"The storyteller sets the winner: {winner}" + (f" ({text})" if text else ""),
        public=True,
    )


def _st_void(scene, ch, by, *, text="", **_):
    """Void: every ledger entry of the challenge still counting is reversed with the reason;
    its locks go; the challenge, the void and the reversals stay in the log."""
    reason = text.strip()
    if not reason:
        raise ChallengeError("Say why the challenge is voided.")
    if ch.status == ChallengeStatus.VOID:
        raise ChallengeError("This challenge is already void.")
    entries = LedgerEntry.objects.filter(
        source=ch.source, reverses__isnull=True, reversed_by__isnull=True
    ).order_by("-pk")
    reversed_count = 0
    for entry in entries:
        if entry_counts(entry):
            ledger_reverse(entry=entry, by=by, reason=f"challenge {ch.pk} voided: {reason}")
            reversed_count += 1
    ch.locks.all().delete()
    ch.options = without(ch.options, "choose")
    ch.status = ChallengeStatus.VOID
    ch.void_reason = reason[:300]
    ch.sealed = {}
    clear_timer(ch)
    said = f"{reason} ({reversed_count} sheet entries reversed)"
    tell(
        scene,
        ch,
        by,
        f"Challenge voided: {said}",
        history=f"Voided by the storyteller: {said}",
        public=True,
    )


def _st_by_hand(scene, ch, by, *, side="", **_):
    """C3: the storyteller confirms (or records) the result a pair threw by hand: ``side``
    names it (attacker, defender, draw)."""
    engine = require_live(ch)
    require_throw_called(engine)
    if side not in BY_HAND:
        raise ChallengeError("A result by hand is a win for one side or a draw.", "C3")
    pending = by_hand_pending(ch, engine)
    how = (
        f"recorded by {name_of(ch, pending['side'])}, confirmed by the storyteller"
        if pending and pending["result"] == side
        else "the storyteller's call"
    )
    by_hand_result(scene, ch, engine, by, side, how)


_ST_ACTIONS = {
    "time": _st_time,
    "pause": _st_pause,
    "force": _st_force,
    "deny": _st_deny,
    "allow": _st_allow,
    "rule": _st_rule,
    "stamina": _st_stamina,
    "surprise": _st_surprise,
    "winner": _st_winner,
    "void": _st_void,
    "by_hand": _st_by_hand,
}


DISPUTE = declare("challenge.dispute", tokens=None)


def challenge_dispute(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    text: str = "",
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """Either side calls the storyteller (always reachable); the board shows the call."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        words = text.strip()[:200] or "asks for the storyteller"
        ch.options = {**ch.options, "dispute": f"{name_of(ch, side)}: {words}"}
        who = name_of(ch, side)
        return tell(
            scene,
            ch,
            by,
            f"{who} calls the storyteller",
            history=f"{who} calls the storyteller: {words}",
            repeats=f"call-{side}",
        )

    return take(
        DISPUTE,
        challenge,
        by=by,
        key=key,
        seen=None,
        asked={"side": side, "as_st": as_st, "dispute": text},
        rules=rules,
    )
