"""Reads of sheets: permanent values from the sheet, current ones through the ledger.

Lost traits, spent ability points and once-per-night uses count in the open game night only;
willpower, blood, rage, gnosis and damage count since the character's last refresh, which the
storyteller gives at the start of a game night (RULES.md, Shared terms).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Prefetch, Q

from characters.access import (  # noqa: F401 (the one rule lives there; kept importable here)
    characters_visible_to,
    chronicles_run_by,
)
from characters.models import (
    PER_NIGHT_KINDS,
    Character,
    GameNight,
    LedgerEntry,
    LedgerKind,
    Trait,
)

SHEET_PREFETCH = (
    Prefetch("traits", queryset=Trait.objects.order_by("category", "negative", "name")),
    "abilities",
    "powers",
    "attributes",
    "entries",
    "health",
    "equipment",
)


def _ledger_that_counts(character: Character) -> list[LedgerEntry]:
    open_night = (
        GameNight.objects.filter(chronicle_id=character.chronicle_id, closed_at__isnull=True)
        .values_list("pk", flat=True)
        .first()
    )
    last_refresh = (
        LedgerEntry.objects.filter(character=character, kind=LedgerKind.REFRESH)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    per_night = Q(kind__in=PER_NIGHT_KINDS, game_night_id=open_night)
    until_refresh = ~Q(kind__in=PER_NIGHT_KINDS) & ~Q(kind=LedgerKind.REFRESH)
    if last_refresh is not None:
        until_refresh &= Q(pk__gt=last_refresh)
    return list(LedgerEntry.objects.filter(Q(character=character) & (per_night | until_refresh)))


def current_values(character: Character, entries: list[LedgerEntry] | None = None) -> dict:
    """Permanent and current values of a sheet, current = permanent - what the ledger says."""
    if entries is None:
        entries = _ledger_that_counts(character)
    lost: dict[tuple[str, str], int] = defaultdict(int)
    regained: set[str] = set()
    spent_ability: dict[str, int] = defaultdict(int)
    pools: dict[str, int] = defaultdict(int)
    for entry in entries:
        if entry.kind == LedgerKind.TRAIT_LOST:
            lost[(entry.category, entry.subject)] += entry.amount
        elif entry.kind == LedgerKind.TRAIT_REGAINED and entry.amount > 0:
            regained.add(entry.category)
        elif entry.kind == LedgerKind.ABILITY_SPENT:
            spent_ability[entry.subject] += entry.amount
        else:
            pools[entry.kind] += entry.amount

    traits: dict[str, dict[str, int]] = defaultdict(dict)
    permanent_traits: dict[str, dict[str, int]] = defaultdict(dict)
    for trait in character.traits.all():
        if trait.negative:
            continue
        permanent_traits[trait.category][trait.name] = trait.count
        gone = 0 if trait.category in regained else lost[(trait.category, trait.name)]
        traits[trait.category][trait.name] = max(trait.count - gone, 0)
    abilities = {
        a.name: max(a.rating - spent_ability[a.name], 0) for a in character.abilities.all()
    }
    return {
        "traits": dict(traits),
        "permanent_traits": dict(permanent_traits),
        "abilities": abilities,
        "willpower": max(character.willpower - pools[LedgerKind.WILLPOWER_SPENT], 0),
        "blood": max(character.blood - pools[LedgerKind.BLOOD_SPENT], 0),
        "rage": max(character.rage - pools[LedgerKind.RAGE_SPENT], 0),
        "gnosis": max(character.gnosis - pools[LedgerKind.GNOSIS_SPENT], 0),
        "damage": max(pools[LedgerKind.HEALTH_DAMAGE], 0),
    }


def sheet(character: Character) -> dict[str, Any]:
    """Everything a sheet page shows, in a fixed number of queries whatever its size."""
    entries = _ledger_that_counts(character)
    now = current_values(character, entries)
    categories = []
    for category in ("physical", "social", "mental"):
        rows = []
        for trait in character.traits.all():
            if trait.category != category:
                continue
            current = trait.count if trait.negative else now["traits"][category][trait.name]
            rows.append({"trait": trait, "current": current, "lost": trait.count - current})
        categories.append(
            {
                "name": category,
                "rows": [r for r in rows if not r["trait"].negative],
                "negatives": [r for r in rows if r["trait"].negative],
                "current": sum(now["traits"].get(category, {}).values()),
                "permanent": sum(now["permanent_traits"].get(category, {}).values()),
            }
        )
    return {
        "character": character,
        "categories": categories,
        "abilities": [
            {"ability": a, "current": now["abilities"][a.name]} for a in character.abilities.all()
        ],
        "now": now,
        "ledger": sorted(entries, key=lambda e: e.pk, reverse=True),
    }
