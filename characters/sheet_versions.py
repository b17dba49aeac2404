"""Every write to a sheet changes its character's ``sheet_version``.

A sheet is the character's row, its traits, abilities, powers, attributes, health levels,
equipment and sheet entries, and its ledger (which drives its current values). The per-process
sheet cache (:mod:`characters.sheet_cache`) keys what it keeps on that version, so a write
that left it as it was would show a stale sheet.

A saved or deleted row changes it through the model signals below. ``QuerySet.update()``,
``bulk_create()``, ``bulk_update()`` and raw SQL send no signal: code that writes sheet rows
that way calls :func:`bump_sheets` after the write, in the same transaction
(``tests/characters/test_sheet_versions.py`` scans the code for such writes).

A version is random, not a counter: a transaction that changed a sheet, read it (caching what
it read under its version) and then rolled back must not leave that version free for the
next write, whose contents differ. Bumps come after the write: a read between a bump and the
write it announces would be cached under the new version.

A write of the ledger alone (a cost, a refresh: most writes of a night) draws only the low
``LEDGER_BITS`` of the version anew and keeps the rest (:func:`rows_part`): the cache then
reads the ledger again, not the sheet's other rows, which that write did not change. Any
other write draws the whole version anew.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

from django.db import connections, models, router
from django.db.models import F, QuerySet
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save

from characters.models import (
    Ability,
    Attribute,
    Character,
    Equipment,
    HealthLevel,
    LedgerEntry,
    Power,
    SheetEntry,
    Trait,
    new_sheet_version,
)
from config.prepared import keep_signals, statement_cursor

# The rows of a sheet besides the character's own (each has a ``character`` foreign key).
SHEET_ROWS: tuple[type[models.Model], ...] = (
    Trait,
    Ability,
    Power,
    Attribute,
    HealthLevel,
    Equipment,
    SheetEntry,
    LedgerEntry,
)


# The low bits of a version a write of the ledger alone draws anew (the rest is the rows').
LEDGER_BITS = 31
_LEDGER_MASK = (1 << LEDGER_BITS) - 1


def rows_part(version: int) -> int:
    """What of a sheet version only a write of the sheet's rows (or the character's own row)
    changes: equal in two versions, the sheet's rows besides its ledger are the same."""
    return version >> LEDGER_BITS


def _ids(character_ids: Iterable[int]) -> list[int]:
    return sorted({int(pk) for pk in character_ids if pk is not None})


def bump_sheets(character_ids: Iterable[int]) -> int:
    """Give these characters a new sheet version (after writing their rows in bulk); the
    version written."""
    version = new_sheet_version()
    ids = _ids(character_ids)
    if ids:
        Character.objects.filter(pk__in=ids).update(sheet_version=version)
    return version


def bump_ledgers(character_ids: Iterable[int]) -> None:
    """Give these characters a new sheet version after a write of their ledger alone (entries
    written in bulk): its ledger bits drawn anew (never all zero), its rows' part kept."""
    _bump(LedgerEntry, character_ids)


def insert_ledger_entry(entry: LedgerEntry) -> None:
    """Insert the new ``entry`` and draw its character's ledger bits anew, as ``save()`` and
    its receiver do: on PostgreSQL in one statement (the bump in the INSERT's ``WITH``, its
    text built once), no model built for the bump and no signal sent; elsewhere by
    ``save()``. One statement: no read can come between the write and its bump."""
    connection = connections[router.db_for_write(LedgerEntry)]
    if connection.vendor != "postgresql" or entry.pk is not None or _ledger_heard_elsewhere():
        entry.save(force_insert=True)
        return
    text, chosen = _ledger_insert(connection)
    values = [f.get_db_prep_save(f.pre_save(entry, True), connection) for f in chosen]
    bump = [~_LEDGER_MASK, secrets.randbelow(_LEDGER_MASK) + 1, entry.character_id]
    with statement_cursor(connection) as cursor:
        cursor.execute(text, [*bump, *values])
        pk, bumped = cursor.fetchone()
    if bumped != 1:
        raise RuntimeError(f"no character {entry.character_id} to bump")
    entry.pk = pk
    entry._state.adding, entry._state.db = False, connection.alias


def _ledger_heard_elsewhere() -> bool:
    """Whether a receiver other than this module's bump listens to a new ledger entry: it is
    then saved by ``save()``, so that no receiver added later is skipped without a word."""
    sync, asynchronous = post_save._live_receivers(LedgerEntry)
    return pre_save.has_listeners(LedgerEntry) or bool(asynchronous) or sync != [_row_saved]


_LEDGER_INSERTS: dict[str, tuple[str, tuple[models.Field, ...]]] = {}


def _ledger_insert(connection: Any) -> tuple[str, tuple[models.Field, ...]]:
    """:func:`insert_ledger_entry`'s statement and the entry's fields it writes, in order."""
    known = _LEDGER_INSERTS.get(connection.alias)
    if known is None:
        q, meta, characters = connection.ops.quote_name, LedgerEntry._meta, Character._meta
        chosen = tuple(f for f in meta.concrete_fields if not f.primary_key and not f.generated)
        version = q(characters.get_field("sheet_version").column)
        text = (
            f"WITH bump AS (UPDATE {q(characters.db_table)} SET {version} ="
            f" ({version} & %s) | %s WHERE {q(characters.pk.column)} = %s RETURNING 1)"
            f" INSERT INTO {q(meta.db_table)} ({', '.join(q(f.column) for f in chosen)})"
            f" VALUES ({', '.join(['%s'] * len(chosen))})"
            f" RETURNING {q(meta.pk.column)}, (SELECT count(*) FROM bump)"
        )
        known = _LEDGER_INSERTS[connection.alias] = (text, chosen)
    return known


def _new_version(model: type[models.Model]) -> Any:
    """The new version a write of ``model``'s rows calls for: the ledger's bits drawn anew
    (an expression of the version it replaces), or a whole new one."""
    if model is not LedgerEntry:
        return new_sheet_version()
    ledger = secrets.randbelow(_LEDGER_MASK) + 1
    return F("sheet_version").bitand(~_LEDGER_MASK).bitor(ledger)


def _bump(model: type[models.Model], character_ids: Iterable[int]) -> None:
    ids = _ids(character_ids)
    if ids:
        Character.objects.filter(pk__in=ids).update(sheet_version=_new_version(model))


def _character_saving(sender: Any, instance: Character, **kwargs: Any) -> None:
    instance.sheet_version = new_sheet_version()


def _character_saved(sender: Any, instance: Character, update_fields: Any, **kwargs: Any) -> None:
    if update_fields is not None and "sheet_version" not in update_fields:
        # a save of some fields only did not write the new one
        instance.sheet_version = bump_sheets([instance.pk])


def _row_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    _bump(sender, [instance.character_id])


def _whole_character(origin: Any) -> bool:
    return isinstance(origin, Character) or getattr(origin, "model", None) is Character


def _rows_deleting(sender: Any, instance: Any, origin: Any = None, **kwargs: Any) -> None:
    """A ``QuerySet.delete()`` of sheet rows: one bump for all their characters, sent with
    the first row (nothing reads between the signals and the deletion that follows them)."""
    if not isinstance(origin, QuerySet) or origin.model is not sender:
        return
    if getattr(origin, "_sheets_bumped", False):
        return
    origin._sheets_bumped = True  # type: ignore[attr-defined]
    characters = Character.objects.filter(pk__in=origin.values("character_id"))
    characters.update(sheet_version=_new_version(sender))


def _row_deleted(sender: Any, instance: Any, origin: Any = None, **kwargs: Any) -> None:
    if _whole_character(origin):
        return  # the character itself goes
    if isinstance(origin, QuerySet) and origin.model is sender:
        return  # bumped by _rows_deleting
    _bump(sender, [instance.character_id])


def connect() -> None:
    """Connect the receivers (``CharactersConfig.ready``)."""
    pre_save.connect(_character_saving, sender=Character, dispatch_uid="sheet_version.pre")
    post_save.connect(_character_saved, sender=Character, dispatch_uid="sheet_version.post")
    for model in SHEET_ROWS:
        uid = f"sheet_version.{model.__name__}"
        post_save.connect(_row_saved, sender=model, dispatch_uid=f"{uid}.save")
        pre_delete.connect(_rows_deleting, sender=model, dispatch_uid=f"{uid}.deleting")
        post_delete.connect(_row_deleted, sender=model, dispatch_uid=f"{uid}.delete")
    # the writes config.prepared makes without signals refuse sheets (or save them)
    keep_signals(Character, *SHEET_ROWS)
