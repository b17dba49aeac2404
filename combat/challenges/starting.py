"""Starting a challenge (C1): who may start which kind, the checks of start (C7, C13, C15, C16,
W6, W13, W14, B1) and the first step (an answer asked, or the engine at once).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from characters.models import LedgerKind
from combat import steps
from combat.challenges.building import build, celerity_level, check_pool, scene_locks, side_options
from combat.challenges.outcome import after_step, step_on
from combat.challenges.reads import MODES, UNSEEN, name_of
from combat.challenges.recording import note, save
from combat.challenges.refusals import (
    NOT_IN_SCENE,
    NOT_YOURS,
    OWN_CHARACTER,
    ChallengeError,
    by_the_rules,
)
from combat.challenges.timers import start_timer
from combat.challenges.traits import ledger_write
from combat.models import Challenge, ChallengeStatus, Participant, Scene
from combat.rules.celerity import CelerityRound
from combat.rules.challenge import MOB_MOST, Phase, check_kind
from combat.rules.terms import Category
from combat.services import STALE as SCENE_STALE
from combat.services import SceneError, is_storyteller_of_scene, lock_open_scene
from config.prepared import PreparedValues, insert_noting


def _lock_scene(scene: Scene) -> tuple[Scene, Scene]:
    """A start locks the scene (open): it is the row the step changes."""
    try:
        locked = lock_open_scene(scene)
    except SceneError as error:
        raise ChallengeError(str(error)) from None
    return locked, locked


def _scene_tokens(scene: Scene) -> tuple[str, ...]:
    """The start form carries the scene's ``seq`` it was drawn at (the sides it offers)."""
    return (str(scene.seq),)


START = steps.declare(
    steps.Step(
        action="challenge.start",
        lock=_lock_scene,
        tokens=_scene_tokens,
        refusal=ChallengeError,
        moved_on=SCENE_STALE,
    )
)


def _busy(scene_id: int, attacker_id: int) -> QuerySet[Challenge]:
    """An open challenge of the scene with ``attacker_id`` attacking (at most one row)."""
    found = Challenge.objects.filter(
        scene_id=scene_id,
        status__in=[ChallengeStatus.ANSWER, ChallengeStatus.LIVE],
        attacker_id=attacker_id,
    )
    return found.order_by().values_list("pk")[:1]


# its SQL compiled once (config.prepared)
_BUSY = PreparedValues(_busy)


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
    with by_the_rules():
        check_kind(ruleset, mode, race=race, bid_required=bid_required)  # W0: W13, W14
    if mode in {"simple", "difficult"}:
        difficulty = 0  # C13, W14: a throw against the storyteller, no difficulty to show
    if bid_required and not category:
        # W14: the player bids from the category's traits; with none named nothing can be bid
        raise ChallengeError("Pick the category of the bid you require.", "W14")
    what = (what or category or "").strip()[:120]

    def rules(scene: Scene, _: Scene) -> Challenge:
        for p in (attacker, defender):
            if p is not None and (p.scene_id != scene.pk or p.removed_at is not None):
                raise ChallengeError(NOT_IN_SCENE)
        if ruleset == "met_bns":
            check_pool(attacker, attribute, skill)
        if _BUSY.run(scene.pk, attacker.pk):
            raise ChallengeError(f"{attacker.name} is already in an open challenge as attacker.")
        if defender is not None:
            with by_the_rules():
                scene_locks(scene).check(
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
            "attacker": side_options(attacker_side),
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
        level = celerity_level(attacker) if celerity else 0
        if celerity:
            with by_the_rules():
                CelerityRound().announce(attacker.name, level=level, follow_ups=celerity)
        challenge = Challenge(
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
        # the attacker's latest started challenge (its start form's key) written with the
        # INSERT, one statement on PostgreSQL (config.prepared); under the scene's lock, as
        # every write of a participant's row
        insert_noting(challenge, attacker, "last_started")
        if celerity and attacker.character_id is not None:
            # C15: blood for announced Celerity actions is spent now, used or not.
            ledger_write(
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
        note(challenge, f"{head} · {label}" + (f" · {effect}" if effect else ""))
        if awaiting in {"defender", "mob"} and not mob:
            # C1, C7, W6: the attacker's side is checked now; W6: a defender with nothing
            # left in the category loses at once, losing nothing.
            probe = build(challenge, {**options, "defender": {}})
            if probe.phase is Phase.OVER:
                challenge.status = ChallengeStatus.LIVE
                return step_on(
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
            start_timer(challenge, label)
            save(scene, challenge, by, f"{head} ({label})", public=True)
            return challenge
        engine = build(challenge, challenge.options)
        challenge.status = ChallengeStatus.LIVE
        after_step(challenge, engine, by)
        save(scene, challenge, by, f"{head} ({label})", public=True, engine=engine)
        return challenge

    def replayed(scene: Scene, _: Scene) -> Challenge:
        return Challenge.objects.filter(scene=scene, attacker=attacker).order_by("-pk").first()

    return steps.run(
        START,
        scene,
        by=by,
        key=key,
        payload={"scene": scene.pk, "attacker": attacker.pk, "mode": mode, "bid": bid},
        seen=None if expected_seq is None else str(expected_seq),
        rules=rules,
        replayed=replayed,
    )
