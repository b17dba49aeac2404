"""A side's dice from its sheet (K2): attributes, tonight's abilities, the wound penalty (D2),
and who rolls for a group fleeing together (K1)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from characters import sheet_cache
from chases.models import Side
from combat.models import Participant


@dataclass(frozen=True)
class Pool:
    """A side's dice for a pool: the parts it counted and the wound penalty (D2)."""

    dice: int
    text: str


def sheet_values(participants: Iterable[Participant]) -> dict[int, dict[str, int]]:
    """By participant id: every attribute and current ability (lowercase) and ``penalty``.

    A sheet counts its attributes, its abilities as the ledger leaves them tonight and its
    wound penalty (D2); a quick NPC its typed-in pools.
    """
    participants = list(participants)
    ids = [p.character_id for p in participants if p.character_id]
    read = sheet_cache.sheets(ids)
    characters = {pk: character for pk, (character, _now) in read.items()}
    now = {pk: values for pk, (_character, values) in read.items()}
    values: dict[int, dict[str, int]] = {}
    for p in participants:
        if p.character_id and p.character_id in characters:
            c = characters[p.character_id]
            found = {a.name.lower(): a.value for a in c.attributes.all()}
            found.update({k.lower(): v for k, v in now[c.pk]["abilities"].items()})
            found["penalty"] = now[c.pk]["health"]["penalty"] or 0
        else:
            found = {str(k).lower(): int(v) for k, v in (p.quick_pools or {}).items()}
            found["penalty"] = 0
        values[p.pk] = found
    return values


def pool_for(
    values: dict[str, int], attribute: str, ability: str, bonus: int = 0, split: int = 0
) -> Pool:
    """``attribute + ability`` (missing counts 0) less the wound penalty and the dice a
    split takes off (K11, D14), never below 0."""
    a, b = values.get(attribute, 0), values.get(ability, 0)
    penalty = values.get("penalty", 0)
    text = f"{attribute.title()} {a} + {ability.title()} {b}"
    if bonus:
        text += f" + {bonus} stalk"
    if penalty:
        text += f" {penalty} wounds"
    if split:
        text += f" − {split} split (attacking, D14)"
    return Pool(max(0, a + b + bonus + penalty - split), text)


def runner(
    members: list[Side],
    values: dict[int, dict[str, int]],
    attribute: str,
    ability: str,
    *,
    bonus: int = 0,
    split: int = 0,
    best: bool = False,
) -> tuple[Side, Pool]:
    """Who rolls for a side of the chase, and its pool. K1 **decision**: a group fleeing
    together is one Prey running at its slowest member's pace, so its chase and obstacle
    rolls use the member with the smallest pool (the first listed on a tie); ``best``: the
    largest (the stalk's Perception + Alertness, since any of them may notice)."""
    ranked = [
        (pool_for(values[s.participant_id], attribute, ability, bonus, split), s) for s in members
    ]
    pool, side = (max if best else min)(ranked, key=lambda item: item[0].dice)
    return side, pool
