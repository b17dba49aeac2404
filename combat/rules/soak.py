"""D12: soak pools by creature and damage type."""

from __future__ import annotations

from enum import Enum

from combat.rules.errors import RuleError

#: D12: the creatures the soak rule knows (the seed's shifters under any of their names).
CREATURES = frozenset({"mortal", "vampire", "ghoul", "fae", "shifter", "werewolf", "fera"})


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
    if creature not in CREATURES:
        raise RuleError("D12", f"Unknown creature {creature!r}: one of {sorted(CREATURES)}.")
    if stamina < 0 or armor < 0 or fortitude < 0:
        raise RuleError("D12", "Stamina, armor and Fortitude are counted from 0 up.")
    own = stamina if may_soak(creature, damage, breed_form=breed_form, fortitude=fortitude) else 0
    return max(own + armor, 0)
