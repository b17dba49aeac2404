"""Idempotency keys: a write sent twice (a double tap, a retry after a dropped connection)
counts once.

A client sends a key it made up (the page puts a uuid4 in each form) with every write. The
service claims the key inside its own transaction, before it writes anything::

    with transaction.atomic():
        claim = idempotency_claim(user=user, action="ledger.spend", key=key, payload=args)
        if claim.replay:
            return LedgerEntry.objects.get(pk=claim.result["entry"])
        entry = ...  # the write itself
        claim.complete(entry=entry.pk)

Keys are scoped to the user and the action: another user or another action may use the same
key. The same key with another payload is refused (:class:`KeyReused`), never answered with
the first result. A key that is not 1 to 64 letters, digits, ``-`` or ``_`` is refused
(:class:`KeyMalformed`) before anything is written. If the transaction rolls back, the claim
goes with it, so a refused write can be sent again with the same key. Parallel requests with
one key wait for each other on the key's unique index: one writes, the others replay.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connections, router, transaction

from characters.models import IdempotencyKey
from config.prepared import statement_cursor

KEY_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
KEY_MALFORMED = (
    "The request's key must be 1 to 64 letters, digits, '-' or '_'; nothing was recorded. "
    "Reload the page and try again."
)
KEY_REUSED = (
    "This request's key was already used for a different request; nothing was recorded. "
    "Reload the page and try again."
)


class IdempotencyError(Exception):
    """A key refused, with a message for people; nothing was written."""


class KeyMalformed(IdempotencyError):
    """Not a key at all (blank, too long, odd characters): answer 400."""


class KeyReused(IdempotencyError):
    """The key was used by this user for this action with another payload: answer 409."""


def idempotency_key_check(key: str) -> str:
    """The key if it is well formed, else :class:`KeyMalformed`."""
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise KeyMalformed(KEY_MALFORMED)
    return key


def _fingerprint(payload: Mapping[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Claim:
    """A claimed key: ``replay`` is true when it was already used for this very request,
    and ``result`` is then what :meth:`complete` stored the first time."""

    record: IdempotencyKey
    replay: bool

    @property
    def result(self) -> dict[str, Any]:
        return self.record.result

    def complete(self, **result: Any) -> None:
        """Store what a replay should answer (ids, not objects: it is JSON)."""
        self.record.result = result
        self.record.save(update_fields=["result"])


_INSERTS: dict[str, tuple[str, tuple[Any, ...]]] = {}


def _insert_of(connection: Any) -> tuple[str, tuple[Any, ...]]:
    """The claim's ``INSERT … ON CONFLICT DO NOTHING RETURNING id`` and the fields it writes
    (every one but the id), built once per vendor."""
    known = _INSERTS.get(connection.vendor)
    if known is None:
        meta = IdempotencyKey._meta
        fields = tuple(f for f in meta.concrete_fields if not f.primary_key)
        quote = connection.ops.quote_name
        sql = (
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
            f" VALUES ({', '.join(['%s'] * len(fields))})"
            f" ON CONFLICT DO NOTHING RETURNING {quote(meta.pk.column)}"
        )
        known = _INSERTS[connection.vendor] = (sql, fields)
    return known


def _insert_unless_there(record: IdempotencyKey) -> bool:
    """Insert ``record`` unless its key is there already (``ON CONFLICT DO NOTHING``): one
    statement, and no savepoint for a failed insert to roll back to. A parallel request's
    insert of the same key is waited for, as by a unique index. True: inserted."""
    connection = connections[router.db_for_write(IdempotencyKey)]
    if not connection.features.can_return_columns_from_insert:  # an old SQLite: a savepoint
        try:
            with transaction.atomic(using=connection.alias):
                record.save(force_insert=True, using=connection.alias)
            return True
        except IntegrityError:
            return False
    sql, fields = _insert_of(connection)
    values = [f.get_db_prep_save(f.pre_save(record, True), connection) for f in fields]
    with statement_cursor(connection) as cursor:  # prepared on PostgreSQL: one text
        cursor.execute(sql, values)
        row = cursor.fetchone()
    if row is None:
        return False
    record.pk = row[0]
    record._state.adding, record._state.db = False, connection.alias
    return True


def idempotency_claim(
    *, user: AbstractBaseUser, action: str, key: str, payload: Mapping[str, Any]
) -> Claim:
    """Claim ``key`` for ``user`` and ``action``; call inside the write's transaction."""
    idempotency_key_check(key)
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("idempotency_claim must run inside the write's transaction")
    fingerprint = _fingerprint(payload)
    record = IdempotencyKey(user=user, action=action, key=key, fingerprint=fingerprint)
    if _insert_unless_there(record):
        return Claim(record=record, replay=False)
    # used before, or by a parallel request that has now committed
    record = IdempotencyKey.objects.get(user=user, action=action, key=key)
    if record.fingerprint != fingerprint:
        raise KeyReused(KEY_REUSED)
    return Claim(record=record, replay=True)
