"""Reading Grapevine 3 chronicle files (``.gex``) into sheets of the JSON export shape.

Every real file imports whole; a limit of ours is never a reason to refuse one. Experience
comes in half points (``change="0.5"``, ``4,5`` where the writer's locale said so), dates in
the writer's locale (``29/10/2008 00:26:48``, ``07/15/2010 18:21:12 PM``); a date no reading
makes sense of is left blank and said. Attributes and elements no column of ours holds are
kept: attributes in the sheet's *Grapevine* list (``sect``, ``path``, ``conscience``…),
elements' text in the notes. What was kept that way, or left out (Grapevine's items and
players are not characters), is said in :attr:`GrapevineRead.notes` for the import's summary.
A file that is not UTF-8 and declares no encoding is read as Windows-1252, as Grapevine on
Windows wrote it.

Uploads are untrusted: the size is capped before parsing, and defusedxml refuses entity
expansion, external entities and DTDs. A file that does not parse raises
:class:`GrapevineError` saying where (line and column), and nothing is imported.

Numbers are read strictly: a value that is not a number (``val="abc"``, ``1e9``, ``NaN``) is
kept as the text it was, so that :func:`characters.sheet_io.sheets_clean` refuses it naming
the character and the field. Powers and abilities keep Grapevine's value and note as written
(``Auspex: Spirit's Touch``, value 6, note ``int.``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from characters.models import XP_DECIMALS, Creature, SheetEntry, blood_per_turn

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
# Grapevine's other character types; anything else holding trait lists is a character too.
OTHER_CHARACTER_TAGS = {"kuei-jin", "kueijin", "mummy", "hunter", "demon", "various", "character"}
SCALAR_ATTRIBUTES = {
    "name",
    "player",
    "npc",
    "generation",
    "willpower",
    "blood",
    "rage",
    "gnosis",
    "nature",
    "demeanor",
    "narrator",
}
NOTE_ELEMENTS = {"notes": "", "biography": "Biography: ", "description": "Description: "}
KNOWN_ELEMENT_ATTRIBUTES = {
    "traitlist": {"name", "abc", "display", "atomic", "negative"},
    "trait": {"name", "val", "note"},
    "entry": {"date", "change", "type", "reason", "earned", "unspent"},
    "experience": {"earned", "unspent"},
}
# Unknown attributes are kept in this list of the sheet (one entry per attribute).
KEPT_LIST = "Grapevine"
_VALUE_MAX = SheetEntry._meta.get_field("value").max_length
_NAME_MAX = SheetEntry._meta.get_field("name").max_length
_EQUIPMENT_BONUS = re.compile(r"\+(\d+)")
_EQUIPMENT_DAMAGE = re.compile(r"(\d+)\s*(bashing|lethal|aggravated|agg)\b", re.IGNORECASE)
_DECLARES_ENCODING = re.compile(rb"^\s*<\?xml[^>]*\bencoding\s*=", re.IGNORECASE)


class GrapevineError(Exception):
    """A Grapevine file that cannot be imported, with where it broke when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass
class GrapevineRead:
    """The sheets of a file, and what the import's summary should say about reading it."""

    sheets: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


class _Seen:
    """What reading kept elsewhere or left out, gathered for a short summary."""

    def __init__(self) -> None:
        self.kept_attributes: Counter[str] = Counter()
        self.kept_elements: Counter[str] = Counter()
        self.left_out: Counter[str] = Counter()
        self.dates: list[str] = []
        self.rounded: list[str] = []
        self.other: list[str] = []

    def lines(self) -> list[str]:
        lines = list(self.other)
        if self.kept_attributes:
            names = ", ".join(sorted(self.kept_attributes))
            lines.append(f"Kept in each sheet's {KEPT_LIST!r} list (no column of ours): {names}.")
        if self.kept_elements:
            names = ", ".join(f"<{tag}>" for tag in sorted(self.kept_elements))
            lines.append(f"Kept in the notes: {names}.")
        if self.left_out:
            names = ", ".join(f"{what} ({n})" for what, n in sorted(self.left_out.items()))
            lines.append(f"Left out: {names}.")
        for kind, items in (
            ("Dates no reading makes sense of, left blank", self.dates),
            ("Experience rounded to two decimals", self.rounded),
        ):
            if items:
                more = f"; and {len(items) - 5} more" if len(items) > 5 else ""
                lines.append(f"{kind}: {'; '.join(items[:5])}{more}.")
        return lines


def parse_grapevine(data: bytes, *, max_bytes: int | None = None) -> list[dict[str, Any]]:
    """Every character of a Grapevine 3 file, as sheets of the export shape."""
    return read_grapevine(data, max_bytes=max_bytes).sheets


def read_grapevine(data: bytes, *, max_bytes: int | None = None) -> GrapevineRead:
    """Every character of a Grapevine 3 file, and what reading it kept elsewhere or left out."""
    if max_bytes is not None and len(data) > max_bytes:
        raise GrapevineError(TOO_BIG.format(size=len(data), limit=max_bytes))
    seen = _Seen()
    root = _parse(data, seen)
    if root.tag != "grapevine":
        raise GrapevineError(NOT_GRAPEVINE.format(tag=root.tag))
    day_first = _day_first(root)
    sheets = []
    for child in root:
        if _is_character(child):
            sheets.append(_sheet(child, day_first, seen))
        else:
            seen.left_out[f"<{child.tag}> (not a character)"] += 1
    return GrapevineRead(sheets=sheets, notes=seen.lines())


def _parse(data: bytes, seen: _Seen) -> Element:
    try:
        return _parse_once(data)
    except GrapevineError:
        if _DECLARES_ENCODING.match(data) or _is_utf8(data):
            raise
    # Grapevine on Windows wrote its code page and declared nothing: read it as that.
    root = _parse_once(data.decode("cp1252", errors="replace").encode("utf-8"))
    seen.other.append("The file is not UTF-8 and declares no encoding: read as Windows-1252.")
    return root


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _parse_once(data: bytes) -> Element:
    try:
        return fromstring(data, forbid_dtd=True)
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


def _is_character(element: Element) -> bool:
    if element.get("name") is None or not isinstance(element.tag, str):
        return False
    tag = element.tag.lower()
    if tag in CREATURES or tag in OTHER_CHARACTER_TAGS:
        return True
    return any(child.tag in {"traitlist", "experience"} for child in element)


_WHOLE = re.compile(r"-?\d{1,18}")
_DECIMAL = re.compile(r"-?\d{1,18}(?:[.,]\d{1,18})?")
_XP_STEP = Decimal(1).scaleb(-XP_DECIMALS)


def _number(value: str | None, default: int | None = 0) -> int | str | None:
    """A whole number, the default when blank, or the text itself when it is no number."""
    if value is None or value.strip() == "":
        return default
    text = value.strip()
    return int(text) if _WHOLE.fullmatch(text) else text


def _points(value: str | None, where: str, seen: _Seen) -> Decimal | str:
    """Experience points: half points and a locale's decimal comma are real; more decimals
    than ours are rounded (and said); anything else stays text, to be refused."""
    if value is None or value.strip() == "":
        return Decimal(0)
    text = value.strip()
    if not _DECIMAL.fullmatch(text):
        return text
    amount = Decimal(text.replace(",", "."))
    rounded = amount.quantize(_XP_STEP, rounding=ROUND_HALF_EVEN)
    if rounded != amount:
        seen.rounded.append(f"{where} {text} to {rounded}")
    return rounded


def _add(first: int | str, second: int | str) -> int | str:
    """Counts of a trait listed twice add up; a bad one stays as it was, to be refused."""
    if isinstance(first, int) and isinstance(second, int):
        return first + second
    return second if isinstance(first, int) else first


def _sheet(element: Element, day_first: bool, seen: _Seen) -> dict[str, Any]:
    attrs = element.attrib
    tag = element.tag.lower()
    creature = tag if tag in CREATURES else "other"
    generation = _number(attrs.get("generation"), None)
    affiliation_key = next((a for a in AFFILIATION_ATTRIBUTES if attrs.get(a)), None)
    name = attrs["name"].strip()
    sheet: dict[str, Any] = {
        "name": name,
        "creature": creature,
        "affiliation": attrs[affiliation_key] if affiliation_key else "",
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
    if creature == "other" and tag != "character":
        _keep(sheet, "type", element.tag, seen)
    for key, value in attrs.items():
        if key not in SCALAR_ATTRIBUTES and key != affiliation_key:
            _keep(sheet, key, value, seen)
    for child in element:
        if child.tag == "traitlist":
            _unknown_attributes(child, seen)
            _traitlist(sheet, child, seen)
        elif child.tag == "experience":
            _experience(sheet, child, day_first, seen)
        elif child.tag in NOTE_ELEMENTS:
            _note(sheet, NOTE_ELEMENTS[child.tag], _text_of(child))
        elif isinstance(child.tag, str):
            text = _text_of(child)
            if text:
                _note(sheet, f"{child.tag}: ", text)
                seen.kept_elements[child.tag] += 1
            else:
                seen.left_out[f"empty <{child.tag}>"] += 1
    return sheet


def _text_of(element: Element) -> str:
    """An element's text (CDATA included), its attributes and its children's, as one text."""
    parts = [f"{key}={value}" for key, value in element.attrib.items()]
    text = "".join(element.itertext()).strip()
    return "\n".join(filter(None, [" ".join(parts), text]))


def _note(sheet: dict[str, Any], label: str, text: str) -> None:
    if text:
        sheet["notes"] = "\n\n".join(filter(None, [sheet["notes"], label + text]))


def _keep(sheet: dict[str, Any], key: str, value: str, seen: _Seen) -> None:
    """An attribute no column holds, kept in the sheet's Grapevine list."""
    name = key if len(key) <= _NAME_MAX else key[: _NAME_MAX - 1] + "…"
    short = value if len(value) <= _VALUE_MAX else ""
    note = "" if short or not value else value
    sheet["lists"].setdefault(KEPT_LIST, []).append({"name": name, "value": short, "note": note})
    seen.kept_attributes[name] += 1


def _unknown_attributes(element: Element, seen: _Seen) -> None:
    known = KNOWN_ELEMENT_ATTRIBUTES.get(element.tag, set())
    for key in element.attrib:
        if key not in known:
            seen.left_out[f"{key}= of <{element.tag}>"] += 1


def _experience(sheet: dict[str, Any], element: Element, day_first: bool, seen: _Seen) -> None:
    _unknown_attributes(element, seen)
    for key in ("earned", "unspent"):
        if element.get(key, "").strip():
            _keep(sheet, f"experience {key}", element.get(key, "").strip(), seen)
    who = sheet["name"]
    for number, entry in enumerate((e for e in element if e.tag == "entry"), start=1):
        _unknown_attributes(entry, seen)
        where = f"{who!r}, experience entry {number}"
        written = entry.get("date", "")
        date = _date(written, day_first)
        if date is None and written.strip() and not _TIME_ONLY.fullmatch(written.strip()):
            seen.dates.append(f"{written.strip()!r} ({where})")
        sheet["experience"].append(
            {
                "date": date,
                "change": _points(entry.get("change"), where + " change", seen),
                "kind": entry.get("type", ""),
                "reason": entry.get("reason", ""),
                "earned": _points(entry.get("earned"), where + " earned", seen),
                "unspent": _points(entry.get("unspent"), where + " unspent", seen),
            }
        )
    for child in element:
        if child.tag != "entry":
            seen.left_out[f"<{child.tag}> in <experience>"] += 1


def _traitlist(sheet: dict[str, Any], traitlist: Element, seen: _Seen) -> None:
    name = traitlist.get("name", "")
    for trait in traitlist:
        if trait.tag != "trait" or not (trait.get("name") or "").strip():
            seen.left_out[f"<{trait.tag}> without a name in a trait list"] += 1
            continue
        _unknown_attributes(trait, seen)
        trait_name = trait.get("name", "").strip()
        val = trait.get("val")
        count = _number(val, 1) or 1
        note = trait.get("note", "")
        if name in TRAIT_LISTS:
            _counted(sheet["traits"][TRAIT_LISTS[name]], trait_name, count, note)
        elif name in NEGATIVE_LISTS:
            _counted(sheet["negative_traits"][NEGATIVE_LISTS[name]], trait_name, count, note)
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


def _counted(bucket: dict[str, Any], name: str, count: int | str, note: str) -> None:
    """A trait (counts add up when listed twice), with its note if any (``Brawny``, ``str``)."""
    before = bucket.get(name)
    if before is not None:
        previous = before["count"] if isinstance(before, dict) else before
        count = _add(previous, count)
        earlier = before.get("note", "") if isinstance(before, dict) else ""
        note = "; ".join(filter(None, [earlier, note]))
    bucket[name] = {"count": count, "note": note} if note else count


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


# Day, month and year in either order, with -, / or . between; a time after, 12- or 24-hour
# (Grapevine wrote ``07/15/2010 18:21:12 PM`` too); a year first is always year-month-day.
_DATE = re.compile(
    r"(?P<a>\d{4}|\d{1,2})[/.\-](?P<b>\d{1,2})[/.\-](?P<c>\d{4}|\d{2})\.?"
    r"(?:[ T,]+(?P<hour>\d{1,2})[:.](?P<minute>\d{2})(?:[:.](?P<second>\d{2}))?(?:[.,]\d+)?"
    r"\s*(?P<half>[AaPp]\.?\s?[Mm]\.?)?)?(?:\s*\S+)?"
)
_TIME_ONLY = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?\s?[Mm]\.?)?")


def _day_first(root: Element) -> bool:
    """Grapevine wrote dates in the writer's locale; a day above 12 in the first place of any
    date tells the file is day-first (``29/10/2008``), else month-first (US)."""
    for element in root.iter():
        for key, value in element.attrib.items():
            if "date" not in key.lower() and key != "lastmodified":
                continue
            match = re.match(r"(\d{1,2})[/.\-](\d{1,2})[/.\-]\d{2,4}", value.strip())
            if not match:
                continue
            first, second = int(match.group(1)), int(match.group(2))
            if first > 12:
                return True
            if second > 12:
                return False
    return False


def _date(value: str, day_first: bool) -> str | None:
    """An ISO date-time, or None when Grapevine wrote only a time, nothing, or no date at all.

    The file's order (day or month first) is tried first, the other one when the first makes
    no date (a month of 13); a two-digit year is 1970–2069.
    """
    match = _DATE.fullmatch(value.strip())
    if not match:
        return None
    a, b, c = match.group("a"), match.group("b"), match.group("c")
    if len(a) == 4:
        orders = [(int(a), int(b), int(c))]
    else:
        year = int(c) + (0 if len(c) > 2 else 2000 if int(c) < 70 else 1900)
        day_month = [(int(a), int(b)), (int(b), int(a))]
        orders = [
            (year, month, day) for day, month in (day_month if day_first else day_month[::-1])
        ]
    hour = int(match.group("hour") or 0)
    half = (match.group("half") or "").lower()[:1]
    if half == "p" and hour < 12:
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    minute, second = int(match.group("minute") or 0), int(match.group("second") or 0)
    for year, month, day in orders:
        try:
            return datetime(year, month, day, hour, minute, second).isoformat()  # noqa: DTZ001
        except ValueError:
            continue
    return None
