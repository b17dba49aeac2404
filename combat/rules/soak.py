"""D12: soak pools by creature and damage type."""

from __future__ import annotations

from enum import Enum


class DamageType(Enum):
    BASHING = "bashing"
    LETHAL = "lethal"
    AGGRAVATED = "aggravated"
    UNSOAKABLE = "unsoakable"


def may_soak(
    creature: str, damage: DamageType, *, breed_form: bool = False, fortitude: int = 0
) -> bool:
    """D12: who adds Stamina against which damage (armor is counted separately)."""
    shifter_out_of_breed = creature in {"shifter", "werewolf", "fera"} and not breed_form
    if damage is DamageType.BASHING:
        return True
    if damage is DamageType.LETHAL:
        return creature in {"vampire", "ghoul", "fae"} or shifter_out_of_breed
    if damage is DamageType.AGGRAVATED:
        return (creature == "vampire" and fortitude > 0) or shifter_out_of_breed
    return False


def soak_pool(
    *,
    creature: str,
    stamina: int,
    armor: int,
    damage: DamageType,
    breed_form: bool = False,
    fortitude: int = 0,
) -> int:
    """D12: Stamina + armor if the wearer may soak the damage, else the armor alone
    (decision: armor soaks every type, unsoakable included)."""
    own = stamina if may_soak(creature, damage, breed_form=breed_form, fortitude=fortitude) else 0
    return max(own + armor, 0)
