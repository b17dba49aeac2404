"""Reading Grapevine 3 chronicle files (``.gex``) into sheets of the JSON export shape.

Uploads are untrusted: the size is capped before parsing, and defusedxml refuses entity
expansion, external entities and DTDs. A file that does not parse raises
:class:`GrapevineError` saying where (line and column), and nothing is imported.

Numbers are read strictly: a value that is not a whole number (``val="abc"``, ``1e9``) is
kept as the text it was, so that :func:`characters.sheet_io.sheets_clean` refuses it naming
the character and the field. Powers and abilities keep Grapevine's value and note as written
(``Auspex: Spirit's Touch``, value 6, note ``int.``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from characters.models import Creature, blood_per_turn

TOO_BIG = "The file is {size} bytes; the limit is {limit} bytes."
NOT_GRAPEVINE = "This is not a Grapevine 3 file: the top element is <{tag}>, not <grapevine>."
UNSAFE = "The file was refused: it declares entities or a DTD ({detail})."
BROKEN = "The file is not well-formed XML at line {line}, column {column} ({detail})"
NOT_TEXT = "The file could not be read as text: {detail}."

TRAIT_LISTS = {"Physical": "physical", "Social": "social", "Mental": "mental"}
NEGATIVE_LISTS = {f"Negative {name}": category for name, category in TRAIT_LISTS.items()}
POWER_LISTS = {
    "Disciplines",
    "Gifts",
    "Rites",
    "Rituals",
    "Spheres",
    "Rotes",
    "Arts",
    "Realms",
    "Arcanoi",
    "Numina",
    "Powers",
    "Thaumaturgy",
    "Necromancy",
}
AFFILIATION_ATTRIBUTES = ("clan", "tribe", "tradition", "kith", "guild", "affiliation", "breed")
CREATURES = {value for value, _label in Creature.choices}
_EQUIPMENT_BONUS = re.compile(r"\+(\d+)")
_EQUIPMENT_DAMAGE = re.compile(r"(\d+)\s*(bashing|lethal|aggravated|agg)\b", re.IGNORECASE)


class GrapevineError(Exception):
    """A Grapevine file that cannot be imported, with where it broke when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def parse_grapevine(data: bytes, *, max_bytes: int | None = None) -> list[dict[str, Any]]:
    """Every character of a Grapevine 3 file, as sheets of the export shape."""
    if max_bytes is not None and len(data) > max_bytes:
        raise GrapevineError(TOO_BIG.format(size=len(data), limit=max_bytes))
    try:
        root = fromstring(data)
    except DefusedXmlException as error:
        raise GrapevineError(UNSAFE.format(detail=type(error).__name__)) from None
    except ParseError as error:
        line, column = error.position
        detail = str(error).split(":")[0]
        raise GrapevineError(
            BROKEN.format(line=line, column=column + 1, detail=detail), line, column + 1
        ) from None
    except (UnicodeDecodeError, ValueError, LookupError) as error:
        raise GrapevineError(NOT_TEXT.format(detail=error)) from None
    if root.tag != "grapevine":
        raise GrapevineError(NOT_GRAPEVINE.format(tag=root.tag))
    elements = [child for child in root if child.get("name") is not None]
    day_first = _day_first(root)
    return [_sheet(element, day_first) for element in elements]


_WHOLE = re.compile(r"-?\d{1,18}")


def _number(value: str | None, default: int | None = 0) -> int | str | None:
    """A whole number, the default when blank, or the text itself when it is no number."""
    if value is None or value.strip() == "":
        return default
    text = value.strip()
    return int(text) if _WHOLE.fullmatch(text) else text


def _add(first: int | str, second: int | str) -> int | str:
    """Counts of a trait listed twice add up; a bad one stays as it was, to be refused."""
    if isinstance(first, int) and isinstance(second, int):
        return first + second
    return second if isinstance(first, int) else first


def _sheet(element: Element, day_first: bool) -> dict[str, Any]:
    attrs = element.attrib
    creature = element.tag.lower() if element.tag.lower() in CREATURES else "other"
    generation = _number(attrs.get("generation"), None)
    sheet: dict[str, Any] = {
        "name": attrs["name"].strip(),
        "creature": creature,
        "affiliation": next((attrs[a] for a in AFFILIATION_ATTRIBUTES if attrs.get(a)), ""),
        "player": attrs.get("player", "").strip(),
        "npc": attrs.get("npc", "").lower() in {"yes", "true", "1"},
        "generation": generation,
        "willpower": _number(attrs.get("willpower")),
        "blood": _number(attrs.get("blood")),
        "blood_per_turn": blood_per_turn(generation if isinstance(generation, int) else None),
        "rage": _number(attrs.get("rage")),
        "gnosis": _number(attrs.get("gnosis")),
        "nature": attrs.get("nature", ""),
        "demeanor": attrs.get("demeanor", ""),
        "narrator": attrs.get("narrator", ""),
        "notes": "",
        "traits": {"physical": {}, "social": {}, "mental": {}},
        "negative_traits": {"physical": {}, "social": {}, "mental": {}},
        "abilities": {},
        "powers": {},
        "attributes": {},
        "health": [],
        "equipment": [],
        "lists": {},
        "experience": [],
    }
    for child in element:
        if child.tag == "traitlist":
            _traitlist(sheet, child)
        elif child.tag == "experience":
            sheet["experience"] = [
                {
                    "date": _date(entry.get("date", ""), day_first),
                    "change": _number(entry.get("change")),
                    "kind": entry.get("type", ""),
                    "reason": entry.get("reason", ""),
                    "earned": _number(entry.get("earned")),
                    "unspent": _number(entry.get("unspent")),
                }
                for entry in child
                if entry.tag == "entry"
            ]
        elif child.tag in {"notes", "biography", "description"} and (child.text or "").strip():
            text = child.text.strip()  # type: ignore[union-attr]
            label = "" if child.tag == "notes" else f"{child.tag.capitalize()}: "
            sheet["notes"] = "\n\n".join(filter(None, [sheet["notes"], label + text]))
    return sheet


def _traitlist(sheet: dict[str, Any], traitlist: Element) -> None:
    name = traitlist.get("name", "")
    for trait in traitlist:
        if trait.tag != "trait" or not trait.get("name"):
            continue
        trait_name = trait.get("name", "").strip()
        val = trait.get("val")
        count = _number(val, 1) or 1
        note = trait.get("note", "")
        if name in TRAIT_LISTS:
            bucket = sheet["traits"][TRAIT_LISTS[name]]
            bucket[trait_name] = _add(bucket.get(trait_name, 0), count)
        elif name in NEGATIVE_LISTS:
            bucket = sheet["negative_traits"][NEGATIVE_LISTS[name]]
            bucket[trait_name] = _add(bucket.get(trait_name, 0), count)
        elif name == "Abilities":
            _rated(sheet["abilities"], trait_name, "rating", count, note)
        elif name in POWER_LISTS:
            _rated(sheet["powers"], trait_name, "level", count, note)
        elif name == "Health Levels":
            sheet["health"].append({"name": trait_name, "boxes": count, "penalty": 0})
        elif name == "Equipment":
            sheet["equipment"].append(_equipment(trait_name, count, note))
        else:
            sheet["lists"].setdefault(name, []).append(
                {"name": trait_name, "value": val or "", "note": note}
            )


def _rated(bucket: dict[str, Any], name: str, number: str, count: int | str, note: str) -> None:
    """An ability (ratings add up when listed twice) or a power, with its note if any."""
    before = bucket.get(name)
    if before is not None and number == "rating":
        previous = before[number] if isinstance(before, dict) else before
        count = _add(previous, count)
        note = note or (before.get("note", "") if isinstance(before, dict) else "")
    bucket[name] = {number: count, "note": note} if note else count


def _equipment(name: str, count: int | str, note: str) -> dict[str, Any]:
    """Grapevine keeps weapon stats in the note (``+2, 2 Lethal, Loud``)."""
    bonus = _EQUIPMENT_BONUS.search(note)
    damage = _EQUIPMENT_DAMAGE.search(note)
    damage_type = ""
    if damage:
        kind = damage.group(2).lower()
        damage_type = "aggravated" if kind.startswith("agg") else kind
    if not isinstance(count, int):
        # An item's count only goes into its name; a bad one is refused by name too.
        return {"name": name, "kind": "item", "bonus_traits": count, "note": note}
    return {
        "name": name if count == 1 else f"{name} x{count}",
        "kind": "weapon" if bonus or damage else "item",
        "bonus_traits": int(bonus.group(1)) if bonus else 0,
        "damage": int(damage.group(1)) if damage else 0,
        "damage_type": damage_type,
        "note": note,
    }


_DATE_FORMATS = ("%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y", "%Y-%m-%d %H:%M:%S")
_DAY_FIRST_FORMATS = ("%d/%m/%Y %H:%M:%S", "%d/%m/%Y %I:%M:%S %p", "%d/%m/%Y", "%d.%m.%Y %H:%M:%S")


def _day_first(root: Element) -> bool:
    """Grapevine wrote dates in the writer's locale; a day above 12 in the first place of any
    date tells the file is day-first (``29/10/2008``), else month-first (US)."""
    for element in root.iter():
        for key, value in element.attrib.items():
            if "date" not in key.lower() and key != "lastmodified":
                continue
            match = re.match(r"(\d{1,2})[/.](\d{1,2})[/.]\d{4}", value.strip())
            if not match:
                continue
            first, second = int(match.group(1)), int(match.group(2))
            if first > 12:
                return True
            if second > 12:
                return False
    return False


def _date(value: str, day_first: bool) -> str | None:
    """An ISO date-time, or None when Grapevine wrote only a time or nothing."""
    value = value.strip()
    formats = (
        (_DAY_FIRST_FORMATS + _DATE_FORMATS) if day_first else (_DATE_FORMATS + _DAY_FIRST_FORMATS)
    )
    for fmt in formats:
        try:
            return datetime.strptime(value, fmt).isoformat()  # noqa: DTZ007 (local, naive)
        except ValueError:
            continue
    return None
