"""Sheets as JSON: reading a character into the export shape, writing sheets back in bulk.

The shape (one dict per character)::

    {"name", "creature", "affiliation", "player", "npc", "generation", "willpower", "blood",
     "blood_per_turn", "rage", "gnosis", "nature", "demeanor", "narrator", "notes",
     "traits": {"physical": {"Quick": 2}, "social": {}, "mental": {}},
     "negative_traits": {same}, "abilities": {"Dodge": 2}, "powers": {"Celerity: Alacrity": 1},
     "attributes": {"Strength": 3}, "health": [{"name", "boxes", "penalty"}],
     "equipment": [{"name", "kind", "bonus_traits", "damage", "damage_type", …}],
     "lists": {"Backgrounds": [{"name", "value", "note"}]},
     "experience": [{"date", "change", "kind", "reason", "earned", "unspent"}]}

Grapevine import and the JSON import both end in :func:`sheets_write`: one transaction, a
fixed number of queries whatever the number of characters or traits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from characters.models import (
    Ability,
    Attribute,
    Character,
    Chronicle,
    Equipment,
    ExperienceEntry,
    HealthLevel,
    Power,
    SheetEntry,
    Trait,
)

FORMAT = "storyteller-characters"
VERSION = 1
SCALARS = (
    "creature",
    "affiliation",
    "npc",
    "generation",
    "willpower",
    "blood",
    "blood_per_turn",
    "rage",
    "gnosis",
    "nature",
    "demeanor",
    "narrator",
    "notes",
)
EQUIPMENT_FIELDS = (
    "name",
    "kind",
    "bonus_traits",
    "negative_traits",
    "damage",
    "damage_type",
    "difficulty",
    "range",
    "armor",
    "concealable",
    "note",
)
PARTS = (Trait, Ability, Power, Attribute, HealthLevel, Equipment, SheetEntry, ExperienceEntry)
NOT_A_LIST = "The file holds no list of characters."
NAMELESS = "Character number {index} has no name."


class SheetError(ValueError):
    """A sheet that cannot be written, with a message for the admin."""


@dataclass
class ImportReport:
    total: int = 0
    new: int = 0
    updated: int = 0
    unknown_players: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"imported {self.total} characters ({self.new} new, {self.updated} updated)"


def sheet_read(character: Character) -> dict[str, Any]:
    """One character in the export shape (parts prefetched by the caller for many)."""
    traits: dict[str, dict[str, int]] = {"physical": {}, "social": {}, "mental": {}}
    negatives: dict[str, dict[str, int]] = {"physical": {}, "social": {}, "mental": {}}
    for trait in character.traits.all():
        (negatives if trait.negative else traits)[trait.category][trait.name] = trait.count
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
        "abilities": {a.name: a.rating for a in character.abilities.all()},
        "powers": {p.name: p.level for p in character.powers.all()},
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
                "change": x.change,
                "kind": x.kind,
                "reason": x.reason,
                "earned": x.earned,
                "unspent": x.unspent,
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


def _aware(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


def _validated(sheets: Any) -> list[dict[str, Any]]:
    if isinstance(sheets, dict):
        sheets = sheets.get("characters")
    if not isinstance(sheets, list):
        raise SheetError(NOT_A_LIST)
    for index, sheet in enumerate(sheets, start=1):
        if not isinstance(sheet, dict) or not str(sheet.get("name", "")).strip():
            raise SheetError(NAMELESS.format(index=index))
    return sheets


def sheets_write(*, chronicle: Chronicle, sheets: Any) -> ImportReport:
    """Create or update (by name) every sheet in the chronicle, replacing its parts whole."""
    sheets = _validated(sheets)
    report = ImportReport(total=len(sheets))
    by_name = {str(s["name"]).strip(): s for s in sheets}
    wanted_players = {slugify(s.get("player") or "") for s in sheets} - {""}
    users = {u.username: u for u in get_user_model().objects.filter(username__in=wanted_players)}
    with transaction.atomic():
        existing = {
            c.name: c
            for c in Character.objects.select_for_update().filter(
                chronicle=chronicle, name__in=list(by_name)
            )
        }
        new, changed = [], []
        for name, sheet in by_name.items():
            character = existing.get(name) or Character(chronicle=chronicle, name=name)
            for key in SCALARS:
                if key in sheet and sheet[key] is not None:
                    setattr(character, key, sheet[key])
                elif key == "generation":
                    character.generation = None
            player_name = slugify(sheet.get("player") or "")
            character.player = users.get(player_name)
            if player_name and character.player is None:
                report.unknown_players.append(sheet.get("player"))
            (changed if name in existing else new).append(character)
        Character.objects.bulk_create(new)
        if changed:
            Character.objects.bulk_update(changed, [*SCALARS, "player", "updated_at"])
        report.new, report.updated = len(new), len(changed)
        ids = {
            c.name: c.pk
            for c in Character.objects.filter(chronicle=chronicle, name__in=list(by_name))
        }
        for model in PARTS:
            model.objects.filter(character_id__in=ids.values()).delete()
        _write_parts(ids, by_name)
    return report


def _write_parts(ids: dict[str, int], by_name: dict[str, dict[str, Any]]) -> None:
    rows: dict[type, list[Any]] = {model: [] for model in PARTS}
    for name, sheet in by_name.items():
        pk = ids[name]
        for key, negative in (("traits", False), ("negative_traits", True)):
            for category, traits in (sheet.get(key) or {}).items():
                for trait, count in traits.items():
                    rows[Trait].append(
                        Trait(
                            character_id=pk,
                            category=category,
                            name=trait,
                            count=max(int(count), 1),
                            negative=negative,
                        )
                    )
        rows[Ability] += [
            Ability(character_id=pk, name=n, rating=int(r))
            for n, r in (sheet.get("abilities") or {}).items()
        ]
        rows[Power] += [
            Power(character_id=pk, name=n, level=int(lv))
            for n, lv in (sheet.get("powers") or {}).items()
        ]
        rows[Attribute] += [
            Attribute(character_id=pk, name=n, value=int(v))
            for n, v in (sheet.get("attributes") or {}).items()
        ]
        rows[HealthLevel] += [
            HealthLevel(
                character_id=pk,
                name=h["name"],
                boxes=int(h.get("boxes", 1)),
                penalty=int(h.get("penalty", 0)),
                order=i,
            )
            for i, h in enumerate(sheet.get("health") or [])
        ]
        rows[Equipment] += [
            Equipment(
                character_id=pk,
                **{k: v for k, v in item.items() if k in EQUIPMENT_FIELDS and v is not None},
            )
            for item in sheet.get("equipment") or []
        ]
        rows[SheetEntry] += [
            SheetEntry(
                character_id=pk,
                list_name=list_name,
                name=e["name"],
                value=str(e.get("value", "")),
                note=e.get("note", ""),
            )
            for list_name, entries in (sheet.get("lists") or {}).items()
            for e in entries
        ]
        rows[ExperienceEntry] += [
            ExperienceEntry(
                character_id=pk,
                date=_aware(x.get("date")),
                change=int(x.get("change") or 0),
                kind=str(x.get("kind", "")),
                reason=x.get("reason", ""),
                earned=int(x.get("earned") or 0),
                unspent=int(x.get("unspent") or 0),
            )
            for x in sheet.get("experience") or []
        ]
    for model, objects in rows.items():
        model.objects.bulk_create(objects)
