"""After each step of a challenge: its timers and, when the engine says it is over, the outcome
(C3, W4, W8, W11 losses; C16 the mob's bids; B3 damage; C5 blood kept; C10, W9 locks).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from combat.challenges.building import scene_locks
from combat.challenges.reads import BLOOD_LASTS, mob_members, name_of
from combat.challenges.recording import note, save
from combat.challenges.timers import choice_timer, clear_timer
from combat.challenges.traits import cross_off, lose, note_choosing
from combat.challenges.wounding import wound
from combat.models import Challenge, ChallengeLock, ChallengeStatus, Scene
from combat.rules.challenge import CHOICE, Phase
from combat.rules.challenge import Challenge as Engine
from combat.rules.errors import RuleError
from combat.rules.night import Locks
from combat.rules.terms import Mode, Side


def step_on(
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    text: str,
    *,
    engine: Engine,
    history: str | None = None,
    public: bool = False,
    also: list[int] | None = None,
) -> Challenge:
    """The engine stepped on: the history's line (``history``, else ``text``) comes first,
    then the timers and, when the engine says it is over, the outcome (:func:`after_step`);
    saved and announced with ``text``."""
    note(challenge, text if history is None else history)
    after_step(challenge, engine, by)
    save(scene, challenge, by, text, public=public, engine=engine, also=also)
    return challenge


def after_step(ch: Challenge, engine: Engine, by: AbstractBaseUser) -> None:
    """Timers and, when the engine says the challenge is over, its outcome."""
    no_retest_waiting = engine.phase is not Phase.THROWS or engine.announced is None
    if no_retest_waiting and ch.timer_label.endswith("may cancel"):
        clear_timer(ch)
    if engine.phase is Phase.OVER and ch.status != ChallengeStatus.OVER:
        _conclude(ch, engine, by)


def _keep_blood(ch: Challenge, engine: Engine) -> None:
    """C5: the blood traits each side held last until five game minutes after this
    challenge (the conflict's last one so far)."""
    held = {}
    for side, participant in (("attacker", ch.attacker), ("defender", ch.defender)):
        if participant is None or (side == "defender" and engine.defender is None):
            continue
        contender = engine.side(Side(side))
        if contender.blood + contender.blood_kept:
            held[str(participant.pk)] = contender.blood + contender.blood_kept
    if held:
        ch.options = {
            **ch.options,
            "blood_traits": held,
            "blood_until": ch.scene.game_time + BLOOD_LASTS,
        }


def _tally(engine: Engine) -> str:
    """W13: the outcome of an extended challenge counts its wins (a race: both sides')."""
    if engine.mode is not Mode.EXTENDED:
        return ""
    return f" (wins: {engine.wins}" + (f"–{engine.opponent_wins})" if engine.race else ")")


def _conclude(ch: Challenge, engine: Engine, by: AbstractBaseUser) -> None:
    """C3, W4, W8, W11: the losses; C16: the mob's bids; B3: damage; C10, W9: locks."""
    winner = engine.winner.value if engine.winner else ""
    ch.status = ChallengeStatus.OVER
    ch.winner = winner
    ch.finished_at = timezone.now()
    ch.sealed = {}
    clear_timer(ch)
    lost = engine.lost()
    already = {(who, t) for who, t in engine.lost_now}
    for side, traits in lost.items():
        remaining = list(traits)
        for who, t in engine.lost_now:  # crossed off at once already (W11)
            if who == side and t in remaining:
                remaining.remove(t)
        for trait in remaining:
            lose(ch, side, trait, by, reason="lost the challenge")
    del already
    members = {m.name: m for m in mob_members(ch)}
    for name, bids in engine.mob_lost().items():  # C16: the defender won: every bid is lost
        member = members.get(name)
        if member is None or member.character_id is None:
            continue  # the primary's bid is in lost() already; quick NPCs have no sheet
        for trait in bids:
            cross_off(ch, member.character, by, trait, reason="the mob lost (C16)", rule="C16")
    damage_text = ""
    # B3: the attacker's blow lands when it wins; a winning defender deals damage only
    # with a counterattack it could make (C14) and may (C12).
    strikes = winner == "attacker" or (
        winner == "defender" and ch.options.get("defender", {}).get("counterattack")
    )
    if ch.options.get("attack") and strikes and engine.defender and engine.harms(Side(winner)):
        damage_text = wound(ch, winner, engine.damage(), by)
    effect = ch.attacker_effect if winner == "attacker" else ch.defender_effect
    fended = engine.defender is not None and not engine.harms(Side.DEFENDER)
    if winner == "defender" and fended and ch.defender_effect:
        effect = "fends it off (no harm to the attacker)"
    how = engine.decided_by
    lost_words = [
        f"{name_of(ch, s)} loses "
        + ", ".join(x if x != CHOICE else "a trait of their choice (W8)" for x in t)
        for s, t in lost.items()
        if t
    ]
    parts = [f"{name_of(ch, winner)} wins" if winner else "Over"]
    if how and how not in {"throw"}:
        parts.append(f"by {how}")
    if effect:
        parts.append(f"— {effect}")
    text = " ".join(parts)
    if lost_words:
        text += "; " + "; ".join(lost_words)
    text += damage_text + _tally(engine)
    ch.outcome = text[:300]
    note(ch, text)
    # The scene log: the public part (who won, the effect in words), then what the sheets
    # lose, for the players concerned only.
    against = name_of(ch, "defender")
    hide = bool(effect) and bool(ch.options.get("effect_private"))
    said = " ".join(parts[:-1] if hide else parts) + _tally(engine)
    ch.options = {**ch.options, "public_outcome": said[:300]}
    lines = [(f"Outcome of {name_of(ch, 'attacker')} vs {against}: {said}", True)]
    told = [f"{name_of(ch, winner)}: {effect}"] if hide else []  # the effect, kept private
    private = "; ".join(told + lost_words) + damage_text
    if private:
        lines.append((f"Outcome, for the players concerned: {private.lstrip('; ')}", False))
    ch._outcome_lines = lines
    _keep_blood(ch, engine)
    choosing = ch.options.get("choose", [])
    if choosing:
        for side in dict.fromkeys(choosing):
            note_choosing(ch, side)
        choice_timer(ch, choosing[0])
    if ch.defender is not None and how not in {"relent", "no bid", "running out"}:
        scene = ch.scene
        # The locks this challenge leaves (C10, W9), known without the night's: most leave
        # none, and then the night's locks are not read at all.
        try:
            new = Locks(()).after(
                engine,
                attacker=ch.attacker.name,
                target=ch.defender.name,
                now=scene.game_time,
                what=ch.what or ch.category,
            )
        except RuleError:
            new = Locks(())
        held = scene_locks(scene).held if new.held else ()
        for lock in new.held:
            if lock not in held:
                ChallengeLock.objects.create(
                    scene=scene,
                    challenge=ch,
                    attacker=ch.attacker,
                    target=ch.defender,
                    what=lock.what,
                    until=lock.until,
                    rule=lock.rule,
                )
                note(
                    ch,
                    f"{ch.attacker.name} may not use {lock.what} on {ch.defender.name} for "
                    f"{(lock.until - scene.game_time) // 60} game minutes ({lock.rule})",
                )
