"""The four rulesets as profiles a chronicle picks for a scene, with their house rules."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any


class Family(Enum):
    CLASSIC = "classic"  # C rules
    WEREWOLF = "werewolf"  # W rules over C (W0)
    POOLS = "pools"  # met_bns test pools (B1, B2)
    DICE = "dice"  # wod_dice


@dataclass(frozen=True)
class Profile:
    slug: str
    family: Family
    #: C8 limits each retest kind once per challenge in total; W10–W12 and B2 per person.
    retests_per_person: bool
    #: W2 (chronicle vote): the permanent rating of the ability used adds to totals.
    abilities_add: bool = False
    #: G4: Control decays by 1 each sustained round (the seed's example leaves it out).
    control_decay: bool = True

    def with_options(self, options: dict[str, Any] | None) -> Profile:
        """House rules from a chronicle's options (unknown keys are ignored)."""
        known = {
            k: v for k, v in (options or {}).items() if k in {"abilities_add", "control_decay"}
        }
        return replace(self, **known)


PROFILES: dict[str, Profile] = {
    "met_classic": Profile("met_classic", Family.CLASSIC, retests_per_person=False),
    "met_werewolf": Profile(
        "met_werewolf", Family.WEREWOLF, retests_per_person=True, abilities_add=True
    ),
    "met_bns": Profile("met_bns", Family.POOLS, retests_per_person=True),
    "wod_dice": Profile("wod_dice", Family.DICE, retests_per_person=True),
}


def profile(slug: str, options: dict[str, Any] | None = None) -> Profile:
    """The profile of a ruleset slug, with the chronicle's house rules applied."""
    try:
        return PROFILES[slug].with_options(options)
    except KeyError:
        raise ValueError(f"unknown ruleset {slug!r}; one of {sorted(PROFILES)}") from None
