"""Writes to challenges: start, answer, throw, declare, retest, cancel, accept, and the
storyteller's calls (time, pause, force, deny, rule, set a winner, void).

Every function runs in one transaction, locks the scene (:func:`combat.services.lock_open_scene`)
and the challenge row, checks the step the actor saw (a late tap is refused and changes
nothing), claims the request's idempotency key (a double tap counts once), steps the engine
(:mod:`combat.rules.challenge`), writes the ledger (traits crossed off, willpower and ability
points, damage) with ``source="challenge <pk>"`` and announces through
:func:`combat.services.record_change`. A refusal raises :class:`ChallengeError`; a rule's
refusal names the rule ID.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from characters.idempotency import IdempotencyError, idempotency_claim
from characters.models import Equipment, LedgerEntry, LedgerKind
from characters.selectors import entry_counts
from characters.services import LedgerError, ledger_regain, ledger_reverse, ledger_spend
from combat import steps
from combat.challenges import sheets
from combat.logtext import one_line
from combat.models import (
    Challenge,
    ChallengeLock,
    ChallengeStatus,
    LogKind,
    Participant,
    Scene,
    SceneLogEntry,
)
from combat.rules.celerity import LEVELS, CelerityRound
from combat.rules.challenge import CHOICE, MOB_MOST, Phase, check_kind
from combat.rules.challenge import Challenge as Engine
from combat.rules.errors import RuleError
from combat.rules.night import Lock, Locks, require_regain
from combat.rules.terms import Category, Mode, RetestKind, Side, Throw
from combat.services import STALE as SCENE_STALE
from combat.services import SceneError, is_storyteller_of_scene, lock_open_scene, record_change
from combat.steps import Refused

#: What a step of a challenge changes on the storyteller's board (combat.fragments.REGIONS).
CHALLENGE_REGIONS = ("challenges",)
ANSWER_SECONDS = 90
CANCEL_SECONDS = 30
THROWS = ("rock", "paper", "scissors")
MODES = ("contested", "static", "simple", "difficult", "extended")

MOVED_ON = "The challenge moved on since you looked; nothing was changed. Look again."
NOT_YOURS = "You do not play that side of this challenge."
NOT_ST = "Only a storyteller of this chronicle can do that."
CLOSED = "This challenge is over."
OWN_CHARACTER = "You cannot challenge your own character."
NOT_IN_SCENE = "That character is not in this scene."
NOTHING_SEALED = "There is nothing to throw right now."


class ChallengeError(Refused):
    """A step refused, with a sentence for people; ``rule`` names the rule when one did."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        self.rule = rule
        super().__init__(f"{message} ({rule})" if rule and f"({rule})" not in message else message)


# -- reading --------------------------------------------------------------------------------


def engine_of(challenge: Challenge) -> Engine | None:
    return Engine.from_dict(challenge.state) if challenge.state else None


def _participant(challenge: Challenge, side: str) -> Participant | None:
    """Who plays ``side``; ``None`` for the storyteller's static or simple opponent."""
    return challenge.attacker if side == "attacker" else challenge.defender


def is_st_side(challenge: Challenge, side: str) -> bool:
    """The storyteller plays a side that is an NPC, or the static/simple opponent."""
    participant = _participant(challenge, side)
    return participant is None or participant.npc or participant.character_id is None


def player_of(challenge: Challenge, side: str) -> int | None:
    participant = _participant(challenge, side)
    return None if participant is None else _member_player(participant)


def sides_for_st(challenge: Challenge) -> list[str]:
    """The sides the storyteller plays from the tablet (NPCs, the static opponent)."""
    return [s for s in ("attacker", "defender") if is_st_side(challenge, s)]


def sides_for(challenge: Challenge, user: AbstractBaseUser, *, as_st: bool = False) -> list[str]:
    """The sides ``user`` may act for: a player their own character's; a storyteller (from
    the tablet) the NPC and static sides. Nobody acts for a character not theirs."""
    if as_st:
        return sides_for_st(challenge)
    return [s for s in ("attacker", "defender") if player_of(challenge, s) == user.pk]


def _in_order(ids: list[int]) -> list[Participant]:
    """The participants of ``ids``, in that order (any gone from the table are left out)."""
    if not ids:
        return []
    found = {p.pk: p for p in Participant.objects.filter(pk__in=ids).select_related("character")}
    return [found[pk] for pk in ids if pk in found]


def mob_members(challenge: Challenge) -> list[Participant]:
    """C16: the mob's other attackers (beyond the primary, who throws)."""
    return _in_order([int(pk) for pk in challenge.options.get("mob", {})])


def _member_player(member: Participant) -> int | None:
    if member.character_id is None or member.npc:
        return None
    return member.character.player_id


def mob_dropped(challenge: Challenge) -> list[Participant]:
    """C16: the members who dropped out (they still see how it ends)."""
    return _in_order(challenge.options.get("mob_dropped", []))


def _players(challenge: Challenge) -> list[int]:
    ids = [player_of(challenge, s) for s in ("attacker", "defender")]
    ids += [_member_player(m) for m in (*mob_members(challenge), *mob_dropped(challenge))]
    return [i for i in dict.fromkeys(ids) if i]


def _characters(challenge: Challenge) -> list:
    parts = [challenge.attacker, challenge.defender, *mob_members(challenge)]
    return [p.character for p in parts if p is not None and p.character_id is not None]


#: A hidden NPC in a challenge's words (cards, history, log): players learn what it does to
#: them, never who it is (as chases say "an unseen pursuer").
UNSEEN = {"attacker": "An unseen attacker", "defender": "An unseen defender"}


def name_of(challenge: Challenge, side: str, *, seen: bool = False) -> str:
    """The side's name as the challenge's words say it: a hidden NPC is unseen there, since
    players read them; ``seen``, its name (the storyteller's board)."""
    participant = _participant(challenge, side)
    if participant is None:
        return "the storyteller"
    if participant.hidden and not seen:
        return UNSEEN.get(side, UNSEEN["attacker"])
    return participant.name


# -- the write skeleton ---------------------------------------------------------------------


def _locked(challenge_id: int, scene: Scene) -> tuple[Scene, Challenge]:
    try:
        scene = lock_open_scene(scene)
    except SceneError as error:
        raise ChallengeError(str(error)) from None
    challenge = (
        Challenge.objects.select_for_update(of=("self",))
        .select_related("attacker__character", "defender__character", "scene")
        .filter(pk=challenge_id, scene=scene)
        .first()
    )
    if challenge is None:
        raise ChallengeError("No such challenge in this scene.")
    return scene, challenge


def _locked_and_claimed(
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    key: str | None,
    payload: dict[str, Any],
    expected_step: int | None,
) -> tuple[Scene, Challenge, bool]:
    """Lock the scene and the challenge, claim the request's key for ``payload`` (about this
    challenge), then check the step the actor saw. True third when it is a replay: the first
    answer stands and nothing is checked again (a double tap counts once)."""
    begun = steps.begin(
        lock=lambda: _locked(challenge.pk, scene),
        by=by,
        action="challenge",
        key=key,
        payload={"challenge": challenge.pk, **payload},
        refusal=ChallengeError,
    )
    if begun.replay:
        return begun.scene, begun.row, True
    if expected_step is not None and begun.row.step != expected_step:
        raise ChallengeError(MOVED_ON)
    return begun.scene, begun.row, False


def _claim(user: AbstractBaseUser, key: str | None, payload: dict[str, Any]) -> bool:
    """Claim the request's key; True when it is a replay (the first answer stands)."""
    if not key:
        return False
    try:
        claim = idempotency_claim(user=user, action="challenge", key=key, payload=payload)
    except IdempotencyError as error:
        raise ChallengeError(str(error)) from None
    return claim.replay


def _without(mapping: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A copy of a challenge's ``options`` or ``sealed`` with ``keys`` taken out."""
    return {k: v for k, v in mapping.items() if k not in keys}


def _note(challenge: Challenge, text: str, *, repeats: str = "") -> None:
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


def _save(
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
    challenge.save()
    hidden = _hidden(challenge)
    players = list(dict.fromkeys([*_players(challenge), *(also or [])]))
    record_change(
        scene,
        by=by,
        kind=LogKind.CHALLENGE,
        text=text,
        public=public and not hidden,
        characters=_characters(challenge),
        data={"challenge": challenge.pk},
        private_user_ids=players,
        # a challenge of hidden NPCs alone is no player's business: no phone counts its steps
        players=not hidden or bool(players),
        # The board's challenge region (the clock and the log go anyway); a cost or a loss
        # pushes the regions that show sheets itself (the ledger announces it on commit).
        regions=CHALLENGE_REGIONS,
    )
    _log_outcome(scene, challenge, by)


def _tell(
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
    ``text``, :func:`_note` on ``repeats``), the scene's log says ``text``; saved and
    announced."""
    _note(challenge, text if history is None else history, repeats=repeats)
    _save(scene, challenge, by, text, public=public, engine=engine, also=also)
    return challenge


def _step_on(
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
    then the timers and, when the engine says it is over, the outcome (:func:`_after_step`);
    saved and announced with ``text``."""
    _note(challenge, text if history is None else history)
    _after_step(challenge, engine, by)
    _save(scene, challenge, by, text, public=public, engine=engine, also=also)
    return challenge


def _hidden(challenge: Challenge) -> bool:
    """A hidden NPC is on a side: no line of the challenge is public."""
    return any(p is not None and p.hidden for p in (challenge.attacker, challenge.defender))


def _log_outcome(scene: Scene, challenge: Challenge, by: AbstractBaseUser) -> None:
    """The outcome, when this step ended the challenge, as lines of its own after the step's
    (same ``seq``): who won and the effect in words for everyone (unless a hidden NPC is in
    it); what the sheets lose (traits, damage) for the players concerned (and the
    storyteller)."""
    lines = getattr(challenge, "_outcome_lines", None)
    if not lines:
        return
    del challenge._outcome_lines
    characters = _characters(challenge)
    for text, public in lines:
        entry = SceneLogEntry.objects.create(
            scene=scene,
            seq=scene.seq,
            game_time=scene.game_time,
            kind=LogKind.CHALLENGE,
            text=one_line(text)[:500],
            public=public and not _hidden(challenge),
            data={"challenge": challenge.pk, "outcome": True},
            created_by=by if by is not None and by.is_authenticated else None,
        )
        if characters:
            entry.characters.set(characters)


def _scene_players(scene: Scene) -> list[int]:
    """Every player with a character in the scene (C16: who may step into a mob)."""
    return list(
        Participant.objects.filter(
            scene=scene, removed_at__isnull=True, npc=False, character__isnull=False
        )
        .values_list("character__player_id", flat=True)
        .distinct()
    )


@contextmanager
def _by_the_rules() -> Iterator[None]:
    """The engine's rules (and the night's locks, C15's Celerity) refuse a step by raising
    :class:`RuleError`: the step is refused with its reason, naming the rule ID."""
    try:
        yield
    except RuleError as error:
        raise ChallengeError(error.reason, error.rule) from None


def _timer_seconds(label: str) -> int:
    """How long the timer a label names runs: a cancel window (C8, W10) is short, an
    answer, a bid or a W8 choice has the longer time."""
    return CANCEL_SECONDS if label.endswith("may cancel") else ANSWER_SECONDS


def _timer(challenge: Challenge, seconds: int, label: str) -> None:
    challenge.timer_label = label
    challenge.deadline = None if challenge.paused else timezone.now() + timedelta(seconds=seconds)


def _clear_timer(challenge: Challenge) -> None:
    challenge.deadline = None
    challenge.timer_label = ""


# -- starting -------------------------------------------------------------------------------


def _locks(scene: Scene) -> Locks:
    rows = ChallengeLock.objects.filter(scene=scene, until__gt=scene.game_time).select_related(
        "attacker", "target"
    )
    return Locks(tuple(Lock(r.attacker.name, r.target.name, r.what, r.until, r.rule) for r in rows))


def _celerity_level(participant: Participant) -> int:
    """C15: the Celerity a sheet has: its highest named level (Alacrity 1 … Fleetness 4),
    else the level of a plain Celerity power, else the number of Celerity powers."""
    if participant.character_id is None:
        return 0
    powers = [p for p in participant.character.powers.all() if "celerity" in p.name.casefold()]
    named = [
        i + 1 for i, n in enumerate(LEVELS) for p in powers if n.casefold() in p.name.casefold()
    ]
    if named:
        return max(named)
    return max((p.level for p in powers), default=0)


def _weapon(participant: Participant, weapon_id: int | None) -> Equipment | None:
    if not weapon_id or participant.character_id is None:
        return None
    weapon = Equipment.objects.filter(
        pk=weapon_id, character_id=participant.character_id, kind=Equipment.Kind.WEAPON
    ).first()
    if weapon is None:
        raise ChallengeError("That weapon is not on the sheet.")
    return weapon


def _check_pool(participant: Participant, attribute: str, skill: str) -> None:
    """B1: a met_bns test pool names an attribute and a skill the sheet has (or Willpower);
    a name it does not have would silently count 0, so it is refused."""
    if not attribute and not skill:
        return
    sheet = sheets.load(participant)
    if attribute and attribute.casefold() not in {a.casefold() for a in sheet.attributes()}:
        raise ChallengeError(f"{participant.name} has no attribute {attribute} on the sheet", "B1")
    known = {a.casefold() for a in sheet.abilities()} | {"willpower"}
    if skill and skill.casefold() not in known:
        raise ChallengeError(f"{participant.name} has no skill {skill} on the sheet", "B1")


def _side_options(data: dict[str, Any]) -> dict[str, Any]:
    keep = ("bid", "ability", "weapon", "attribute", "skill", "bonus", "prone", "effect")
    return {k: data.get(k) for k in keep if data.get(k) not in (None, "")}


def challenge_start(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    attacker: Participant,
    defender: Participant | None = None,
    mode: str = "contested",
    category: str = "",
    bid: str = "",
    ability: str = "",
    what: str = "",
    effect: str = "",
    difficulty: int = 0,
    win_outright: bool = False,
    bid_required: bool = False,
    target_wins: int | None = None,
    race: bool = False,
    ranged: bool = False,
    ranged_far: bool = False,
    surprise: bool = False,
    celerity: int = 0,
    attack: bool = False,
    mind_control: bool = False,
    weapon: int | None = None,
    attribute: str = "",
    skill: str = "",
    bonus: int = 0,
    mob: list[Participant] | None = None,
    mob_side: str = "attacker",
    expected_seq: int | None = None,
    key: str | None = None,
    in_round: bool = False,
    defender_prone: bool | None = None,
    effect_public: bool = False,
) -> Challenge:
    """C1: a player (for their own character) or the storyteller (for an NPC, or a test of a
    player's character from the tablet) starts a challenge. A contested challenge waits for
    the defender's answer; a test against the storyteller (C11, C13, W13, W14) starts at once
    unless the storyteller started it and the player still has to bid.

    ``in_round``: a met_bns round's action opens it (B6); the round's service has checked
    that ``by`` may act for the attacker (the storyteller may act for any character there).
    ``defender_prone``: the defender's prone state in that round (B10), which its pool then
    counts instead of the answer's own "I am prone".
    ``effect_public``: the effect of a test the storyteller sets on a player's character
    reaches every phone; otherwise only that player and the storyteller hear it."""
    as_st = is_storyteller_of_scene(by, scene)
    if mode not in MODES:
        raise ChallengeError(f"Unknown kind of challenge: {mode}.")
    is_player_side = attacker.character_id is not None and not attacker.npc
    if is_player_side and attacker.character.player_id != by.pk and not as_st:
        raise ChallengeError(NOT_YOURS)
    if not is_player_side and not as_st:
        raise ChallengeError(NOT_YOURS)
    if (
        is_player_side
        and attacker.character.player_id != by.pk
        and mode == "contested"
        and not in_round
    ):
        raise ChallengeError("A player starts their own character's contested challenges.")
    if mode == "contested" or race:
        if defender is None and not race:
            raise ChallengeError("Name who you challenge.")
        if defender is not None and defender.pk == attacker.pk:
            raise ChallengeError("A character cannot challenge itself.")
        if (
            defender is not None
            and defender.character_id
            and attacker.character_id
            and not defender.npc
            and defender.character.player_id == attacker.character.player_id
        ):
            raise ChallengeError(OWN_CHARACTER)
    else:
        defender = None
    ruleset = scene.ruleset
    if ruleset == "wod_dice":
        raise ChallengeError("This scene plays wod_dice: challenges are thrown in MET scenes.")
    if ruleset != "met_bns" and mode in {"contested", "static", "extended"} and not category:
        raise ChallengeError("Pick a category (a bid picks it for you).")
    if category and category not in {c.value for c in Category}:
        raise ChallengeError(f"Unknown category {category}.")
    if ruleset == "met_bns" and not category:
        category = (attribute or "physical").casefold()
    with _by_the_rules():
        check_kind(ruleset, mode, race=race, bid_required=bid_required)  # W0: W13, W14
    if mode in {"simple", "difficult"}:
        difficulty = 0  # C13, W14: a throw against the storyteller, no difficulty to show
    if bid_required and not category:
        # W14: the player bids from the category's traits; with none named nothing can be bid
        raise ChallengeError("Pick the category of the bid you require.", "W14")
    with transaction.atomic():
        try:
            scene = lock_open_scene(scene)
        except SceneError as error:
            raise ChallengeError(str(error)) from None
        payload = {"scene": scene.pk, "attacker": attacker.pk, "mode": mode, "bid": bid}
        if _claim(by, key, payload):  # a replay answers as the first did, before any check
            found = Challenge.objects.filter(scene=scene, attacker=attacker).order_by("-pk").first()
            if found is not None:
                return found
        if expected_seq is not None and scene.seq != expected_seq:
            raise ChallengeError(SCENE_STALE)
        for p in (attacker, defender):
            if p is not None and (p.scene_id != scene.pk or p.removed_at is not None):
                raise ChallengeError(NOT_IN_SCENE)
        if ruleset == "met_bns":
            _check_pool(attacker, attribute, skill)
        busy = Challenge.objects.filter(
            scene=scene, status__in=[ChallengeStatus.ANSWER, ChallengeStatus.LIVE]
        ).filter(attacker=attacker)
        if busy.exists():
            raise ChallengeError(f"{attacker.name} is already in an open challenge as attacker.")
        what = (what or category or "").strip()[:120]
        if defender is not None:
            with _by_the_rules():
                _locks(scene).check(
                    attacker=attacker.name, target=defender.name, what=what, now=scene.game_time
                )
        attacker_side = {
            "bid": bid,
            "ability": ability,
            "weapon": weapon,
            "attribute": attribute,
            "skill": skill,
            "bonus": bonus,
            "effect": effect,
        }
        options = {
            "ruleset": ruleset,
            "attacker": _side_options(attacker_side),
            "win_outright": win_outright,
            "bid_required": bid_required,
            "target_wins": target_wins,
            "race": race,
            "ranged": ranged,
            "ranged_far": ranged_far,
            "surprise": surprise,
            "celerity": celerity,
            "attack": attack,
            "mind_control": mind_control,
            # C7: a test the storyteller calls on a player's character is not the character's
            # to initiate (an Incapacitated one still takes it)
            "called": as_st and is_player_side and defender is None,
            # a test's effect the storyteller set is for that player, unless made public
            "effect_private": bool(effect)
            and as_st
            and is_player_side
            and defender is None
            and not effect_public,
        }
        if defender_prone is not None:
            options["round_prone"] = bool(defender_prone)  # B10, from the round's state
        if mob:
            # C16: at most five attackers; every one bids (from its own phone) before the
            # defender answers; the defender is -1 per attacker beyond the first.
            # The same holds for up to five defenders against one (mob_side "defender").
            if mode != "contested" or defender is None:
                raise ChallengeError("A mob attacks one character in a contested challenge.", "C16")
            if mob_side not in ("attacker", "defender"):
                raise ChallengeError("A mob attacks or defends.", "C16")
            if len(mob) + 1 > MOB_MOST:
                raise ChallengeError(f"At most {MOB_MOST} can act together as a mob.", "C16")
            for member in mob:
                if member.pk in {attacker.pk, defender.pk} or member.scene_id != scene.pk:
                    raise ChallengeError("A mob member is another character of this scene.", "C16")
            options["mob"] = {str(m.pk): {} for m in mob}
            options["mob_side"] = mob_side
        level = _celerity_level(attacker) if celerity else 0
        if celerity:
            with _by_the_rules():
                CelerityRound().announce(attacker.name, level=level, follow_ups=celerity)
        challenge = Challenge.objects.create(
            scene=scene,
            attacker=attacker,
            defender=defender,
            mode=mode,
            category=category,
            what=what,
            attacker_effect=effect[:300],
            difficulty=difficulty,
            options=options,
            created_by=by,
        )
        if celerity and attacker.character_id is not None:
            # C15: blood for announced Celerity actions is spent now, used or not.
            _ledger(
                challenge,
                attacker.character,
                by,
                kind=LedgerKind.BLOOD_SPENT,
                amount=celerity,
                reason=f"{celerity} Celerity follow-up(s) announced (C15)",
                rule="C15",
            )
        awaiting = None
        if defender is not None and mode in {"contested", "extended"}:
            awaiting = "mob" if mob else "defender"
        elif (
            as_st
            and is_player_side
            and ruleset != "met_bns"
            and not bid
            and (mode in {"static", "extended"} or bid_required)
        ):
            awaiting = "attacker"  # the storyteller called a test: the player bids
        attacker_name = UNSEEN["attacker"] if attacker.hidden else attacker.name
        against = defender.name if defender is not None else "the storyteller"
        if defender is not None and defender.hidden:
            against = UNSEEN["defender"]
        label = category or mode
        head = f"{attacker_name} challenges {against}"
        if mode != "contested":
            head = f"{attacker_name}: {mode} test against {against}"
        if celerity:
            head += f" (C15: {celerity} Celerity follow-up(s) announced up front)"
        _note(challenge, f"{head} · {label}" + (f" · {effect}" if effect else ""))
        if awaiting in {"defender", "mob"} and not mob:
            # C1, C7, W6: the attacker's side is checked now; W6: a defender with nothing
            # left in the category loses at once, losing nothing.
            probe = _build(challenge, {**options, "defender": {}})
            if probe.phase is Phase.OVER:
                challenge.status = ChallengeStatus.LIVE
                return _step_on(
                    scene,
                    challenge,
                    by,
                    f"{head} ({label})",
                    engine=probe,
                    history=f"{defender.name} has no {category} traits left (W6)",
                    public=True,
                )
        if awaiting:
            challenge.options = {**options, "awaiting": awaiting}
            challenge.status = ChallengeStatus.ANSWER
            label = (
                "the mob to bid (C16)"
                if awaiting == "mob"
                else f"{name_of(challenge, awaiting)} to answer"
            )
            _timer(challenge, ANSWER_SECONDS, label)
            _save(scene, challenge, by, f"{head} ({label})", public=True)
            return challenge
        engine = _build(challenge, challenge.options)
        challenge.status = ChallengeStatus.LIVE
        _after_step(challenge, engine, by)
        _save(scene, challenge, by, f"{head} ({label})", public=True, engine=engine)
        return challenge


BLOOD_LASTS = 300  # C5: game seconds blood traits last after the conflict's last challenge


def blood_kept(challenge: Challenge, participant: Participant) -> int:
    """C5: blood traits a participant bought earlier in this conflict that still last: those
    it held in its latest finished challenge of the scene, when that ended less than five
    game minutes ago (each challenge they last through moves the end on)."""
    if challenge.category != "physical" or participant.character_id is None:
        return 0
    scene = challenge.scene
    earlier = (
        Challenge.objects.filter(scene=scene, status=ChallengeStatus.OVER)
        .exclude(pk=challenge.pk)
        .order_by("-pk")
    )
    for row in earlier:
        held = row.options.get("blood_traits", {}).get(str(participant.pk))
        if held is None:
            continue
        return held if row.options.get("blood_until", -1) >= scene.game_time else 0
    return 0


def is_surprised(options: dict[str, Any], defender: sheets.Sheet) -> bool:
    """C12: the attacker said so (from behind, Unseen Presence…); C7: opponents of an
    Incapacitated character normally have surprise. The storyteller's call, once given
    (Heightened Senses or Telepathy may prevent it, C12), stands over both."""
    ruling = options.get("surprise_ruling")
    if ruling is not None:
        return bool(ruling)
    return bool(options.get("surprise")) or defender.health().down


def is_outpaced(options: dict[str, Any], defender: sheets.Sheet) -> bool:
    """C15: the target of Celerity actions it cannot match."""
    return bool(options.get("celerity")) and not defender.has_power("Celerity")


def _build(challenge: Challenge, options: dict[str, Any]) -> Engine:
    """Start the engine from both sides' sheets as they are now (C1 and the checks of start)."""
    ruleset = options["ruleset"]
    category = challenge.category
    a_opts = options.get("attacker", {})
    d_opts = options.get("defender", {})
    a_sheet = sheets.load(challenge.attacker)
    d_sheet = sheets.load(challenge.defender) if challenge.defender else None
    mode = challenge.mode
    surprised = d_sheet is not None and is_surprised(options, d_sheet)
    outpaced = d_sheet is not None and is_outpaced(options, d_sheet)
    ruling = options.get("stamina_ruling")

    def pool(sheet: sheets.Sheet | None, opts: dict[str, Any], prone: int = 0) -> int:
        if ruleset != "met_bns" or sheet is None:
            return 0
        weapon = _weapon(sheet.participant, opts.get("weapon"))
        return sheets.bns_pool(
            sheet,
            attribute=opts.get("attribute") or category,
            skill=opts.get("skill", ""),
            bonus=int(opts.get("bonus") or 0),
            weapon_bonus=weapon.bonus_traits if weapon else 0,
            prone=prone,
        )

    attacker = sheets.contender(
        a_sheet,
        ruleset=ruleset,
        category=category,
        bid=a_opts.get("bid"),
        ability=a_opts.get("ability"),
        weapon=_weapon(challenge.attacker, a_opts.get("weapon")),
        pool=pool(a_sheet, a_opts),
        opponent=d_sheet,
        blood_kept=blood_kept(challenge, challenge.attacker),
    )
    defender = None
    if d_sheet is not None:
        prone = sheets.prone_modifier(
            prone=bool(options["round_prone"] if "round_prone" in options else d_opts.get("prone")),
            category=category,
            ranged_far=bool(options.get("ranged") and options.get("ranged_far")),
        )
        defender = sheets.contender(
            d_sheet,
            ruleset=ruleset,
            category=category,
            bid=d_opts.get("bid"),
            ability=d_opts.get("ability"),
            weapon=_weapon(challenge.defender, d_opts.get("weapon")),
            surprised=surprised,
            outpaced=outpaced,
            stamina_ruling=ruling,
            pool=pool(d_sheet, d_opts, prone),
            opponent=a_sheet,
            blood_kept=blood_kept(challenge, challenge.defender),
        )
    elif options.get("race"):
        from combat.rules.challenge import Contender

        defender = Contender(traits=challenge.difficulty, pool=challenge.difficulty)
    mob = []
    for member in mob_members(challenge):
        bid = options.get("mob", {}).get(str(member.pk), {}).get("bid")
        mob.append(
            (
                member.name,
                sheets.contender(sheets.load(member), ruleset=ruleset, category=category, bid=bid),
            )
        )
    with _by_the_rules():
        return Engine.start(
            ruleset=ruleset,
            mode=mode,
            category=category or None,
            attacker=attacker,
            defender=defender,
            difficulty=challenge.difficulty,
            mind_control=bool(options.get("mind_control")),
            win_outright=bool(options.get("win_outright")),
            target_wins=options.get("target_wins"),
            race=bool(options.get("race")),
            options=challenge.scene.chronicle.options,
            path=challenge.what,
            ranged=bool(options.get("ranged")),
            counterattack=bool(d_opts.get("counterattack")),
            bid_required=bool(options.get("bid_required")),
            called=bool(options.get("called")),
            mob=mob,
            mob_side=options.get("mob_side", "attacker"),
        )


# -- player steps ---------------------------------------------------------------------------


def _act(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    expected_step: int | None,
    key: str | None,
    payload: dict[str, Any],
    as_st: bool = False,
) -> tuple[Scene, Challenge, bool]:
    """Lock, check the step and the actor's right to the side, claim the key."""
    if side not in ("attacker", "defender"):
        raise ChallengeError(NOT_YOURS)
    if as_st and not is_storyteller_of_scene(by, scene):
        raise ChallengeError(NOT_ST)
    scene, locked, replay = _locked_and_claimed(
        scene, challenge, by, key, {"side": side, **payload}, expected_step
    )
    if replay:
        return scene, locked, True
    if side not in sides_for(locked, by, as_st=as_st):
        raise ChallengeError(NOT_YOURS)
    if not locked.is_open:
        raise ChallengeError(CLOSED)
    return scene, locked, False


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
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C1: the side asked to answer bids from its current traits, relents (C2, W5: nobody
    loses a trait) or has nothing to bid (C1: the attacker's effect happens, no test)."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"answer": answer, "bid": bid, "ability": ability},
            as_st=as_st,
        )
        if replay:
            return ch
        if ch.status != ChallengeStatus.ANSWER or ch.options.get("awaiting") != side:
            raise ChallengeError("No answer is asked of you now.")
        who = name_of(ch, side)
        options = dict(ch.options)
        options.pop("awaiting", None)
        if answer in {"relent", "no_bid"}:
            engine = _build_for_answer(ch, options, side)
            with _by_the_rules():
                engine = engine.relent(side) if answer == "relent" else engine.no_bid()
            text = (
                f"{who} relents: nobody loses a trait"
                if answer == "relent"
                else f"{who} has nothing to bid: the effect happens, no test"
            )
            ch.options = options
            ch.status = ChallengeStatus.LIVE
            rule = "W5" if scene.ruleset == "met_werewolf" else "C2" if answer == "relent" else "C1"
            return _step_on(
                scene, ch, by, text, engine=engine, history=f"{text} ({rule})", public=True
            )
        if answer != "bid":
            raise ChallengeError("Answer with a bid, relent, or nothing to bid.")
        if scene.ruleset == "met_bns":
            _check_pool(_participant(ch, side), attribute, skill)
        side_opts = _side_options(
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
        engine = _build(ch, options)
        ch.options = options
        ch.status = ChallengeStatus.LIVE
        _clear_timer(ch)
        shown = bid or (attribute and f"{attribute} pool") or ch.category
        said = f"{who} bids {shown}" + (f" · {effect}" if effect else "")
        return _step_on(scene, ch, by, f"{who} answers with {shown}", engine=engine, history=said)


def _build_for_answer(ch: Challenge, options: dict[str, Any], side: str) -> Engine:
    """The engine for a relent or no-bid answer: the answering side has no bid (yet)."""
    return _build(ch, {**options, side: {}})


def _require_live(ch: Challenge) -> Engine:
    if ch.status != ChallengeStatus.LIVE:
        raise ChallengeError("The challenge is waiting for an answer first.", "C1")
    engine = engine_of(ch)
    assert engine is not None
    if engine.phase is Phase.OVER:
        raise ChallengeError(CLOSED)
    return engine


def round_of(engine: Engine | None) -> str:
    """Which throw a sealed throw or total belongs to: a late one from an earlier round is
    refused (both sides throw at the same step, so the step itself cannot be asked)."""
    if engine is None:
        return ""
    return f"{engine.throws}.{len(engine.used)}.{len(engine.spent)}.{engine.phase.value}"


def _require_throw_called(engine: Engine) -> None:
    """C3: a throw (or a result by hand) counts only when the engine calls for one."""
    if engine.phase is not Phase.THROWS:
        raise ChallengeError("No throw is called for right now.", "C3")


def _check_round(engine: Engine, expected_round: str | None) -> None:
    if expected_round is not None and expected_round != round_of(engine):
        raise ChallengeError(MOVED_ON)


def challenge_throw(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    throw: str,
    expected_round: str | None = None,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
    rng: Any = None,
) -> Challenge:
    """C3: a sealed throw. The other side and the storyteller see only "locked in"; the
    thrower may change it until the other side locks in; both are revealed together."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=None,
            key=key,
            payload={"throw": throw},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        _check_round(engine, expected_round)
        _require_throw_called(engine)
        if not engine.throws and engine.must_drop_out():
            out = ", ".join(engine.must_drop_out())
            raise ChallengeError(f"{out} must drop out before the first throw.", "C16")
        if throw == "random":
            throw = (rng or secrets.SystemRandom()).choice(THROWS)
        with _by_the_rules():
            Throw.parse(throw)
        sealed = dict(ch.sealed.get("throw", {}))
        changed = side in sealed
        sealed[side] = throw
        who = name_of(ch, side)
        if len(sealed) < 2:
            ch.sealed = {**ch.sealed, "throw": sealed}
            text = f"{who} changed the throw (locked in)" if changed else f"{who} is locked in"
            _save(scene, ch, by, text)
            return ch
        ch.sealed = _without(ch.sealed, "throw")
        return _reveal(scene, ch, engine, by, sealed["attacker"], sealed["defender"])


def _reveal(
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
    with _by_the_rules():
        engine = engine.throw_both(a, d)
    a_name, d_name = name_of(ch, "attacker"), name_of(ch, "defender")
    text = said or f"Throws: {a_name} {a}, {d_name} {d}"
    text += " — " + _standing(ch, before, engine) + _wounded_draw(ch, before, a, d)
    ch.options = _without(ch.options, "by_hand")
    # C16: the first throw closes a place left by a drop-out: the offers go from every phone
    offered = ch.options.get("mob_dropped") and not before.throws
    return _step_on(
        scene, ch, by, text, engine=engine, also=_scene_players(scene) if offered else None
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


def _standing(ch: Challenge, before: Engine, engine: Engine) -> str:
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


BY_HAND = {  # C3: the pair of throws a result thrown by hand stands for
    "attacker": ("rock", "scissors"),
    "defender": ("scissors", "rock"),
    "draw": ("rock", "rock"),
}


def by_hand_words(ch: Challenge, result: str) -> str:
    return "a draw" if result == "draw" else f"{name_of(ch, result)} won"


def by_hand_pending(ch: Challenge, engine: Engine | None) -> dict[str, str] | None:
    """The result by hand one side recorded for this throw, waiting for the other side (or
    the storyteller) to confirm it; ``None`` when none (or one for an earlier throw)."""
    pending = ch.options.get("by_hand")
    if not pending or engine is None or pending.get("round") != round_of(engine):
        return None
    return pending


def challenge_by_hand(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    result: str,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C3: a pair that threw by hand records the result instead (attacker, defender, draw).
    One side records it; it counts when the other side confirms the same result (or the
    storyteller does, :func:`challenge_st` ``by_hand``). A different result from the other
    side replaces it and waits in turn. The history and the log say "by hand", no throws."""
    if result not in BY_HAND:
        raise ChallengeError("A result by hand is a win for one side or a draw.", "C3")
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"by_hand": result},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        _require_throw_called(engine)
        who, other = name_of(ch, side), Side(side).other.value
        words = by_hand_words(ch, result)
        pending = by_hand_pending(ch, engine)
        # the storyteller playing both sides (NPC against NPC) has nobody to wait for
        alone = as_st and other in sides_for(ch, by, as_st=True)
        if alone or (pending and pending["side"] == other and pending["result"] == result):
            how = f"recorded by {who}" if alone else f"recorded by {name_of(ch, other)}"
            if not alone:
                how += f", confirmed by {who}"
            return _by_hand(scene, ch, engine, by, result, how)
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
        return _tell(scene, ch, by, text)


def _by_hand(scene, ch, engine, by, result: str, how: str) -> Challenge:
    """C3: the result by hand counts: the engine steps as if the throws had been made."""
    ch.sealed = _without(ch.sealed, "throw")
    said = f"By hand: {by_hand_words(ch, result)} ({how})"
    return _reveal(scene, ch, engine, by, *BY_HAND[result], said=said)


def challenge_declare(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    total: int,
    expected_round: str | None = None,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C4 (W3): after a draw each side declares its total (at most its own, under-declaring
    allowed), sealed until both are in; the server compares them."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=None,
            key=key,
            payload={"declare": total},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        _check_round(engine, expected_round)
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
            _save(scene, ch, by, f"{who} declared a total (sealed)")
            return ch
        ch.sealed = _without(ch.sealed, "declare")
        before = engine
        with _by_the_rules():
            engine = engine.declare(sealed["attacker"], sealed.get("defender"))
        shown = f"{name_of(ch, 'attacker')} {sealed['attacker']}"
        shown += (
            f", {name_of(ch, 'defender')} {sealed['defender']}"
            if "defender" in sealed
            else f" against difficulty {engine.difficulty}"
        )
        text = f"Totals: {shown} — {_standing(ch, before, engine)}"
        return _step_on(scene, ch, by, text, engine=engine)


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
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C8-C10, C6, W10-W12, B2: the losing side calls a retest; the first tap claims it and
    the other phone says who is retesting. Costs go through the ledger at once. An overbid's
    announced total stays on the server: only whether it succeeded is revealed."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={
                "retest": kind,
                "ability": ability,
                "power": power,
                "trait": trait,
                "declared": declared,
            },
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        try:
            kind_enum = RetestKind(kind)
        except ValueError:
            raise ChallengeError(f"Unknown retest {kind}.") from None
        contender = engine.side(Side(side))
        opposing = None
        other = Side(side).other
        if engine.defender is not None:
            opposing = engine.side(other).ability
        if kind_enum is RetestKind.ABILITY and not ability:
            ability = contender.ability or ""
        before = engine
        with _by_the_rules():
            engine = engine.retest(
                side,
                kind_enum,
                ability=ability or None,
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
            what = ability if kind_enum is RetestKind.ABILITY else power or kind
            text = (
                f"{who} retests with {kind_enum.value}"
                + (f" ({what})" if what and what != kind else "")
                + f" ({rule})"
            )
        _spend(ch, before, engine, by, side_name=who)
        if (
            engine.phase is Phase.THROWS
            and engine.announced is not None
            and engine.announced.kind in {RetestKind.ABILITY, RetestKind.POWER}
            and engine.defender is not None
            and _may_cancel(ch, engine, other)
        ):
            _timer(ch, CANCEL_SECONDS, f"{name_of(ch, other.value)} may cancel")
        return _step_on(scene, ch, by, text, engine=engine)


def _may_cancel(ch: Challenge, engine: Engine, side: Side) -> bool:
    """C8, W10: a cancel window is timed only for a side with the means to cancel (an ability
    point, the same power): to anyone else "may cancel" would be a wait for nothing."""
    from combat.challenges.selectors import cancel_choices  # selectors read this module

    if (ch.attacker if side is Side.ATTACKER else ch.defender) is None:
        return False
    choices = cancel_choices(ch, engine, side)
    return bool(choices["abilities"] or choices["powers"])


def challenge_cancel(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    ability: str = "",
    power: str = "",
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """W10: cross off a point of an opposing ability to cancel an ability retest; C8: an
    identical power cancels a power retest. The loss stands."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"cancel": ability or power},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        if ch.sealed.get("throw"):
            raise ChallengeError(
                "A throw is already in: the retest can no longer be cancelled.", "C8"
            )
        before = engine
        with _by_the_rules():
            engine = engine.cancel(side, ability=ability or None, power=power or None)
        who = name_of(ch, side)
        rule = "W10" if ability else "C8"
        text = f"{who} cancels the retest with {ability or power}: the loss stands ({rule})"
        _spend(ch, before, engine, by, side_name=who)
        _clear_timer(ch)
        return _step_on(scene, ch, by, text, engine=engine)


def challenge_accept(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C3: the losing side takes the result (no further retest). W13: in an extended
    challenge the throw counts and the next one follows."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"accept": True},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        if engine.leader is None or engine.leader.value == side:
            raise ChallengeError("Only the side that is losing takes the result.", "C3")
        before = engine
        with _by_the_rules():
            engine = engine.accept()
        text = f"{name_of(ch, side)} takes the result — {_standing(ch, before, engine)}"
        return _step_on(scene, ch, by, text, engine=engine)


def challenge_relent(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C2 (W5): either side relents before the first throw; nobody loses a trait."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"relent": True},
            as_st=as_st,
        )
        if replay:
            return ch
        if ch.status == ChallengeStatus.ANSWER:
            engine = _before_the_answer(ch, side)
        else:
            engine = _require_live(ch)
        with _by_the_rules():
            engine = engine.relent(side)
        ch.sealed = {}
        text = f"{name_of(ch, side)} relents: nobody loses a trait"
        return _step_on(scene, ch, by, text, engine=engine, public=True)


def _before_the_answer(ch: Challenge, side: str) -> Engine:
    """C2, W5: the attacker relents while it waits for the defender's answer: the engine
    starts with the defender's bid unsaid (the defender itself answers with Relent)."""
    awaiting = ch.options.get("awaiting")
    if awaiting == side or awaiting != "defender":
        raise ChallengeError("Answer the challenge with Relent.")
    options = {k: v for k, v in ch.options.items() if k != "awaiting"}
    engine = _build_for_answer(ch, options, awaiting)
    ch.options = options
    ch.status = ChallengeStatus.LIVE
    _clear_timer(ch)
    return engine


# -- after each step: costs, the end and its ledger ------------------------------------------


def _ledger_character(ch: Challenge, side: str):
    participant = _participant(ch, side)
    if participant is None or participant.character_id is None:
        return None
    return participant.character


def _spend(
    ch: Challenge, before: Engine, after: Engine, by: AbstractBaseUser, *, side_name: str
) -> None:
    """Costs the step added (willpower, ability points, W11's trait crossed off at once)."""
    new_spent = list(after.spent[len(before.spent) :])
    new_lost = list(after.lost_now[len(before.lost_now) :])
    for who, resource, amount in new_spent:
        character = _ledger_character(ch, who)
        if character is None:
            continue
        if resource in {"willpower", "rage", "gnosis"}:
            kind = {
                "willpower": LedgerKind.WILLPOWER_SPENT,
                "rage": LedgerKind.RAGE_SPENT,
                "gnosis": LedgerKind.GNOSIS_SPENT,
            }[resource]
            _ledger(ch, character, by, kind=kind, amount=amount, reason="retest", rule="C10")
        else:
            _ledger(
                ch,
                character,
                by,
                kind=LedgerKind.ABILITY_SPENT,
                subject=resource,
                amount=amount,
                reason="ability point",
                rule="W10",
            )
    for who, trait in new_lost:
        _lose(ch, who, trait, by, reason="failed overbid (W11)")


def _ledger(ch: Challenge, character, by, *, rule: str, reason: str, **fields: Any) -> None:
    try:
        ledger_spend(
            character=character,
            by=by,
            reason=f"{ch.what or ch.category} challenge: {reason}",
            source=ch.source,
            **fields,
        )
    except LedgerError as error:
        raise ChallengeError(str(error), error.rule_id or rule) from None


def _lose(ch: Challenge, side: str, trait: str, by, *, reason: str) -> None:
    character = _ledger_character(ch, side)
    if character is None:
        return
    if trait == CHOICE:
        # W8: which trait goes is the loser's pick, made on its own phone (or by the
        # storyteller for an absent player); the ledger entry lands when it is chosen.
        ch.options = {**ch.options, "choose": [*ch.options.get("choose", []), side]}
        if ch.status != ChallengeStatus.OVER:  # at the end, the outcome's line says it first
            _note_choosing(ch, side)
        return
    _cross_off(ch, character, by, trait, reason=reason, rule="C3")


def _cross_off(ch: Challenge, character, by, trait: str, *, reason: str, rule: str) -> None:
    """C3: one trait of the challenge's category crossed off the sheet through the ledger
    (a lost bid; C16 a mob member's; W8 the loser's pick)."""
    _ledger(
        ch,
        character,
        by,
        kind=LedgerKind.TRAIT_LOST,
        subject=trait,
        category=ch.category,
        amount=1,
        reason=reason,
        rule=rule,
    )


def _note_choosing(ch: Challenge, side: str) -> None:
    """W8: the history says which side picks the trait it crosses off."""
    _note(ch, f"{name_of(ch, side)} chooses a {ch.category} trait to cross off (W8)")


def _choice_timer(ch: Challenge, side: str) -> None:
    """W8: the answer's time for ``side`` to pick the trait it crosses off."""
    _timer(ch, ANSWER_SECONDS, f"{name_of(ch, side)} to choose a trait (W8)")


def _after_step(ch: Challenge, engine: Engine, by: AbstractBaseUser) -> None:
    """Timers and, when the engine says the challenge is over, its outcome."""
    no_retest_waiting = engine.phase is not Phase.THROWS or engine.announced is None
    if no_retest_waiting and ch.timer_label.endswith("may cancel"):
        _clear_timer(ch)
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
    _clear_timer(ch)
    lost = engine.lost()
    already = {(who, t) for who, t in engine.lost_now}
    for side, traits in lost.items():
        remaining = list(traits)
        for who, t in engine.lost_now:  # crossed off at once already (W11)
            if who == side and t in remaining:
                remaining.remove(t)
        for trait in remaining:
            _lose(ch, side, trait, by, reason="lost the challenge")
    del already
    members = {m.name: m for m in mob_members(ch)}
    for name, bids in engine.mob_lost().items():  # C16: the defender won: every bid is lost
        member = members.get(name)
        if member is None or member.character_id is None:
            continue  # the primary's bid is in lost() already; quick NPCs have no sheet
        for trait in bids:
            _cross_off(ch, member.character, by, trait, reason="the mob lost (C16)", rule="C16")
    damage_text = ""
    # B3: the attacker's blow lands when it wins; a winning defender deals damage only
    # with a counterattack it could make (C14) and may (C12).
    strikes = winner == "attacker" or (
        winner == "defender" and ch.options.get("defender", {}).get("counterattack")
    )
    if ch.options.get("attack") and strikes and engine.defender and engine.harms(Side(winner)):
        amount = engine.damage()
        loser = Side(winner).other.value
        target = _ledger_character(ch, loser)
        if amount and target is not None:
            _ledger(
                ch,
                target,
                by,
                kind=LedgerKind.HEALTH_DAMAGE,
                amount=amount,
                reason=f"damage from {name_of(ch, winner)} (B3)",
                rule="B3",
            )
        if amount:
            damage_text = f"; {name_of(ch, loser)} takes {amount} damage (B3)"
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
    _note(ch, text)
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
            _note_choosing(ch, side)
        _choice_timer(ch, choosing[0])
    if ch.defender is not None and how not in {"relent", "no bid", "running out"}:
        scene = ch.scene
        locks = _locks(scene)
        try:
            after = locks.after(
                engine,
                attacker=ch.attacker.name,
                target=ch.defender.name,
                now=scene.game_time,
                what=ch.what or ch.category,
            )
        except RuleError:
            after = locks
        for lock in after.held:
            if lock not in locks.held:
                ChallengeLock.objects.create(
                    scene=scene,
                    challenge=ch,
                    attacker=ch.attacker,
                    target=ch.defender,
                    what=lock.what,
                    until=lock.until,
                    rule=lock.rule,
                )
                _note(
                    ch,
                    f"{ch.attacker.name} may not use {lock.what} on {ch.defender.name} for "
                    f"{(lock.until - scene.game_time) // 60} game minutes ({lock.rule})",
                )


# -- the storyteller ------------------------------------------------------------------------


def challenge_st(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    action: str,
    seconds: int = 0,
    side: str = "",
    text: str = "",
    expected_step: int | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Challenge:
    """The storyteller's calls: add time, pause/resume, force a step (random throws for
    whoever has not thrown, full totals, take the result), deny or allow a retest, rule a
    dispute, set a winner, void (reversing the challenge's ledger entries with a reason)."""
    if not is_storyteller_of_scene(by, scene):
        raise ChallengeError(NOT_ST)
    with transaction.atomic():
        scene, ch, replay = _locked_and_claimed(
            scene, challenge, by, key, {"st": action, "side": side, "text": text}, expected_step
        )
        if replay:
            return ch
        handler = _ST_ACTIONS.get(action)
        if handler is None:
            raise ChallengeError(f"Unknown storyteller action {action}.")
        handler(scene, ch, by, seconds=seconds, side=side, text=text, rng=rng)
        return ch


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
            f"({_timer_seconds(ch.timer_label)}s)."
            if ch.timer_label
            else "The challenge is paused and no timer is set."
        )
    if not ch.timer_label or ch.deadline is None:
        raise ChallengeError("No timer is running: there is nothing to add time to.")
    base = max(ch.deadline, timezone.now())
    ch.deadline = base + timedelta(seconds=seconds)
    text = f"The storyteller adds {seconds}s to the timer ({ch.timer_label})"
    _tell(scene, ch, by, text)


def _st_pause(scene, ch, by, **_):
    """Pause the timer (or the challenge's pace, when none runs); a resume starts the timer
    afresh at its own length (a cancel window's 30 seconds, an answer's 90)."""
    _require_timer_kept(ch)
    ch.paused = not ch.paused
    if ch.paused:
        ch.deadline = None
        text = "Paused by the storyteller" + (f" ({ch.timer_label})" if ch.timer_label else "")
    elif ch.timer_label:
        seconds = _timer_seconds(ch.timer_label)
        _timer(ch, seconds, ch.timer_label)
        text = f"Resumed by the storyteller: {ch.timer_label}, {seconds}s afresh"
    else:
        text = "Resumed by the storyteller"
    _tell(scene, ch, by, text)


def unanswered(ch: Challenge) -> list[Participant]:
    """C16: the mob's members who have not bid yet (while the mob forms)."""
    pending = {pk for pk, answer in ch.options.get("mob", {}).items() if not answer}
    return [m for m in mob_members(ch) if str(m.pk) in pending]


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
        text = _keep_out(ch, options) + _mob_formed(ch, options)
        ch.options = options
        _tell(scene, ch, by, text)
        return
    if awaiting != "defender":
        raise ChallengeError(
            f"Only {name_of(ch, awaiting or 'attacker')} bids for their test: add time, set a "
            "winner or void.",
            "C1",
        )
    who = name_of(ch, "defender")
    options.pop("awaiting", None)
    engine = _build_for_answer(ch, options, "defender")
    with _by_the_rules():
        engine = engine.no_bid()
    ch.options = options
    ch.status = ChallengeStatus.LIVE
    _clear_timer(ch)
    text = f"{who} did not answer: no bid, the effect happens, no test (C1; the storyteller's call)"
    _step_on(scene, ch, by, text, engine=engine, public=True)


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
    engine = _build(ch, {**options, **unasked, "bid_required": False})
    ch.status = ChallengeStatus.LIVE
    for text in notes:
        if text:
            _note(ch, text)
    return engine


def _st_force(scene, ch, by, *, rng=None, **_):
    """Force the step that is waiting: the answer (see :func:`_force_answer`); random throws
    for whoever has not thrown; full totals for whoever has not declared; the loser takes
    the result."""
    if ch.status == ChallengeStatus.ANSWER:
        _force_answer(scene, ch, by)
        return
    engine = _require_live(ch)
    if engine.phase is Phase.THROWS:
        sealed = dict(ch.sealed.get("throw", {}))
        rand = rng or secrets.SystemRandom()
        for s in ("attacker", "defender"):
            sealed.setdefault(s, rand.choice(THROWS))
        ch.sealed = _without(ch.sealed, "throw")
        _note(ch, "The storyteller forced the throws (random for whoever had not thrown)")
        _reveal(scene, ch, engine, by, sealed["attacker"], sealed["defender"])
        return
    if engine.phase is Phase.DECLARATIONS:
        sealed = dict(ch.sealed.get("declare", {}))
        sealed.setdefault("attacker", engine.total(Side.ATTACKER))
        if engine.defender is not None:
            sealed.setdefault("defender", engine.total(Side.DEFENDER))
        ch.sealed = _without(ch.sealed, "declare")
        before = engine
        engine = engine.declare(sealed["attacker"], sealed.get("defender"))
        text = (
            f"The storyteller forced the totals: {sealed['attacker']}"
            + (f" against {sealed['defender']}" if "defender" in sealed else "")
            + f" — {_standing(ch, before, engine)}"
        )
        _step_on(scene, ch, by, text, engine=engine)
        return
    before = engine
    engine = engine.accept()
    text = f"The storyteller closes the retests — {_standing(ch, before, engine)}"
    _step_on(scene, ch, by, text, engine=engine)


def _st_deny(scene, ch, by, *, text="", **_):
    """Deny the retest just called: back to before it; its costs are reversed."""
    engine = _require_live(ch)
    snapshot = ch.options.get("before_retest")
    if not snapshot or engine.announced is None or ch.sealed.get("throw"):
        raise ChallengeError("There is no retest waiting for its throw to deny.")
    restored = Engine.from_dict(snapshot)
    reason = text or "retest denied by the storyteller"
    _reverse_since(ch, restored, engine, by, reason)
    ch.options = _without(ch.options, "before_retest")
    _clear_timer(ch)
    history = f"The storyteller denies the retest: {reason}"
    _tell(scene, ch, by, f"Retest denied: {reason}", history=history, engine=restored)


def _reverse_since(ch, restored: Engine, engine: Engine, by, reason: str) -> None:
    """Reverse the ledger entries the denied retest wrote (the newest of this challenge)."""
    count = len(engine.spent) - len(restored.spent) + len(engine.lost_now) - len(restored.lost_now)
    if count <= 0:
        return
    entries = LedgerEntry.objects.filter(source=ch.source, reverses__isnull=True).order_by("-pk")
    for entry in list(entries)[:count]:
        ledger_reverse(entry=entry, by=by, reason=reason)


def _st_allow(scene, ch, by, **_):
    _require_live(ch)
    ch.options = _without(ch.options, "before_retest", "dispute")
    _tell(scene, ch, by, "Retest allowed", history="The storyteller allows the retest")


def _st_rule(scene, ch, by, *, text="", **_):
    if not text.strip():
        raise ChallengeError("Write the ruling.")
    ch.options = _without(ch.options, "dispute")
    ruling = text.strip()[:200]
    _tell(
        scene, ch, by, f"Ruling: {ruling}", history=f"Storyteller's ruling: {ruling}", public=True
    )


def _st_stamina(scene, ch, by, *, side="", **_):
    """C12, C15: the storyteller says whether the defender's bid is Stamina-based."""
    if ch.status != ChallengeStatus.ANSWER:
        raise ChallengeError("The ruling is given before the defender's bid.", "C12")
    ch.options = {**ch.options, "stamina_ruling": side == "yes"}
    history = f"Storyteller: Stamina-based bids {'yes' if side == 'yes' else 'no'} (C12)"
    _tell(scene, ch, by, "Stamina ruling given", history=history)


def _st_surprise(scene, ch, by, *, side="", **_):
    """C12: the storyteller's call on whether the defender is surprised (Heightened Senses
    or Telepathy may prevent it), given before the defender's bid."""
    if ch.status != ChallengeStatus.ANSWER or ch.defender is None:
        raise ChallengeError("Surprise is ruled on before the defender's bid.", "C12")
    if side not in ("yes", "no"):
        raise ChallengeError("Say whether the defender is surprised.", "C12")
    ch.options = {**ch.options, "surprise_ruling": side == "yes"}
    said = f"{name_of(ch, 'defender')} is {'' if side == 'yes' else 'not '}surprised"
    _tell(scene, ch, by, f"Storyteller: {said} (C12)")


def _st_winner(scene, ch, by, *, side="", text="", **_):
    """The storyteller sets the winner, at any step of an open challenge: also one still
    waiting for an answer that never comes (the side asked has bid nothing to lose)."""
    if side not in ("attacker", "defender"):
        raise ChallengeError("Pick the winning side.")
    waiting = ch.status == ChallengeStatus.ANSWER
    engine = _engine_unanswered(ch) if waiting else _require_live(ch)
    if engine.defender is None and side == "defender":
        engine = replace(engine, phase=Phase.OVER, leader=Side.DEFENDER, decided_by="storyteller")
    else:
        engine = replace(
            engine, phase=Phase.OVER, leader=Side(side), pending=(), decided_by="storyteller"
        )
    ch.sealed = {}
    winner = name_of(ch, side)
    _step_on(
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
    ch.options = _without(ch.options, "choose")
    ch.status = ChallengeStatus.VOID
    ch.void_reason = reason[:300]
    ch.sealed = {}
    _clear_timer(ch)
    said = f"{reason} ({reversed_count} sheet entries reversed)"
    _tell(
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
    engine = _require_live(ch)
    _require_throw_called(engine)
    if side not in BY_HAND:
        raise ChallengeError("A result by hand is a win for one side or a draw.", "C3")
    pending = by_hand_pending(ch, engine)
    how = (
        f"recorded by {name_of(ch, pending['side'])}, confirmed by the storyteller"
        if pending and pending["result"] == side
        else "the storyteller's call"
    )
    _by_hand(scene, ch, engine, by, side, how)


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


def challenge_dispute(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    text: str = "",
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """Either side calls the storyteller (always reachable); the board shows the call."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=None,
            key=key,
            payload={"dispute": text},
            as_st=as_st,
        )
        if replay:
            return ch
        words = text.strip()[:200] or "asks for the storyteller"
        ch.options = {**ch.options, "dispute": f"{name_of(ch, side)}: {words}"}
        who = name_of(ch, side)
        return _tell(
            scene,
            ch,
            by,
            f"{who} calls the storyteller",
            history=f"{who} calls the storyteller: {words}",
            repeats=f"call-{side}",
        )


__all__ = [
    "ChallengeError",
    "challenge_accept",
    "challenge_answer",
    "challenge_blood",
    "challenge_by_hand",
    "challenge_cancel",
    "challenge_choose_trait",
    "challenge_declare",
    "challenge_dispute",
    "challenge_mob_bid",
    "challenge_mob_drop",
    "challenge_mob_step_in",
    "challenge_name_negative",
    "challenge_relent",
    "challenge_retest",
    "challenge_st",
    "challenge_start",
    "challenge_throw",
]


def challenge_regain(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participant: Participant,
    category: str,
    key: str | None = None,
) -> None:
    """W7: from the phone, one willpower buys back every trait lost tonight in a category,
    once per game night per category (the ledger refuses a second time, naming W7)."""
    if (
        participant.character_id is None
        or participant.scene_id != scene.pk
        or participant.removed_at is not None
        or participant.character.player_id != by.pk
    ):
        raise ChallengeError(NOT_YOURS)
    with _by_the_rules():
        require_regain(scene.ruleset)  # W0: W7 is met_werewolf's
    with transaction.atomic():
        try:
            scene = lock_open_scene(scene)
            ledger_regain(
                character=participant.character,
                category=category,
                by=by,
                source=f"scene {scene.pk}",
                idempotency_key=key,
            )
        except SceneError as error:
            raise ChallengeError(str(error)) from None
        except LedgerError as error:
            raise ChallengeError(str(error), error.rule_id) from None
        except IdempotencyError as error:
            raise ChallengeError(str(error)) from None
        record_change(
            scene,
            by=by,
            kind=LogKind.LEDGER,
            text=f"{participant.name} regains {category} traits for 1 willpower (W7)",
            characters=[participant.character],
            private_user_ids=[by.pk],
            regions=(),  # the sheet's regions go with the ledger's own announcement
        )


def challenge_mob_bid(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    member: Participant,
    bid: str = "",
    drop: bool = False,
    expected_step: int | None = None,
    key: str | None = None,
) -> Challenge:
    """C16: a mob member bids a trait it holds from its own phone (the storyteller for an
    NPC), or stays out; when every member has answered, the defender is asked."""
    as_st = is_storyteller_of_scene(by, scene)
    with transaction.atomic():
        asked = {"member": member.pk, "bid": bid, "drop": drop}
        scene, ch, replay = _locked_and_claimed(scene, challenge, by, key, asked, expected_step)
        if replay:
            return ch
        members = ch.options.get("mob", {})
        if str(member.pk) not in members:
            raise ChallengeError("That character is not in this mob.", "C16")
        mine = _member_player(member) == by.pk
        npc_for_st = as_st and _member_player(member) is None
        # C16: the storyteller keeps an absent player's character out (never bids for it)
        absent_for_st = as_st and drop and not mine
        if not (mine or npc_for_st or absent_for_st):
            raise ChallengeError(NOT_YOURS)
        if ch.status != ChallengeStatus.ANSWER or ch.options.get("awaiting") != "mob":
            raise ChallengeError("The mob has already formed.", "C16")
        if members[str(member.pk)]:
            raise ChallengeError("You have already answered.", "C16")
        options = dict(ch.options)
        mob = dict(members)
        if drop:
            mob.pop(str(member.pk))
            text = f"{member.name} stays out of the mob"
            if _member_player(member) is not None and not mine:
                text += " (kept out by the storyteller: no answer)"
        else:
            if not bid:
                raise ChallengeError("Every member of a mob bids a trait.", "C16")
            sheet = sheets.load(member)
            held = sheet.traits(ch.category) if member.character_id else {bid: sheet.pool(bid)}
            if held.get(bid, 0) < 1:
                raise ChallengeError(f"{member.name} has no current {bid} to bid.", "C1")
            mob[str(member.pk)] = {"bid": bid}
            text = f"{member.name} joins the mob, bidding {bid}"
        options["mob"] = mob
        if all(mob.values()):
            text += _mob_formed(ch, options)
        ch.options = options
        return _tell(scene, ch, by, text)


def _mob_formed(ch: Challenge, options: dict[str, Any]) -> str:
    """C16: every member has answered: the defender is asked (its timer starts)."""
    mob = options["mob"]
    options["awaiting"] = "defender"
    ch.options = options
    probe = _build(ch, {**options, "defender": {}})  # C16: at most five; bids held
    del probe
    _timer(ch, ANSWER_SECONDS, f"{name_of(ch, 'defender')} to answer")
    if not mob:
        alone = f"{name_of(ch, 'attacker')} and {name_of(ch, 'defender')}"
        return f"; nobody else joined: {alone} alone"
    if options.get("mob_side") == "defender":
        return f"; {name_of(ch, 'attacker')} faces {len(mob) + 1} defenders (C16)"
    return f"; {name_of(ch, 'defender')} faces {len(mob) + 1} attackers (C16)"


def challenge_name_negative(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    trait: str,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C5 (W8): before the first throw a side names a negative trait of the other. met_classic:
    a right guess is -1 to their total, a wrong one -1 to the guesser's; met_werewolf: one
    more trait at risk for the one it counts against. The answer is said at once."""
    trait = (trait or "").strip()[:80]
    if not trait:
        raise ChallengeError("Name the negative trait.", "C5")
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"negative": trait},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        if ch.sealed.get("throw"):
            raise ChallengeError("Negative traits are named before the first throw.", "C5")
        with _by_the_rules():
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
        return _tell(scene, ch, by, text, engine=after)


def challenge_choose_trait(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    trait: str = "",
    expected_step: int | None = None,
    key: str | None = None,
) -> Challenge:
    """W8: the loser picks which of its current traits of the category goes for each trait a
    named negative put at risk; from its own phone, or the storyteller for an absent player
    (or an NPC). The ledger entry lands now; nothing is crossed off until it is chosen."""
    trait = (trait or "").strip()[:80]
    as_st = is_storyteller_of_scene(by, scene)
    with transaction.atomic():
        scene, ch, replay = _locked_and_claimed(
            scene, challenge, by, key, {"side": side, "choose": trait}, expected_step
        )
        if replay:
            return ch
        if side not in ("attacker", "defender"):
            raise ChallengeError(NOT_YOURS)
        if not as_st and player_of(ch, side) != by.pk:
            raise ChallengeError(NOT_YOURS)
        waiting = list(ch.options.get("choose", []))
        if ch.status != ChallengeStatus.OVER or side not in waiting:
            raise ChallengeError("No trait of that side is waiting to be chosen.", "W8")
        participant = _participant(ch, side)
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
            _cross_off(ch, participant.character, by, match, reason=reason, rule="W8")
            text = f"{who} crosses off {match} (W8){chooser}"
        waiting.remove(side)
        options = _without(ch.options, "choose")
        if waiting:
            options["choose"] = waiting
            _choice_timer(ch, waiting[0])
        else:
            _clear_timer(ch)
        ch.options = options
        return _tell(scene, ch, by, text)  # which trait goes: for the players concerned


def challenge_blood(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    amount: int,
    expected_step: int | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C5: before the test a side spends blood for physical traits (counted in its total):
    at most 3 a challenge and never past the generation's limit (C12: not when surprised).
    The blood goes through the ledger now; a void gives it back."""
    with transaction.atomic():
        scene, ch, replay = _act(
            scene=scene,
            challenge=challenge,
            by=by,
            side=side,
            expected_step=expected_step,
            key=key,
            payload={"blood": amount},
            as_st=as_st,
        )
        if replay:
            return ch
        engine = _require_live(ch)
        if ch.sealed.get("throw"):
            raise ChallengeError("Blood for traits is announced before the test.", "C5")
        character = _ledger_character(ch, side)
        if character is None or character.blood < 1:
            raise ChallengeError(f"{name_of(ch, side)} has no blood to spend.", "C5")
        with _by_the_rules():
            after = engine.spend_blood(side, amount)
        _ledger(
            ch,
            character,
            by,
            kind=LedgerKind.BLOOD_SPENT,
            amount=amount,
            reason=f"blood for {amount} physical trait(s) (C5)",
            rule="C5",
        )
        text = f"{name_of(ch, side)} spends {amount} blood for {amount} physical trait(s) (C5)"
        return _tell(scene, ch, by, text, engine=after)


def mob_participants(ch: Challenge) -> dict[str, Participant]:
    """C16: everyone of the mob by the name the engine knows them by, the primary first."""
    primary = _participant(ch, ch.options.get("mob_side", "attacker"))
    out = {primary.name: primary} if primary is not None else {}
    for member in mob_members(ch):
        out.setdefault(member.name, member)
    return out


def challenge_mob_drop(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    member: Participant,
    expected_step: int | None = None,
    key: str | None = None,
) -> Challenge:
    """C16: a member of the mob who cannot match the negatives named against it drops out
    before the first throw, from its own phone (the storyteller for an NPC or an absent
    player). When the one who throws drops out, the next member throws instead."""
    as_st = is_storyteller_of_scene(by, scene)
    with transaction.atomic():
        scene, ch, replay = _locked_and_claimed(
            scene, challenge, by, key, {"drop_out": member.pk}, expected_step
        )
        if replay:
            return ch
        everyone = mob_participants(ch)
        if member.pk not in {p.pk for p in everyone.values()}:
            raise ChallengeError("That character is not in this mob.", "C16")
        if not (as_st or _member_player(member) == by.pk):
            raise ChallengeError(NOT_YOURS)
        engine = _require_live(ch)
        with _by_the_rules():
            after = engine.drop_out(member.name)
        mob_side = ch.options.get("mob_side", "attacker")
        options = dict(ch.options)
        mob = dict(options.get("mob", {}))
        options["mob_dropped"] = [*options.get("mob_dropped", []), member.pk]
        text = f"{member.name} cannot match the negatives named and drops out (C16)"
        primary = _participant(ch, mob_side)
        if primary is not None and member.pk == primary.pk:
            thrower = after.side(Side(mob_side))
            successor = everyone.get(thrower.name)
            if successor is None:
                raise ChallengeError("The mob has nobody left to throw.", "C16")
            bid = mob.pop(str(successor.pk), {}).get("bid", "")
            options[mob_side] = {**options.get(mob_side, {}), "bid": bid}
            if mob_side == "attacker":
                ch.attacker = successor
            else:
                ch.defender = successor
            text += f"; {successor.name} throws for the mob now"
        else:
            mob.pop(str(member.pk), None)
        options["mob"] = mob
        ch.options = options
        # everyone in the scene may be offered to step in (C16)
        return _tell(scene, ch, by, text, engine=after, also=_scene_players(scene))


def in_challenge(ch: Challenge, participant: Participant) -> bool:
    """Whether the participant is on either side of the challenge, or was (C16 drop-outs)."""
    ids = {p.pk for p in (ch.attacker, ch.defender) if p is not None}
    ids |= {int(pk) for pk in ch.options.get("mob", {})}
    ids |= set(ch.options.get("mob_dropped", []))
    return participant.pk in ids


def challenge_mob_step_in(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    member: Participant,
    bid: str = "",
    expected_step: int | None = None,
    key: str | None = None,
) -> Challenge:
    """C16: before the first throw another character steps into a mob in the place of one
    who dropped out, bidding a trait it holds, from its own phone (the storyteller for an
    NPC)."""
    as_st = is_storyteller_of_scene(by, scene)
    with transaction.atomic():
        scene, ch, replay = _locked_and_claimed(
            scene, challenge, by, key, {"step_in": member.pk, "bid": bid}, expected_step
        )
        if replay:
            return ch
        if member.scene_id != scene.pk or member.removed_at is not None:
            raise ChallengeError(NOT_IN_SCENE)
        if not (_member_player(member) == by.pk or (as_st and _member_player(member) is None)):
            raise ChallengeError(NOT_YOURS)
        if in_challenge(ch, member):
            raise ChallengeError(f"{member.name} is in this challenge already.", "C16")
        engine = _require_live(ch)
        if not engine.mob and not ch.options.get("mob_dropped"):
            raise ChallengeError("This challenge is not a mob.", "C16")
        if not bid:
            raise ChallengeError("Bid a trait to step in.", "C16")
        side = sheets.contender(
            sheets.load(member),
            ruleset=ch.options.get("ruleset", scene.ruleset),
            category=ch.category,
            bid=bid,
        )
        with _by_the_rules():
            after = engine.step_in(member.name, side)
        ch.options = {
            **ch.options,
            "mob": {**ch.options.get("mob", {}), str(member.pk): {"bid": bid}},
        }
        text = f"{member.name} steps into the mob, bidding {bid} (C16)"
        return _tell(scene, ch, by, text, engine=after, also=_scene_players(scene))
