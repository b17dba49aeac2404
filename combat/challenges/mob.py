"""C16 mobs: a member bids or stays out while the mob forms, drops out when it cannot match the
negatives named, another character steps in for one who dropped out.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from combat.challenges import sheets
from combat.challenges.access import declare, require_live, take
from combat.challenges.building import build
from combat.challenges.reads import (
    in_challenge,
    member_player,
    mob_participants,
    name_of,
    participant_of,
    scene_players,
)
from combat.challenges.recording import tell
from combat.challenges.refusals import NOT_IN_SCENE, NOT_YOURS, ChallengeError, by_the_rules
from combat.challenges.timers import start_timer
from combat.models import Challenge, ChallengeStatus, Participant, Scene
from combat.rules.terms import Side
from combat.services import is_storyteller_of_scene

MOB_BID = declare("challenge.mob.bid", may_act=None)  # the member's checks read the mob


def challenge_mob_bid(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    member: Participant,
    bid: str = "",
    drop: bool = False,
    token: str | None = None,
    key: str | None = None,
) -> Challenge:
    """C16: a mob member bids a trait it holds from its own phone (the storyteller for an
    NPC), or stays out; when every member has answered, the defender is asked."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        as_st = is_storyteller_of_scene(by, scene)
        members = ch.options.get("mob", {})
        if str(member.pk) not in members:
            raise ChallengeError("That character is not in this mob.", "C16")
        mine = member_player(member) == by.pk
        npc_for_st = as_st and member_player(member) is None
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
            if member_player(member) is not None and not mine:
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
            text += mob_formed(ch, options)
        ch.options = options
        return tell(scene, ch, by, text)

    return take(
        MOB_BID,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"member": member.pk, "bid": bid, "drop": drop},
        rules=rules,
    )


def mob_formed(ch: Challenge, options: dict[str, Any]) -> str:
    """C16: every member has answered: the defender is asked (its timer starts)."""
    mob = options["mob"]
    options["awaiting"] = "defender"
    ch.options = options
    probe = build(ch, {**options, "defender": {}})  # C16: at most five; bids held
    del probe
    start_timer(ch, f"{name_of(ch, 'defender')} to answer")
    if not mob:
        alone = f"{name_of(ch, 'attacker')} and {name_of(ch, 'defender')}"
        return f"; nobody else joined: {alone} alone"
    if options.get("mob_side") == "defender":
        return f"; {name_of(ch, 'attacker')} faces {len(mob) + 1} defenders (C16)"
    return f"; {name_of(ch, 'defender')} faces {len(mob) + 1} attackers (C16)"


MOB_DROP = declare("challenge.mob.drop", may_act=None)  # the member's checks read the mob


def challenge_mob_drop(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    member: Participant,
    token: str | None = None,
    key: str | None = None,
) -> Challenge:
    """C16: a member of the mob who cannot match the negatives named against it drops out
    before the first throw, from its own phone (the storyteller for an NPC or an absent
    player). When the one who throws drops out, the next member throws instead."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        as_st = is_storyteller_of_scene(by, scene)
        everyone = mob_participants(ch)
        if member.pk not in {p.pk for p in everyone.values()}:
            raise ChallengeError("That character is not in this mob.", "C16")
        if not (as_st or member_player(member) == by.pk):
            raise ChallengeError(NOT_YOURS)
        engine = require_live(ch)
        with by_the_rules():
            after = engine.drop_out(member.name)
        mob_side = ch.options.get("mob_side", "attacker")
        options = dict(ch.options)
        mob = dict(options.get("mob", {}))
        options["mob_dropped"] = [*options.get("mob_dropped", []), member.pk]
        text = f"{member.name} cannot match the negatives named and drops out (C16)"
        primary = participant_of(ch, mob_side)
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
        return tell(scene, ch, by, text, engine=after, also=scene_players(scene))

    return take(
        MOB_DROP,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"drop_out": member.pk},
        rules=rules,
    )


MOB_STEP_IN = declare("challenge.mob.step_in", may_act=None)  # the member's checks read the mob


def challenge_mob_step_in(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    member: Participant,
    bid: str = "",
    token: str | None = None,
    key: str | None = None,
) -> Challenge:
    """C16: before the first throw another character steps into a mob in the place of one
    who dropped out, bidding a trait it holds, from its own phone (the storyteller for an
    NPC)."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        as_st = is_storyteller_of_scene(by, scene)
        if member.scene_id != scene.pk or member.removed_at is not None:
            raise ChallengeError(NOT_IN_SCENE)
        if not (member_player(member) == by.pk or (as_st and member_player(member) is None)):
            raise ChallengeError(NOT_YOURS)
        if in_challenge(ch, member):
            raise ChallengeError(f"{member.name} is in this challenge already.", "C16")
        engine = require_live(ch)
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
        with by_the_rules():
            after = engine.step_in(member.name, side)
        ch.options = {
            **ch.options,
            "mob": {**ch.options.get("mob", {}), str(member.pk): {"bid": bid}},
        }
        text = f"{member.name} steps into the mob, bidding {bid} (C16)"
        return tell(scene, ch, by, text, engine=after, also=scene_players(scene))

    return take(
        MOB_STEP_IN,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"step_in": member.pk, "bid": bid},
        rules=rules,
    )
