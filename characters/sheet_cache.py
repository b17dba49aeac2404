"""Sheets read once per process while they do not change: a bounded cache keyed on versions.

:func:`sheets` answers what a sheet read always answered (the character with ``SHEET_PREFETCH``
and its current values, ``characters.selectors.current_values_for``) with one query when the
sheets are cached: the characters' own rows (with their chronicle and player, always fresh)
and, in the same query, the chronicle's open game night. The rows of each sheet and its
current values are kept under

    (character id, sheet version, open game night, chronicle's ruleset)

- the sheet version changes with every write to the character, its rows or its ledger
  (:mod:`characters.sheet_versions`);
- the open game night decides which per-night ledger entries count (a new night restores lost
  traits, ability points and once-per-night uses);
- the ruleset gives a sheet without its own health track its default one.

Nothing else is read by ``current_values_for``. A reader gets a character of its own (the
fresh row with the cached rows attached) and its own copy of the values' dicts and lists; the
rows themselves (traits, abilities, ledger entries…) are shared and must not be changed (they
are only read: ``tests/combat/challenges/test_sheet_cache.py`` compares the cache with a fresh
read after a whole challenge).

A miss reads the version first (with the row) and the sheet's rows after it, so a write
committed in between can only leave an entry newer than its key, never older; a version
written by a transaction that rolls back is never written again (it is random). A miss whose
version kept its rows' part (:func:`characters.sheet_versions.rows_part`: only the ledger was
written since, a cost or a refresh) reads the ledger alone, one query, and keeps the rows.

Its queries (the rows, and on a miss the sheet's rows and ledger) have their SQL built once
per process (:mod:`config.prepared`): they read the same rows every time, only cheaper.

One entry per character (its newest key), at most ``settings.SHEET_CACHE_SIZE`` characters,
least recently read dropped first.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import OuterRef, QuerySet, Subquery

from characters.models import Character, GameNight
from characters.selectors import SHEET_PREFETCH, current_values_for
from characters.sheet_versions import rows_part
from config.prepared import Prepared, PreparedPrefetch, PreparedValues

DEFAULT_SIZE = 500  # ~35 kB a demo sheet; a long Grapevine sheet a few times that


@dataclass(frozen=True)
class _Entry:
    key: Hashable
    version: int  # the sheet version it was read at (in its key)
    prefetched: dict[str, Any]  # relation name -> its prefetched QuerySet (rows shared)
    now: dict[str, Any]


_entries: OrderedDict[int, _Entry] = OrderedDict()
_lock = threading.Lock()


def size_limit() -> int:
    return int(getattr(settings, "SHEET_CACHE_SIZE", DEFAULT_SIZE))


def clear() -> None:
    with _lock:
        _entries.clear()


def cached_count() -> int:
    return len(_entries)


def _key(character: Character) -> Hashable:
    return (
        character.pk,
        character.sheet_version,
        character.open_night,  # type: ignore[attr-defined]
        character.chronicle.ruleset,
    )


def _rows_query(ids: list[int]) -> QuerySet[Character]:
    open_night = GameNight.objects.filter(
        chronicle_id=OuterRef("chronicle_id"), closed_at__isnull=True
    ).values("pk")[:1]
    rows = Character.objects.filter(pk__in=ids).select_related("player", "chronicle")
    return rows.annotate(open_night=Subquery(open_night))


# Its SQL is built once per process and number of ids (config.prepared).
_prepared_rows = Prepared(_rows_query, model=Character)


def _rows(ids: list[int]) -> list[Character]:
    return _prepared_rows.run(ids)


_SHARED = frozenset({str, int, bool, float, type(None)})


def _copied(value: Any) -> Any:
    """Dicts and lists copied all the way down; what they hold (numbers, text, rows) shared.
    (A reader's copy is made under the scene's lock: the plain values, most of a sheet, are
    told apart by their exact type first.)"""
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is dict:
        return {k: v if type(v) in _SHARED else _copied(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SHARED else _copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def _for_reader(
    row: Character, entry: _Entry, parts: tuple[str, ...] | None = None
) -> tuple[Character, dict[str, Any]]:
    row._prefetched_objects_cache = dict(entry.prefetched)  # the row is this reader's own
    if parts is not None:  # only these of the values, copied
        return row, {k: _copied(entry.now[k]) for k in parts}
    return row, _copied(entry.now)


def _keys_query(ids: list[int]) -> QuerySet[Character]:
    open_night = GameNight.objects.filter(
        chronicle_id=OuterRef("chronicle_id"), closed_at__isnull=True
    ).values("pk")[:1]
    rows = Character.objects.filter(pk__in=ids).annotate(open_night=Subquery(open_night))
    return rows.values_list("pk", "sheet_version", "chronicle__ruleset", "open_night")


# What :func:`_key` reads of each character, as plain values: its SQL built once per process
# and number of ids (config.prepared).
_prepared_keys = PreparedValues(_keys_query)


def parts_of(character_ids: Iterable[int], parts: tuple[str, ...]) -> dict[int, dict[str, Any]]:
    """``parts`` of the characters' current values (those that exist), by id, as
    :func:`sheets` gives them: one query of their keys' values alone when every sheet is
    cached and unchanged (no row made, nothing copied: what is given is the cache's own and
    must not be changed), else :func:`sheets` reads the others."""
    ids = list(dict.fromkeys(character_ids))
    if not ids:
        return {}
    found: dict[int, dict[str, Any]] = {}
    missing = []
    keys = _prepared_keys.run(ids)
    with _lock:
        for pk, version, ruleset, night in keys:
            entry = _entries.get(pk)
            if entry is not None and entry.key == (pk, version, night, ruleset):
                _entries.move_to_end(pk)
                found[pk] = {k: entry.now[k] for k in parts}
            else:
                missing.append(pk)
    for pk, (_row, now) in sheets(missing, parts=parts).items() if missing else ():
        found[pk] = now
    return found


def parts_of_rows(
    rows: Mapping[int, Character], parts: tuple[str, ...]
) -> dict[int, dict[str, Any]]:
    """As :func:`parts_of`, from characters' rows the caller has read as :func:`_rows_query`
    reads them (no query): a sheet cached at the row's key gives its ``parts`` as they are
    (the cache's own: never to be changed), the others are read by :func:`sheets`."""
    found: dict[int, dict[str, Any]] = {}
    missing = {}
    with _lock:
        for pk, row in rows.items():
            entry = _entries.get(pk)
            if entry is not None and entry.key == _key(row):
                _entries.move_to_end(pk)
                found[pk] = {k: entry.now[k] for k in parts}
            else:
                missing[pk] = row
    if missing:
        for pk, (_row, now) in sheets(list(missing), rows=missing, parts=parts).items():
            found[pk] = now
    return found


# SHEET_PREFETCH with each relation's SQL built once per process (config.prepared).
_prefetch = PreparedPrefetch(Character, SHEET_PREFETCH)


def _read(rows: list[Character], kept: Mapping[int, _Entry] | None = None) -> dict[int, _Entry]:
    """Read the sheets of ``rows`` (prefetch and ledger) into new entries, off copies of the
    rows so no reader's character is the one the cached rows point back to. ``kept``: the
    entries of these characters the cache holds: one whose rows' part of the version is the
    row's lends its rows, and only the ledger is read (None: every sheet read whole)."""
    kept = kept or {}
    held = [copy.copy(row) for row in rows]
    unread = []
    for character in held:
        entry = kept.get(character.pk)
        if entry is not None and rows_part(entry.version) == rows_part(character.sheet_version):
            character._prefetched_objects_cache = dict(entry.prefetched)
        else:
            character._prefetched_objects_cache = {}
            unread.append(character)
    if unread:
        _prefetch.run(unread)
    now = current_values_for(held)
    return {
        c.pk: _Entry(_key(c), c.sheet_version, dict(c._prefetched_objects_cache), now[c.pk])
        for c in held
    }


def sheets(
    character_ids: Iterable[int],
    *,
    rows: Mapping[int, Character] | None = None,
    parts: tuple[str, ...] | None = None,
) -> dict[int, tuple[Character, dict[str, Any]]]:
    """Characters (with ``SHEET_PREFETCH``) and their current values, by id (those that
    exist): one query when every sheet is cached and unchanged, else one more for the ledger
    of the changed ones together, and one per kind of row if any changed more than its
    ledger. ``rows``: characters' rows the caller has just read as :func:`_rows_query` reads
    them (their player and chronicle, ``open_night``), each the reader's own: they are not
    read again. ``parts``: only these of each sheet's values (copied; the rest is not)."""
    ids = list(dict.fromkeys(character_ids))
    if not ids:
        return {}
    given = rows or {}
    unread = [pk for pk in ids if pk not in given]
    rows = [given[pk] for pk in ids if pk in given] + (_rows(unread) if unread else [])
    found: dict[int, _Entry] = {}
    stale: dict[int, _Entry] = {}
    with _lock:
        for row in rows:
            entry = _entries.get(row.pk)
            if entry is not None and entry.key == _key(row):
                _entries.move_to_end(row.pk)
                found[row.pk] = entry
            elif entry is not None:
                stale[row.pk] = entry
    missing = [row for row in rows if row.pk not in found]
    if missing:
        fresh = _read(missing, stale)
        found.update(fresh)
        limit = size_limit()
        with _lock:
            for pk, entry in fresh.items():
                _entries[pk] = entry
                _entries.move_to_end(pk)
            while len(_entries) > limit:
                _entries.popitem(last=False)
    return {row.pk: _for_reader(row, found[row.pk], parts) for row in rows}
