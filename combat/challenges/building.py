"""The engine of a challenge built from both sides' sheets as they are now (C1), with what that
needs: a weapon on the sheet, a met_bns pool (B1), Celerity's level (C15), the night's locks.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from characters.models import Equipment
from combat.challenges import sheets
from combat.challenges.reads import blood_kept_of, is_outpaced, is_surprised, mob_members
from combat.challenges.refusals import ChallengeError, by_the_rules
from combat.models import Challenge, ChallengeLock, Participant, Scene
from combat.rules.celerity import LEVELS
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Contender
from combat.rules.night import Lock, Locks
from config.prepared import Prepared


def _held_locks(scene_id: int, now: int) -> QuerySet[ChallengeLock]:
    found = ChallengeLock.objects.filter(scene_id=scene_id, until__gt=now)
    return found.select_related("attacker", "target").order_by("pk")


# its SQL compiled once (config.prepared)
_HELD_LOCKS: Prepared[ChallengeLock] = Prepared(_held_locks, model=ChallengeLock)


def scene_locks(scene: Scene) -> Locks:
    """C10, W9: the locks of the scene that still hold at its game time (one query)."""
    rows = _HELD_LOCKS.run(scene.pk, scene.game_time)
    return Locks(tuple(Lock(r.attacker.name, r.target.name, r.what, r.until, r.rule) for r in rows))


def celerity_level(participant: Participant) -> int:
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


def weapon_of(participant: Participant, weapon_id: int | None) -> Equipment | None:
    if not weapon_id or participant.character_id is None:
        return None
    weapon = Equipment.objects.filter(
        pk=weapon_id, character_id=participant.character_id, kind=Equipment.Kind.WEAPON
    ).first()
    if weapon is None:
        raise ChallengeError("That weapon is not on the sheet.")
    return weapon


def check_pool(participant: Participant, attribute: str, skill: str) -> None:
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


def side_options(data: dict[str, Any]) -> dict[str, Any]:
    keep = ("bid", "ability", "weapon", "attribute", "skill", "bonus", "prone", "effect")
    return {k: data.get(k) for k in keep if data.get(k) not in (None, "")}


def build(challenge: Challenge, options: dict[str, Any]) -> Engine:
    """Start the engine from both sides' sheets as they are now (C1 and the checks of start)."""
    ruleset = options["ruleset"]
    category = challenge.category
    a_opts = options.get("attacker", {})
    d_opts = options.get("defender", {})
    members = mob_members(challenge)
    # every sheet of the challenge in one read (its ledger in one query)
    a_sheet, d_sheet, *member_sheets = sheets.load_many(
        [challenge.attacker, challenge.defender, *members]
    )
    assert a_sheet is not None
    kept = blood_kept_of(challenge, [challenge.attacker, challenge.defender])
    mode = challenge.mode
    surprised = d_sheet is not None and is_surprised(options, d_sheet)
    outpaced = d_sheet is not None and is_outpaced(options, d_sheet)
    ruling = options.get("stamina_ruling")

    def pool(sheet: sheets.Sheet | None, opts: dict[str, Any], prone: int = 0) -> int:
        if ruleset != "met_bns" or sheet is None:
            return 0
        weapon = weapon_of(sheet.participant, opts.get("weapon"))
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
        weapon=weapon_of(challenge.attacker, a_opts.get("weapon")),
        pool=pool(a_sheet, a_opts),
        opponent=d_sheet,
        blood_kept=kept.get(challenge.attacker.pk, 0),
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
            weapon=weapon_of(challenge.defender, d_opts.get("weapon")),
            surprised=surprised,
            outpaced=outpaced,
            stamina_ruling=ruling,
            pool=pool(d_sheet, d_opts, prone),
            opponent=a_sheet,
            blood_kept=kept.get(challenge.defender.pk, 0),
        )
    elif options.get("race"):
        defender = Contender(traits=challenge.difficulty, pool=challenge.difficulty)
    mob = []
    for member, sheet in zip(members, member_sheets, strict=True):
        bid = options.get("mob", {}).get(str(member.pk), {}).get("bid")
        mob.append(
            (member.name, sheets.contender(sheet, ruleset=ruleset, category=category, bid=bid))
        )
    with by_the_rules():
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


def build_unanswered(ch: Challenge, options: dict[str, Any], side: str) -> Engine:
    """The engine for a relent or no-bid answer: the answering side has no bid (yet)."""
    return build(ch, {**options, side: {}})
