"""Reads of sheets: permanent values from the sheet, current ones through the ledger.

Lost traits, spent ability points and once-per-night uses count in the open game night only;
willpower, blood, rage, gnosis and damage count since the character's last refresh, which the
storyteller gives at the start of a game night (RULES.md, Shared terms).

Current values come from one place, :func:`current_values_for` (many characters, one query
for their ledger) and its one-character form :func:`current_values`: sheets, the chronicle
page and live scenes all call it. By construction every current value lies in 0..permanent:
a reversal cancels the entry it reverses (both must still count), a W7 regain restores the
losses recorded before it, and damage never fills more boxes than the health track has.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db.models import F, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from characters.access import (  # noqa: F401 (the one rule lives there; kept importable here)
    characters_visible_to,
    chronicles_run_by,
)
from characters.models import (
    HEALTH_TRACKS,
    PER_NIGHT_KINDS,
    Character,
    DamageType,
    GameNight,
    LedgerEntry,
    LedgerKind,
    Trait,
)
from config.prepared import Prepared

SHEET_PREFETCH = (
    Prefetch("traits", queryset=Trait.objects.order_by("category", "negative", "name")),
    "abilities",
    "powers",
    "attributes",
    "entries",
    "health",
    "equipment",
)


def _counting_query(ids: list[int]) -> QuerySet[LedgerEntry]:
    """The entries of these characters that count now, oldest first.

    Per-night kinds count in the chronicle's open game night; the other kinds since the
    character's last refresh. A reversal counts only with the entry it reverses, and the pair
    then cancels out: the reversed entry is as if it had never been written.
    """
    last_refresh = (
        LedgerEntry.objects.filter(character_id=OuterRef("character_id"), kind=LedgerKind.REFRESH)
        .order_by("-pk")
        .values("pk")[:1]
    )
    open_night = GameNight.objects.filter(
        chronicle_id=OuterRef("character__chronicle_id"), closed_at__isnull=True
    ).values("pk")[:1]
    per_night = Q(kind__in=PER_NIGHT_KINDS, game_night_id=F("open_night"))
    until_refresh = (
        ~Q(kind__in=PER_NIGHT_KINDS) & ~Q(kind=LedgerKind.REFRESH) & Q(pk__gt=F("last_refresh"))
    )
    return (
        LedgerEntry.objects.filter(character_id__in=ids)
        .annotate(
            last_refresh=Coalesce(Subquery(last_refresh), Value(0)),
            open_night=Subquery(open_night),
        )
        .filter(per_night | until_refresh)
        .order_by("pk")
    )


# Its SQL is built once per process and number of characters (config.prepared).
_counting = Prepared(_counting_query, model=LedgerEntry)


def _ledger_that_counts(characters: list[Character]) -> dict[int, list[LedgerEntry]]:
    """Entries that count now, per character, oldest first, in one query
    (:func:`_counting_query`)."""
    counting: dict[int, list[LedgerEntry]] = {c.pk: [] for c in characters}
    for entry in _counting.run(list(counting)):
        counting[entry.character_id].append(entry)
    return counting


def _cancel_reversals(entries: list[LedgerEntry]) -> list[LedgerEntry]:
    """Drop each reversal together with the entry it reverses (both must count)."""
    ids = {e.pk for e in entries}
    cancelled = {e.reverses_id for e in entries if e.reverses_id in ids}
    return [e for e in entries if e.reverses_id is None and e.pk not in cancelled]


def _clamp(value: int, top: int) -> int:
    return min(max(value, 0), top)


def current_values_for(characters: Iterable[Character]) -> dict[int, dict]:
    """Permanent and current values of several sheets, by character id, in one query.

    The one place current values come from (sheets, the chronicle page, live scenes): current
    = permanent - what the ledger says, always within 0..permanent. The characters should come
    with ``SHEET_PREFETCH`` (or at least their traits, abilities and health) prefetched.
    """
    characters = list(characters)
    counting = _ledger_that_counts(characters)
    values = {}
    for c in characters:
        values[c.pk] = _current(c, _cancel_reversals(counting[c.pk]))
        values[c.pk]["ledger"] = counting[c.pk]  # what counts tonight, reversals included
    return values


def current_values(character: Character) -> dict:
    """Permanent and current values of one sheet (see :func:`current_values_for`)."""
    return current_values_for([character])[character.pk]


def _current(character: Character, entries: list[LedgerEntry]) -> dict:
    lost: dict[tuple[str, str], int] = defaultdict(int)
    damage: dict[str, int] = defaultdict(int)
    spent_ability: dict[str, int] = defaultdict(int)
    pools: dict[str, int] = defaultdict(int)
    for entry in entries:  # oldest first: a regain restores what was lost before it only
        if entry.kind == LedgerKind.TRAIT_LOST:
            lost[(entry.category, entry.subject.casefold())] += entry.amount
        elif entry.kind == LedgerKind.TRAIT_REGAINED:
            for key in [k for k in lost if k[0] == entry.category]:
                lost[key] = 0
        elif entry.kind == LedgerKind.ABILITY_SPENT:
            spent_ability[entry.subject.casefold()] += entry.amount
        elif entry.kind == LedgerKind.HEALTH_DAMAGE:
            damage[entry.category] += entry.amount
        else:
            pools[entry.kind] += entry.amount

    traits: dict[str, dict[str, int]] = defaultdict(dict)
    permanent_traits: dict[str, dict[str, int]] = defaultdict(dict)
    for trait in character.traits.all():
        if trait.negative:
            continue
        permanent_traits[trait.category][trait.name] = trait.count
        gone = lost[(trait.category, trait.name.casefold())]
        traits[trait.category][trait.name] = _clamp(trait.count - gone, trait.count)
    abilities = {
        a.name: _clamp(a.rating - spent_ability[a.name.casefold()], a.rating)
        for a in character.abilities.all()
    }
    return {
        "traits": dict(traits),
        "permanent_traits": dict(permanent_traits),
        "abilities": abilities,
        "willpower": _clamp(
            character.willpower - pools[LedgerKind.WILLPOWER_SPENT], character.willpower
        ),
        "blood": _clamp(character.blood - pools[LedgerKind.BLOOD_SPENT], character.blood),
        "rage": _clamp(character.rage - pools[LedgerKind.RAGE_SPENT], character.rage),
        "gnosis": _clamp(character.gnosis - pools[LedgerKind.GNOSIS_SPENT], character.gnosis),
        **_health(character, damage),
    }


# Worst first: a box is filled by the most serious damage (aggravated, lethal, bashing);
# damage recorded without a type sits between lethal and bashing.
DAMAGE_ORDER = (DamageType.AGGRAVATED, DamageType.LETHAL, "", DamageType.BASHING)


def health_track(character: Character) -> list[tuple[str, int, int]]:
    """(name, boxes, penalty) per level: the sheet's own track, else its ruleset's default."""
    levels = [(h.name, h.boxes, h.penalty) for h in character.health.all()]
    if levels:
        return levels
    return HEALTH_TRACKS["wod_dice" if character.chronicle.ruleset == "wod_dice" else "met"]


def _health(character: Character, damage: dict[str, int]) -> dict:
    """The character's own track (or its ruleset's) filled: :func:`filled_track`."""
    return filled_track(health_track(character), damage)


def filled_track(track: list[tuple[str, int, int]], damage: dict[str, int]) -> dict:
    """A track (name, boxes, penalty per level; a quick NPC's too) with ``damage`` (amount by
    type, "" untyped) filled worst first, never past its last box (D2), and the level the
    character is at once hurt. A MET track (it begins with Healthy: Healthy ×2, Bruised ×3…)
    names the state a character is in while boxes of it are left, so the level is the first one
    with an empty box, as the challenges read it (C5–C7); the D2 track names the state a filled
    box brings (one box: Bruised), so the level is the last one filled."""
    size = sum(boxes for _, boxes, _ in track)
    filled: list[str | None] = []
    for kind in DAMAGE_ORDER:
        filled += [str(kind) or "untyped"] * max(damage.get(kind, 0), 0)
    filled = filled[:size] + [None] * max(size - len(filled), 0)
    taken = size - filled.count(None)
    states_left = bool(track) and track[0][0].casefold() == "healthy"
    levels, start, level, penalty = [], 0, None, 0
    for name, boxes, level_penalty in track:
        mine = filled[start : start + boxes]
        levels.append({"name": name, "penalty": level_penalty, "boxes": mine})
        if mine and mine[0] is not None:
            level, penalty = name, level_penalty
        start += boxes
    if states_left and taken:
        at = next((lv for lv in levels if None in lv["boxes"]), levels[-1])  # full: the last
        level, penalty = at["name"], at["penalty"]
    return {
        "damage": taken,
        "health": {"levels": levels, "boxes": size, "level": level, "penalty": penalty},
    }


def entry_counts(entry: LedgerEntry) -> bool:
    """Whether an entry still changes its character's current values (not reversed, not
    from a closed night or from before a refresh)."""
    counting = _ledger_that_counts([entry.character])[entry.character_id]
    return entry.pk in {e.pk for e in _cancel_reversals(counting)}


def sheet(character: Character, now: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything a sheet page shows, in a fixed number of queries whatever its size
    (``now``: its :func:`current_values`, when the caller has them already)."""
    now = current_values(character) if now is None else now
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
    pools = [
        _pool("Willpower", now["willpower"], character.willpower),
        _pool("Blood", now["blood"], character.blood, f"{character.blood_per_turn} per turn"),
        _pool("Rage", now["rage"], character.rage),
        _pool("Gnosis", now["gnosis"], character.gnosis),
    ]
    return {
        "character": character,
        "pools": [p for p in pools if p["name"] == "Willpower" or p["permanent"]],
        "categories": categories,
        "abilities": [
            {"ability": a, "current": now["abilities"][a.name]} for a in character.abilities.all()
        ],
        "now": now,
        "ledger": sorted(now["ledger"], key=lambda e: e.pk, reverse=True),
    }


def _pool(name: str, current: int, permanent: int, note: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "current": current,
        "permanent": permanent,
        "spent": permanent - current,
        "note": note,
    }
