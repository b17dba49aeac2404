"""Sheets as JSON, outward: a character in the export shape (:mod:`characters.sheet_io`
describes it and reads it back)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from characters.models import Character
from characters.sheet_io import EQUIPMENT_FIELDS, FORMAT, SCALARS, VERSION


def _points_out(value: Decimal) -> int | float:
    """Experience as a JSON number: 2, not 2.00; 0.5 as 0.5."""
    return int(value) if value == value.to_integral_value() else float(value)


def _counted_out(count: int, note: str) -> int | dict[str, Any]:
    return {"count": count, "note": note} if note else count


def sheet_read(character: Character) -> dict[str, Any]:
    """One character in the export shape (parts prefetched by the caller for many)."""
    traits: dict[str, dict[str, Any]] = {"physical": {}, "social": {}, "mental": {}}
    negatives: dict[str, dict[str, Any]] = {"physical": {}, "social": {}, "mental": {}}
    for trait in character.traits.all():
        bucket = (negatives if trait.negative else traits)[trait.category]
        bucket[trait.name] = _counted_out(trait.count, trait.note)
    lists: dict[str, list[dict[str, str]]] = {}
    for entry in character.entries.all():
        lists.setdefault(entry.list_name, []).append(
            {"name": entry.name, "value": entry.value, "note": entry.note}
        )
    return {
        "name": character.name,
        "player": character.player.username if character.player else "",
        **{name: getattr(character, name) for name in SCALARS},
        "traits": traits,
        "negative_traits": negatives,
        "abilities": {
            a.name: {"rating": a.rating, "note": a.note} if a.note else a.rating
            for a in character.abilities.all()
        },
        "powers": {
            p.name: {"level": p.level, "note": p.note} if p.note else p.level
            for p in character.powers.all()
        },
        "attributes": {a.name: a.value for a in character.attributes.all()},
        "health": [
            {"name": h.name, "boxes": h.boxes, "penalty": h.penalty} for h in character.health.all()
        ],
        "equipment": [
            {f: getattr(e, f) for f in EQUIPMENT_FIELDS} for e in character.equipment.all()
        ],
        "lists": lists,
        "experience": [
            {
                "date": x.date.isoformat() if x.date else None,
                "change": _points_out(x.change),
                "kind": x.kind,
                "reason": x.reason,
                "earned": _points_out(x.earned),
                "unspent": _points_out(x.unspent),
            }
            for x in character.experience.all()
        ],
    }


def chronicle_export(*, characters: Any) -> dict[str, Any]:
    """The JSON document for a queryset of characters."""
    characters = characters.select_related("player", "chronicle").prefetch_related(
        "traits",
        "abilities",
        "powers",
        "attributes",
        "health",
        "equipment",
        "entries",
        "experience",
    )
    return {"format": FORMAT, "version": VERSION, "characters": [sheet_read(c) for c in characters]}
