"""Sheets as JSON: checking and writing sheets back in bulk (the export is
:mod:`characters.sheet_export`).

The shape (one dict per character)::

    {"name", "creature", "affiliation", "player", "npc", "generation", "willpower", "blood",
     "blood_per_turn", "rage", "gnosis", "nature", "demeanor", "narrator", "notes",
     "traits": {"physical": {"Quick": 2}, "social": {}, "mental": {}},
     (a trait with a note: {"Brawny": {"count": 2, "note": "str"}}),
     "negative_traits": {same}, "abilities": {"Dodge": 2}, "powers": {"Celerity: Alacrity": 1},
     (an ability or power with a note: {"Academics": {"rating": 3, "note": "Anthropology"}},
      {"Auspex: Spirit's Touch": {"level": 6, "note": "int."}}),
     "attributes": {"Strength": 3}, "health": [{"name", "boxes", "penalty"}],
     "equipment": [{"name", "kind", "bonus_traits", "damage", "damage_type", …}],
     "lists": {"Backgrounds": [{"name", "value", "note"}]},
     "experience": [{"date", "change", "kind", "reason", "earned", "unspent"}]}
     (experience points are numbers with up to two decimals: 0.5, 4.5)

Grapevine import and the JSON import both end in :func:`sheets_write`: one transaction, a
fixed number of queries whatever the number of characters or traits. Before anything is
written, :func:`sheets_clean` checks every value against the columns it will land in (types,
ranges, lengths, choices, no NUL characters), the same on SQLite and PostgreSQL, and refuses
the whole file naming the character, the field and why. Players named in the file are
matched or given accounts by :mod:`characters.import_players`, within the importing
storyteller's chronicles only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet

from characters import sheet_values as values
from characters.access import chronicles_run_by
from characters.import_players import PlayerLinks, players_resolve
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
from characters.sheet_versions import bump_sheets

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
MAX_PROBLEMS = 10


class SheetError(ValueError):
    """A sheet that cannot be written, with a message for the admin."""


@dataclass
class ImportReport:
    """What an import did: counts (``str``), then the lines of its summary (:meth:`lines`)."""

    total: int = 0
    new: int = 0
    updated: int = 0
    players: PlayerLinks = field(default_factory=PlayerLinks)
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"imported {self.total} characters ({self.new} new, {self.updated} updated)"

    def lines(self) -> list[str]:
        """The players linked, made or left unlinked, then what reading the file kept or left."""
        return [*self.players.lines(), *self.notes]


class _Problems:
    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, where: str, error: values.BadValue) -> None:
        self.found.append(f"{where} {error}")

    def raise_any(self, source: str) -> None:
        if not self.found:
            return
        shown = self.found[:MAX_PROBLEMS]
        more = len(self.found) - len(shown)
        lines = "; ".join(shown) + (f"; and {more} more" if more else "")
        prefix = f"{source}: " if source else ""
        raise SheetError(f"{prefix}{lines}")


def sheets_clean(sheets: Any, *, source: str = "") -> list[dict[str, Any]]:
    """Every sheet checked and normalised, or :class:`SheetError` listing what is wrong.

    Nothing is written here; a caller writes only what this returns. ``source`` (a file name)
    starts the message.
    """
    if isinstance(sheets, dict):
        sheets = sheets.get("characters")
    if not isinstance(sheets, list):
        raise SheetError(f"{source}: {NOT_A_LIST}" if source else NOT_A_LIST)
    problems = _Problems()
    cleaned: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, sheet in enumerate(sheets, start=1):
        if not isinstance(sheet, dict):
            problems.add(
                f"character number {index}",
                values.BadValue(f"is {values.shown(sheet)}, not a sheet"),
            )
            continue
        raw_name = sheet.get("name")
        if raw_name is None or (isinstance(raw_name, str) and not raw_name.strip()):
            problems.add(f"character number {index}", values.BadValue("has no name"))
            continue
        try:
            name = values.required_name(Character, "name", sheet.get("name"))
        except values.BadValue as error:
            problems.add(f"character number {index}, name", error)
            continue
        who = f"character {values.shown(name)} (number {index}),"
        if name in seen:
            problems.add(who, values.BadValue("appears twice in the file"))
            continue
        seen.add(name)
        cleaned.append(_sheet_clean(sheet, name, who, problems))
    problems.raise_any(source)
    return cleaned


def _sheet_clean(sheet: dict[str, Any], name: str, who: str, problems: _Problems) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}

    def attempt(where: str, check: Any, *args: Any) -> Any:
        try:
            return check(*args)
        except values.BadValue as error:
            problems.add(f"{who} {where}", error)
            return None

    for key in SCALARS:
        if key in sheet and (sheet[key] is not None or key == "generation"):
            out[key] = attempt(key, values.checked, Character, key, sheet[key])
    player = sheet.get("player") or ""
    out["player"] = attempt("player", values.checked, get_user_model(), "username", player) or ""

    for key in ("traits", "negative_traits"):
        out[key] = {}
        categories = attempt(key, values.mapping, sheet.get(key), "categories") or {}
        for category, traits in categories.items():
            where = f"{key} {values.shown(category)}"
            if attempt(where, values.checked, Trait, "category", category) is None:
                continue
            bucket = out[key][category] = {}
            for trait, count in (attempt(where, values.mapping, traits, "traits") or {}).items():
                trait_name = attempt(where, values.required_name, Trait, "name", trait)
                if trait_name is not None:
                    bucket[trait_name] = attempt(
                        f"{where} {values.shown(trait_name)}", values.rated, Trait, "count", count
                    )

    for key, model, number in (("abilities", Ability, "rating"), ("powers", Power, "level")):
        out[key] = {}
        for item, value in (attempt(key, values.mapping, sheet.get(key), key) or {}).items():
            item_name = attempt(key, values.required_name, model, "name", item)
            if item_name is not None:
                rated = attempt(
                    f"{key} {values.shown(item_name)}", values.rated, model, number, value
                )
                out[key][item_name] = rated

    out["attributes"] = {}
    for item, value in (
        attempt("attributes", values.mapping, sheet.get("attributes"), "x") or {}
    ).items():
        item_name = attempt("attributes", values.required_name, Attribute, "name", item)
        if item_name is not None:
            out["attributes"][item_name] = attempt(
                f"attributes {values.shown(item_name)}", values.checked, Attribute, "value", value
            )

    out["health"] = []
    for i, level in enumerate(
        attempt("health", values.listing, sheet.get("health"), "levels") or [], 1
    ):
        where = f"health level {i}"
        if attempt(where, values.mapping, level, "fields") is None or not isinstance(level, dict):
            continue
        out["health"].append(
            {
                "name": attempt(
                    where + " name", values.required_name, HealthLevel, "name", level.get("name")
                ),
                "boxes": attempt(
                    where + " boxes", values.checked, HealthLevel, "boxes", level.get("boxes", 1)
                ),
                "penalty": attempt(
                    where + " penalty",
                    values.checked,
                    HealthLevel,
                    "penalty",
                    level.get("penalty", 0),
                ),
            }
        )
    if len(out["health"]) > 100:
        problems.add(
            f"{who} health", values.BadValue(f"has {len(out['health'])} levels; the limit is 100")
        )

    out["equipment"] = []
    for i, item in enumerate(
        attempt("equipment", values.listing, sheet.get("equipment"), "items") or [], 1
    ):
        where = f"equipment item {i}"
        if not isinstance(item, dict):
            problems.add(
                f"{who} {where}", values.BadValue(f"is {values.shown(item)}, not an object")
            )
            continue
        row = {
            "name": attempt(
                where + " name", values.required_name, Equipment, "name", item.get("name")
            )
        }
        for key in EQUIPMENT_FIELDS[1:]:
            if key in item and item[key] is not None:
                row[key] = attempt(f"{where} {key}", values.checked, Equipment, key, item[key])
        out["equipment"].append(row)

    out["lists"] = {}
    for list_name, entries in (
        attempt("lists", values.mapping, sheet.get("lists"), "lists") or {}
    ).items():
        clean_list = attempt("lists", values.required_name, SheetEntry, "list_name", list_name)
        if clean_list is None:
            continue
        where = f"list {values.shown(clean_list)}"
        rows = out["lists"].setdefault(clean_list, [])
        for i, entry in enumerate(attempt(where, values.listing, entries, "entries") or [], 1):
            if not isinstance(entry, dict):
                problems.add(
                    f"{who} {where} entry {i}",
                    values.BadValue(f"is {values.shown(entry)}, not an object"),
                )
                continue
            rows.append(
                {
                    "name": attempt(
                        f"{where} entry {i} name",
                        values.required_name,
                        SheetEntry,
                        "name",
                        entry.get("name"),
                    ),
                    "value": attempt(
                        f"{where} entry {i} value",
                        values.checked,
                        SheetEntry,
                        "value",
                        entry.get("value") or "",
                    ),
                    "note": attempt(
                        f"{where} entry {i} note",
                        values.checked,
                        SheetEntry,
                        "note",
                        entry.get("note") or "",
                    ),
                }
            )

    out["experience"] = []
    for i, x in enumerate(
        attempt("experience", values.listing, sheet.get("experience"), "entries") or [], 1
    ):
        where = f"experience entry {i}"
        if not isinstance(x, dict):
            problems.add(f"{who} {where}", values.BadValue(f"is {values.shown(x)}, not an object"))
            continue
        row = {"date": attempt(f"{where} date", _date_checked, x.get("date"))}
        for key, default in (
            ("change", 0),
            ("kind", ""),
            ("reason", ""),
            ("earned", 0),
            ("unspent", 0),
        ):
            value = x.get(key)
            row[key] = attempt(
                f"{where} {key}",
                values.checked,
                ExperienceEntry,
                key,
                default if value is None else value,
            )
        out["experience"].append(row)
    return out


def _date_checked(value: Any) -> str | None:
    """An ISO date-time kept as text (written by :func:`values.aware`), or None."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise values.BadValue(f"must be an ISO date, not {values.shown(value)}")
    try:
        values.aware(value)
    except (ValueError, OverflowError):
        raise values.BadValue(f"must be an ISO date, not {values.shown(value)}") from None
    return value


def chronicle_name_clean(name: Any) -> str:
    """A chronicle name an import may create, or :class:`SheetError` saying why not."""
    try:
        return values.required_name(Chronicle, "name", name)
    except values.BadValue as error:
        raise SheetError(f"the chronicle name {error}") from None


def sheets_import(
    *,
    chronicle_name: str,
    sheets: Any,
    source: str = "",
    storyteller: Any = None,
    notes: list[str] | None = None,
) -> ImportReport:
    """Check every sheet, then make the chronicle if needed and write, all in one transaction:
    a refused file leaves nothing behind, not even an empty chronicle.

    ``storyteller``: who imports; players are matched within the chronicles they run, and a
    chronicle the import makes is theirs. Without one, within the chronicle alone.
    """
    name = chronicle_name_clean(chronicle_name)
    cleaned = sheets_clean(sheets, source=source)
    with transaction.atomic():
        chronicle, made = Chronicle.objects.get_or_create(name=name)
        scope = None
        if storyteller is not None:
            if made:
                chronicle.storytellers.add(storyteller)
            scope = chronicles_run_by(storyteller)
        return sheets_write(
            chronicle=chronicle, sheets=cleaned, source=source, players_from=scope, notes=notes
        )


def sheets_write(
    *,
    chronicle: Chronicle,
    sheets: Any,
    source: str = "",
    players_from: QuerySet[Chronicle] | None = None,
    notes: list[str] | None = None,
) -> ImportReport:
    """Create or update (by name) every sheet in the chronicle, replacing its parts whole.

    Every sheet is checked first (:func:`sheets_clean`); a bad one writes nothing. Players are
    matched among the players of ``players_from`` (the chronicles the importing storyteller
    runs; this chronicle alone when None) or get a new account (:mod:`import_players`). A
    sheet that names no player keeps the player it has.
    """
    sheets = sheets_clean(sheets, source=source)
    report = ImportReport(total=len(sheets), notes=list(notes or []))
    by_name = {str(s["name"]).strip(): s for s in sheets}
    with transaction.atomic():
        report.players = players_resolve(
            chronicle=chronicle,
            names=[s["player"] for s in sheets if s.get("player")],
            scope=players_from,
        )
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
            player_name = (sheet.get("player") or "").strip()
            if player_name:
                character.player = report.players.users.get(player_name)
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
        for model, objects in _parts(ids, by_name).items():
            model.objects.bulk_create(objects)
        bump_sheets(ids.values())  # bulk writes send no signal (characters.sheet_versions)
    return report


def _parts(ids: dict[str, int], by_name: dict[str, dict[str, Any]]) -> dict[type, list[Any]]:
    """The rows of every sheet's parts, by model, to write in bulk."""
    rows: dict[type, list[Any]] = {model: [] for model in PARTS}
    for name, sheet in by_name.items():
        pk = ids[name]
        for key, negative in (("traits", False), ("negative_traits", True)):
            for category, traits in (sheet.get(key) or {}).items():
                for trait, counted in traits.items():
                    rows[Trait].append(
                        Trait(
                            character_id=pk,
                            category=category,
                            name=trait,
                            count=counted["count"],
                            note=counted["note"],
                            negative=negative,
                        )
                    )
        rows[Ability] += [
            Ability(character_id=pk, name=n, rating=a["rating"], note=a["note"])
            for n, a in sheet["abilities"].items()
        ]
        rows[Power] += [
            Power(character_id=pk, name=n, level=p["level"], note=p["note"])
            for n, p in sheet["powers"].items()
        ]
        rows[Attribute] += [
            Attribute(character_id=pk, name=n, value=v) for n, v in sheet["attributes"].items()
        ]
        rows[HealthLevel] += [
            HealthLevel(
                character_id=pk, name=h["name"], boxes=h["boxes"], penalty=h["penalty"], order=i
            )
            for i, h in enumerate(sheet["health"])
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
                value=e["value"],
                note=e["note"],
            )
            for list_name, entries in (sheet.get("lists") or {}).items()
            for e in entries
        ]
        rows[ExperienceEntry] += [
            ExperienceEntry(character_id=pk, **{**x, "date": values.aware(x["date"])})
            for x in sheet["experience"]
        ]
    return rows
