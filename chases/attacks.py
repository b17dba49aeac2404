"""Attacks during a chase (K11): rolled, dodged automatically, landed through the ledger."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from characters.services import ledger_damage
from chases import rules, selectors
from chases.dice import roll_kind, roll_pool
from chases.models import Chase, ChaseRoll, Phase, StepKind
from chases.recording import chase_step, engine_key, record, sides_of
from chases.refusals import ChaseError, rule_error
from combat import steps
from combat.models import Combat, Participant, Scene
from combat.rounds import wod
from combat.rounds.sheets import Stats, stats_for
from combat.rules import difficulty as diff
from combat.rules import exchange, penalties
from combat.rules.dice import RollKind
from combat.rules.errors import RuleError
from combat.rules.health import apply_penalty

#: K11: an attack during the chase is a ranged one; defenses are automatic: the target
#: dodges (D6) at the difficulty its cover gives, with no action spent (**decision**).
COVERS = {"half": "half cover (3)", "near": "cover in reach (6)", "open": "in the open (9)"}
DAMAGE_TYPES = ("bashing", "lethal", "aggravated")

#: K11: the storyteller rolls an attack made during the chase.
ATTACK = chase_step("chase.attack")


def chase_attack(
    *,
    chase: Chase,
    by: AbstractBaseUser,
    attacker: str,
    target: str,
    means: str,
    weapon: str | None = None,
    pool: int | None = None,
    difficulty: int | None = None,
    damage: int | None = None,
    damage_type: str | None = None,
    cover: str = "near",
    dice: Mapping[str, Sequence[int] | None] | None = None,
    token: str | None = None,
    key: str | None = None,
    rng: Any = None,
) -> Chase:
    """K11: an attack made as part of the next chase round, rolled and landed.

    ``attacker`` and ``target`` are side keys (a member of a group Prey is attacked, or
    attacks, by its own key; the engine knows the group as the Prey). Allowed with a weapon
    while the Lead is below 5 and a supernatural power below 7 (Attack Run counts the Lead 4
    lower for its Predator); one attack per attacker per round. The attacker splits its pool
    (D14: the attack and its chase roll this round each lose 3 dice; at most Wits actions).

    A weapon attack uses the attacker's ranged weapon from its sheet (``weapon`` names one,
    else the first with a range; a quick NPC has none, so ``pool`` and ``damage`` are given);
    a power its ``pool``, ``damage`` dice and ``damage_type`` as the storyteller reads the
    power. ``difficulty`` overrides the attack's (D15: 6). The defense is automatic: the
    target dodges (D6: Dexterity + Athletics) at 3, 6 or 9 by ``cover``, without an action.
    A landed attack (D8) rolls damage (D11), the target soaks (D12), and what is left goes
    on the health track through the ledger (a quick NPC's on the chase). ``dice``: the
    table's dice by ``attack``, ``dodge``, ``damage``, ``soak``; the rest the server rolls.
    """
    dice = {k: list(v) for k, v in (dice or {}).items() if v}
    payload = {
        "chase": chase.pk,
        "attacker": attacker,
        "target": target,
        "means": means,
        "weapon": weapon,
        "pool": pool,
        "difficulty": difficulty,
        "damage": damage,
        "damage_type": damage_type,
        "cover": cover,
        "dice": dice,
    }

    def apply(scene: Scene, chase: Chase) -> Chase:
        if chase.phase != Phase.ROLL:
            raise ChaseError(
                "An attack is made as part of a round, before it is rolled (K11).", rule="K11"
            )
        try:
            how = rules.AttackMeans(means)
        except ValueError:
            raise ChaseError("An attack uses a weapon or a power (K11).", rule="K11") from None
        if cover not in COVERS:
            raise ChaseError("Cover is half, in reach or none (D6).", rule="D6")
        sides = sides_of(chase)
        if attacker not in sides or target not in sides:
            raise ChaseError("The attacker and the target are sides of this chase (K11).", "K11")
        hitter, hit = sides[attacker], sides[target]
        state = selectors.engine(chase)
        try:
            new = state.attack(engine_key(hitter), how, engine_key(hit))
        except RuleError as error:
            raise rule_error(error) from None
        stats = stats_for([hitter.participant, hit.participant])
        st, target_stats = stats[hitter.participant_id], stats[hit.participant_id]
        # D14: at most Wits actions; a quick NPC typed without Wits is not held to it.
        wits = st.dot("Wits") if st.character is not None else st.dots.get("wits", 2)
        try:
            split = -penalties.split(2, wits)
            attack = _attack_pool(st, how, weapon, pool, damage, damage_type, split)
        except RuleError as error:
            raise rule_error(error) from None
        a_diff = int(difficulty) if difficulty is not None else attack["difficulty"]
        if not 2 <= a_diff <= 10:
            raise ChaseError("A difficulty is 2 to 10 (D1).", rule="D1")
        dodge = wod.action_pool(target_stats, "dodge")
        d_diff = diff.dodge(diff.Against.GUNFIRE, diff.Cover(cover))
        a_name, d_name = hitter.participant.name, hit.participant.name
        a_roll = roll_pool(attack["dice"], a_diff, dice.get("attack"), rng, a_name, "attack pool")
        d_roll = roll_pool(dodge.dice, d_diff, dice.get("dodge"), rng, d_name, "dodge pool")
        rolls = [
            (hitter, ChaseRoll.Purpose.ATTACK, len(a_roll.dice), a_roll, "attack" in dice),
            (hit, ChaseRoll.Purpose.DODGE, len(d_roll.dice), d_roll, "dodge" in dice),
        ]
        outcome = exchange.resolve(
            exchange.Move(exchange.Action.ATTACK, a_roll.successes, damage=attack["damage"]),
            exchange.Move(exchange.Action.DODGE, d_roll.successes),
        )
        shown = selectors.names(chase, public=True)
        text = (
            f"{shown[attacker]} attacks {shown[target]} with {attack['label']}: "
            f"{a_roll.successes} against an automatic dodge's {d_roll.successes} "
            f"({COVERS[cover]})"
        )
        taken = 0
        if outcome.lands == "attacker":
            dtype = attack["type"]
            dmg = roll_kind(outcome.damage_pool, dice.get("damage"), rng, RollKind.DAMAGE, a_name)
            soak = wod.soak_dice(target_stats, dtype)
            soaked = roll_kind(soak, dice.get("soak"), rng, RollKind.SOAK, d_name)
            rolls += [
                (hitter, ChaseRoll.Purpose.DAMAGE, len(dmg.dice), dmg, "damage" in dice),
                (hit, ChaseRoll.Purpose.SOAK, len(soaked.dice), soaked, "soak" in dice),
            ]
            taken = max(dmg.successes - soaked.successes, 0)
            _wound(chase, hit.participant, target_stats, taken, dtype, by, new.rounds + 1)
            text += f"; hits, {taken} {dtype} after soak (D11, D12)"
        else:
            text += "; it does not land (D8)"
        record(
            scene,
            chase,
            new,
            by=by,
            kind=StepKind.ATTACK,
            text=text,
            sides=sides,
            rolls=rolls,
            data={
                "attacker": attacker,
                "target": target,
                "means": how.value,
                "lands": outcome.lands == "attacker",
                "taken": taken,
            },
        )
        return chase

    return steps.run(ATTACK, chase, by=by, key=key, payload=payload, seen=token, rules=apply)


def _attack_pool(
    st: Stats,
    how: rules.AttackMeans,
    weapon: str | None,
    pool: int | None,
    damage: int | None,
    damage_type: str | None,
    split: int,
) -> dict[str, Any]:
    """K11, D15: the attack's dice after the split and wounds, its difficulty, its damage
    dice and type, and how it is named in the log."""
    if damage_type is not None and damage_type not in DAMAGE_TYPES:
        raise RuleError("D11", f"Damage is bashing, lethal or aggravated, not {damage_type!r}")
    if how is rules.AttackMeans.WEAPON and pool is None:
        ranged = [w for w in st.weapons if w.pool == "firearms"]
        chosen = st.weapon(weapon) if weapon else (ranged[0] if ranged else None)
        if chosen is None or chosen.pool != "firearms":
            raise RuleError(
                "K11",
                f"{st.name} has no ranged weapon on its sheet: an attack during a chase needs "
                "one (or give its pool and damage)",
            )
        counted = wod.action_pool(st, "attack", weapon=chosen.name, penalty=split)
        base, dtype = wod.damage_dice(st, chosen)
        return {
            "dice": counted.dice,
            "difficulty": counted.difficulty,
            "damage": base,
            "type": damage_type or dtype,
            "label": f"{chosen.name} ({counted.parts.replace(f' ({chosen.name})', '')} split)",
        }
    if pool is None or damage is None:
        raise RuleError("K11", "Give the attack's pool and its damage dice")
    if not 0 <= pool <= 30 or not 0 <= damage <= 30:
        raise RuleError("K11", "A pool is 0 to 30 dice")
    name = "a power" if how is rules.AttackMeans.POWER else (weapon or "a weapon")
    return {
        "dice": apply_penalty(pool, st.wound_penalty + split),
        "difficulty": 6,
        "damage": damage,
        "type": damage_type or "lethal",
        "label": f"{name} ({pool} dice − {split} split"
        + (f" − {st.wound_penalty} wounds)" if st.wound_penalty else ")"),
    }


def _wound(
    chase: Chase,
    hit: Participant,
    st: Stats,
    taken: int,
    dtype: str,
    by: AbstractBaseUser,
    round_number: int,
) -> None:
    """D2: damage on the health track, as a round puts it: through the ledger for a sheet
    (a full track takes what fits); for a quick NPC on the chase, and on the fight the chase
    came from while that fight runs."""
    if taken <= 0:
        return
    if st.character is None:
        pid = str(hit.pk)
        chase.npc_damage = {**chase.npc_damage, pid: chase.npc_damage.get(pid, 0) + taken}
        round_id = (chase.origin or {}).get("round_id")
        fight = Combat.objects.select_for_update().filter(pk=round_id, ended_at__isnull=True)
        combat = fight.first() if round_id else None
        if combat is not None:
            combat.npc_damage = {**combat.npc_damage, pid: combat.npc_damage.get(pid, 0) + taken}
            combat.save(update_fields=["npc_damage"])
        return
    ledger_damage(
        character=st.character,
        by=by,
        damage_type=dtype,
        amount=taken,
        empty_boxes=st.health_boxes - st.damage,
        reason=f"chase round {round_number} (K11)",
        source=f"chase {chase.pk}",
    )
