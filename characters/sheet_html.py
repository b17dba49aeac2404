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

One entry per character (its newest key), at most ``settings.SHEET_CACHE_SIZE`` characters,
least recently used dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

from django.template.loader import render_to_string

from characters.models import Character
from characters.sheet_cache import size_limit

TEMPLATE = "characters/_sheet_body.html"
# What the template reads of a sheet (characters.selectors.sheet), as the phone's include names it.
_NAMES = ("character", "categories", "abilities", "now", "pools")

_entries: OrderedDict[int, tuple[Hashable, str]] = OrderedDict()
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


def render(sheet: Mapping[str, Any]) -> str:
    """The body of one sheet (:func:`characters.selectors.sheet`'s values), rendered now."""
    return render_to_string(TEMPLATE, {name: sheet[name] for name in _NAMES})


def body(sheet: Mapping[str, Any]) -> str:
    """The body of one sheet, as :func:`render` renders it: kept from an earlier rendering when
    nothing it shows has changed since (:func:`key`)."""
    character = sheet["character"]
    wanted = key(character)
    with _lock:
        found = _entries.get(character.pk)
        if found is not None and found[0] == wanted:
            _entries.move_to_end(character.pk)
            return found[1]
    html = render(sheet)
    limit = size_limit()
    with _lock:
        _entries[character.pk] = (wanted, html)
        _entries.move_to_end(character.pk)
        while len(_entries) > limit:
            _entries.popitem(last=False)
    return html
