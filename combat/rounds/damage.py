"""D1, D11, D12, D2: rolling a pool (server dice or typed in), damage and soak, and the wound on
the health track (through the ledger for a sheet, on the fight for a quick NPC).
"""

from __future__ import annotations

import random
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from characters.services import ledger_damage
from combat.models import Combat, Participant
from combat.rounds import wod
from combat.rounds.reads import who_of
from combat.rounds.sheets import Stats
from combat.rules.dice import RollKind, RollResult

_POOL_NAMES = {RollKind.DAMAGE: "damage pool", RollKind.SOAK: "soak pool"}


def roll_noted(
    rolls: list[dict],
    label: str,
    pool: int,
    difficulty: int,
    rng: random.Random,
    *,
    typed: tuple[int, ...] | None,
    who: str,
    kind: RollKind = RollKind.ACTION,
) -> RollResult:
    """D1: roll ``who``'s pool (or take the dice typed in from the table: as many as the
    pool, refused naming whose pool it is) and note the roll in ``rolls`` under ``label``,
    typed or not. A damage or a soak roll (``kind``) counts successes only (D11, D12)."""
    what = _POOL_NAMES.get(kind, "pool")
    result = wod.roll(pool, difficulty, rng, typed=typed, kind=kind, who=who, what=what)
    rolls.append(wod.roll_dict(label, result, who=who, typed=typed is not None))
    return result


def roll_damage(
    combat: Combat,
    hitter: Participant,
    hit: Participant,
    pool: int,
    dtype: str,
    stats: dict[int, Stats],
    by: AbstractBaseUser,
    rng: random.Random,
    overrides: dict[str, Any],
    rolls: list[dict],
) -> int:
    """D11, D12: roll damage at 6, the target soaks at 6; what is left goes on the track."""
    label = f"Damage ({pool} dice, {dtype})"
    typed = overrides["damage_dice"]
    dmg = roll_noted(rolls, label, pool, 6, rng, typed=typed, who=hitter.name, kind=RollKind.DAMAGE)
    st = stats[hit.pk]
    soak = wod.soak_dice(st, dtype)
    label, typed = f"Soak ({soak} dice)", overrides["soak_dice"]
    soaked = roll_noted(rolls, label, soak, 6, rng, typed=typed, who=hit.name, kind=RollKind.SOAK)
    taken = max(dmg.successes - soaked.successes, 0)
    wound(combat, hit, taken, dtype, st, by)
    return taken


def wound(
    combat: Combat, hit: Participant, taken: int, dtype: str, st: Stats, by: AbstractBaseUser
) -> None:
    """D2: damage on the health track: through the ledger for a sheet, on the fight for a
    quick NPC. A full track takes what fits."""
    if taken <= 0:
        return
    if st.character is None:
        key = who_of(hit)
        combat.npc_damage = {**combat.npc_damage, key: combat.npc_damage.get(key, 0) + taken}
        return
    ledger_damage(
        character=st.character,
        by=by,
        damage_type=dtype,
        amount=taken,
        empty_boxes=st.health_boxes - st.damage,
        reason=f"round {combat.round_number}",
        source=f"combat {combat.pk}",
    )
