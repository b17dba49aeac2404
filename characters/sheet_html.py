"""A sheet's body (``characters/_sheet_body.html``) rendered once per process while nothing it
shows changes.

A player's own part shows their characters' sheets, and it is rendered whole on every connect,
every sheet push and every answer to a tap of a round: the sheets, most of its cost, are the
same each time but for the one a cost changed. :func:`body` keeps each character's rendering
under everything it shows:

- every field of the character's row (its name, creature, pools… and ``sheet_version``, which
  changes with every write to its rows and its ledger, :mod:`characters.sheet_versions`);
- the chronicle's open game night (which ledger entries count tonight) and ruleset (the
  default health track of a sheet without its own);
- the player's names (``played by``).

Nothing else: the template reads only the sheet's values (:func:`characters.selectors.sheet`,
themselves a function of the rows, the ledger, the night and the ruleset), the same for every
viewer (no form, no token, no viewer's name). ``tests/characters/test_sheet_html.py`` has a test
per part of the key that fails without it, and compares the kept rendering with the include's.

A cost changes a few of the values a sheet shows (a trait's bubbles, a pool, the health
track), so a changed sheet is rendered by the template's parts (its inline partials,
:func:`_pieces`), and a part whose inputs are those of the entry kept is taken from it: every part
depends on the rows the key names but for the ledger's bits of ``sheet_version``
(:func:`characters.sheet_versions.rows_part`: equal, only the ledger was written since, and
the sheet's other rows are those the kept entry showed), and those that show current values on
the values they show (:func:`_pieces`). The parts joined are the template's rendering
(``tests/characters/test_sheet_html.py`` compares them after each kind of cost). A sheet seen
for the first time, or whose rows changed, is rendered whole (its parts one by one cost more);
its first ledger change renders every part.

One entry per character (its newest key), at most ``settings.SHEET_CACHE_SIZE`` characters,
least recently used dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string

from characters.models import Character
from characters.sheet_cache import size_limit
from characters.sheet_versions import rows_part

TEMPLATE = "characters/_sheet_body.html"
# What the template reads of a sheet (characters.selectors.sheet), as the phone's include names it.
_NAMES = ("character", "categories", "abilities", "now", "pools")


@dataclass(frozen=True)
class _Entry:
    key: Hashable  # :func:`key`
    rows: Hashable  # :func:`_rows_key`
    html: str
    # each part's current values -> its rendering (:func:`_pieces`); None: rendered whole
    pieces: dict[Hashable, str] | None


_entries: OrderedDict[int, _Entry] = OrderedDict()
_lock = threading.Lock()


def clear() -> None:
    with _lock:
        _entries.clear()


def key(character: Character) -> Hashable:
    """Everything the body of ``character``'s sheet shows depends on (a row read as
    :mod:`characters.sheet_cache` reads it: with its chronicle, player and ``open_night``)."""
    player = character.player if character.player_id else None
    names = (player.pk, player.first_name, player.last_name, player.username) if player else None
    row = tuple(getattr(character, f.attname) for f in Character._meta.concrete_fields)
    return (row, character.open_night, character.chronicle.ruleset, names)  # type: ignore[attr-defined]


_VERSION_AT = [f.attname for f in Character._meta.concrete_fields].index("sheet_version")


def _rows_key(wanted: Any) -> Hashable:
    """:func:`key` but for the ledger's bits of the sheet version: equal, only the ledger was
    written since (the sheet's rows are the same; its current values may not be)."""
    row, *rest = wanted
    at = _VERSION_AT
    return (row[:at], rows_part(row[at]), row[at + 1 :], *rest)


def _frozen(value: Any) -> Hashable:
    """Values of :func:`characters.selectors.current_values_for` (dicts, lists, numbers,
    text, None) as a key."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


# The pools a sheet shows (its ``pools`` part).
_POOLS = ("willpower", "blood", "rage", "gnosis")


def _pieces(sheet: Mapping[str, Any]) -> Iterator[tuple[Hashable, str, dict[str, Any]]]:
    """The template's parts for ``sheet`` in their order: (the current values it shows, its
    partial's name, its context)."""
    now = sheet["now"]
    character = {"character": sheet["character"]}
    yield "head", "head", character
    yield ("pools", *(now[k] for k in _POOLS)), "pools", {"pools": sheet["pools"]}
    for category in sheet["categories"]:
        name = category["name"]
        shown = (now["traits"].get(name), now["permanent_traits"].get(name))
        yield ("category", name, _frozen(shown)), "category", {"category": category}
    yield "attributes", "attributes", character
    yield ("abilities", _frozen(now["abilities"])), "abilities", {"abilities": sheet["abilities"]}
    yield "powers-equipment", "powers-equipment", character
    shown = (now["damage"], _frozen(now["health"]))
    yield ("health", shown), "health", {"now": now}
    yield "entries", "entries", character


def render(sheet: Mapping[str, Any]) -> str:
    """The body of one sheet (:func:`characters.selectors.sheet`'s values), rendered now."""
    return render_to_string(TEMPLATE, {name: sheet[name] for name in _NAMES})


def _render_pieces(
    sheet: Mapping[str, Any], kept: Mapping[Hashable, str]
) -> tuple[str, dict[Hashable, str]]:
    """The body of one sheet by its parts (:func:`_pieces`), each taken from ``kept`` when it
    shows the same values there (the sheet's rows being the same), else rendered now."""
    pieces: dict[Hashable, str] = {}
    out = []
    for shown, name, context in _pieces(sheet):
        html = kept.get(shown)
        if html is None:
            html = render_to_string(f"{TEMPLATE}#{name}", context)
        pieces[shown] = html
        out.append(html)
    return "".join(out), pieces


def body(sheet: Mapping[str, Any]) -> str:
    """The body of one sheet, as :func:`render` renders it: kept from an earlier rendering when
    nothing it shows has changed since (:func:`key`), else its parts that show what they
    showed then are (:func:`_render_pieces`)."""
    character = sheet["character"]
    wanted = key(character)
    rows = _rows_key(wanted)
    with _lock:
        found = _entries.get(character.pk)
        if found is not None and found.key == wanted:
            _entries.move_to_end(character.pk)
            return found.html
    if found is not None and found.rows == rows:  # only the ledger changed: by its parts
        html, pieces = _render_pieces(sheet, found.pieces or {})
    else:  # whole (cheaper than its parts: most sheets never change while kept)
        html, pieces = render(sheet), None
    limit = size_limit()
    with _lock:
        _entries[character.pk] = _Entry(wanted, rows, html, pieces)
        _entries.move_to_end(character.pk)
        while len(_entries) > limit:
            _entries.popitem(last=False)
    return html
