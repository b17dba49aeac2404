"""Writes to chronicles, game nights and the ledger.

Every function runs in one transaction, locks the rows it changes, and raises
:class:`LedgerError` with a message for people (changing nothing) when the request cannot be met.
The ledger's writes (a cost, a regain, a reversal, damage) are declared steps
(:mod:`combat.steps`): lock the character, claim the request's key (a replay answers the
entry the first one wrote, before any other check), then the rules part below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connections, router, transaction
from django.db.models import BooleanField, Max, OuterRef, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.utils import timezone

from characters import sheet_cache
from characters.models import (
    PER_NIGHT_KINDS,
    Category,
    Character,
    Chronicle,
    DamageType,
    GameNight,
    LedgerEntry,
    LedgerKind,
)
from characters.selectors import current_values, entry_counts
from characters.sheet_versions import bump_ledgers, insert_ledger_entry
from characters.signals import night_closed, sheets_changed
from combat import steps
from config.prepared import Prepared

NO_OPEN_NIGHT = "No game night is open for {chronicle}: open one first."
NIGHT_ALREADY_OPENED = "Game night {number} is no longer the open one; nothing was changed."
NIGHT_OPENED_MEANWHILE = "Game night {number} was opened meanwhile; nothing was changed."
NOT_ENOUGH = "{character} has only {have} current {what}; cannot spend {amount}."
TRAIT_NOT_HELD = "{character} has no current {trait} ({category}) to lose."
ALREADY_REVERSED = "This entry was already reversed."
CANNOT_REVERSE_REVERSAL = "A reversal cannot itself be reversed; record a new entry instead."
CANNOT_REVERSE_REFRESH = "A refresh cannot be reversed; record the spending again instead."
NO_LONGER_COUNTS = (
    "This entry no longer counts ({why}), so reversing it would change nothing tonight; "
    "record a new entry instead."
)
REASON_REQUIRED = "Say why the entry is reversed."
TRACK_FULL = "{character} has no empty health box left; cannot take more damage."
TRACK_SHORT = "{character} has only {have} empty health boxes; cannot take {amount} damage."
DAMAGE_TYPE = "Damage is bashing, lethal or aggravated (or left without a type), not {kind}."
KIND_NOT_SPENT = "{kind} is not a cost to record here."
AMOUNT_POSITIVE = "The amount must be a whole number of at least 1."


REGAIN_CATEGORY = "W7: traits are regained in physical, social or mental, not {category}."
REGAIN_TWICE = (
    "W7: {character} already regained {category} traits tonight: once per game night per category."
)
REGAIN_NOTHING = "W7: {character} has lost nothing in {category} tonight: nothing to regain."
REGAIN_NO_WILLPOWER = "W7: {character} has no current willpower to spend on regaining traits."
PAID_FOR_REGAIN = (
    "This willpower paid for regaining {category} traits (W7): reverse the regain instead."
)


class LedgerError(steps.Refused):
    """A ledger change refused, with a message for the storyteller or player.

    ``rule_id`` names the RULES.md rule that refused it, when one did; ``field`` the
    service argument at fault, so a form can show the message beside the right field.
    """

    def __init__(
        self, message: str, rule_id: str | None = None, *, field: str | None = None
    ) -> None:
        super().__init__(message, rule_id or "")
        self.rule_id = rule_id
        self.field = field  # the argument at fault (subject, category, amount), if one is


def _announce_sheets(
    *, character_ids: tuple[int, ...] = (), chronicle_ids: tuple[int, ...] = ()
) -> None:
    """On commit: every open scene these sheets are in shows the change (``sheets_changed``,
    which combat hears: combat builds on characters, not the other way round)."""
    transaction.on_commit(
        partial(
            sheets_changed.send,
            sender=Character,
            character_ids=character_ids,
            chronicle_ids=chronicle_ids,
        )
    )


def _locked_character(pk: int) -> QuerySet[Character]:
    # its chronicle read with it (the open night, the health track), the character row locked;
    # and the open night's id, as the sheet cache keys a sheet (characters.sheet_cache)
    open_night = GameNight.objects.filter(
        chronicle_id=OuterRef("chronicle_id"), closed_at__isnull=True
    ).values("pk")[:1]
    locked = Character.objects.select_for_update(of=("self",)).select_related("chronicle")
    locked = locked.annotate(open_night=Subquery(open_night))
    return locked.filter(pk=pk).order_by()[:1]  # by its key, as ``get()`` reads it


# Its SQL is built once per process (config.prepared), as is the open night's.
_LOCKED_CHARACTER: Prepared[Character] = Prepared(_locked_character, model=Character)


def _lock_character(character: Character) -> tuple[None, Character]:
    """A ledger step locks the character (no scene: a sheet is not a scene)."""
    locked = _LOCKED_CHARACTER.first(character.pk)
    if locked is None:
        raise Character.DoesNotExist("Character matching query does not exist.")
    return None, locked


def _current_values(locked: Character) -> dict[str, Any]:
    """:func:`characters.selectors.current_values` of the locked character, from the
    process's sheet cache (:mod:`characters.sheet_cache`): kept under the sheet version the
    locked row holds, which every write of the sheet or its ledger changes and no other
    transaction can change while the row is locked, so what is kept there is what a read
    would find now. A sheet not kept (or kept at another version) is read, its ledger alone
    when only the ledger changed (one query, not four)."""
    if getattr(locked, "_prefetched_objects_cache", None):
        return current_values(locked)
    return sheet_cache.sheets([locked.pk], rows={locked.pk: locked})[locked.pk][1]


def _lock_entry(entry: LedgerEntry) -> tuple[None, LedgerEntry]:
    """The entry, then its character, so a spend or a regain of it waits for the reversal."""
    locked = LedgerEntry.objects.select_for_update().get(pk=entry.pk)
    Character.objects.select_for_update().get(pk=locked.character_id)
    return None, locked


def _step(action: str, lock: Callable[[Any], tuple[None, Any]]) -> steps.Step:
    return steps.declare(steps.Step(action=action, lock=lock, refusal=LedgerError))


#: The ledger's steps; their actions name the keys' namespaces, as before they were declared.
SPEND = _step("ledger.spend", _lock_character)
DAMAGE = _step("ledger.damage", _lock_character)
REGAIN = _step("ledger.regain", _lock_character)
REVERSE = _step("ledger.reverse", _lock_entry)


def _entry_answer(entry: LedgerEntry | None) -> dict[str, Any]:
    return {"entry": entry.pk if entry is not None else None}


def _entry_recalled(stored: Mapping[str, Any]) -> LedgerEntry | None:
    return None if stored.get("entry") is None else LedgerEntry.objects.get(pk=stored["entry"])


def _run(
    step: steps.Step,
    target: Any,
    *,
    by: AbstractBaseUser | None,
    key: str | None,
    payload: dict[str, Any],
    rules: Callable[[None, Any], Any],
) -> Any:
    """Run a ledger step; a replay answers the entry the first request wrote."""
    if key is not None and (by is None or not by.is_authenticated):
        raise ValueError("an idempotency key belongs to a user: pass by=")
    return steps.run(
        step,
        target,
        by=by,  # type: ignore[arg-type]
        key=key,
        payload=payload,
        rules=rules,
        answer=_entry_answer,
        recall=_entry_recalled,
    )


def game_night_open(
    *, chronicle: Chronicle, by: AbstractBaseUser | None, expected_number: int | None = None
) -> GameNight:
    """Close the open game night (if any) and open the next; nothing is deleted. The closed
    night's scenes close with it (``characters.signals.night_closed``, in this transaction).

    ``expected_number`` is the open night's number the storyteller saw, 0 when none was
    open: a double tap, parallel posts or a second storyteller pressing the same button find
    the night moved on and change nothing. ``None`` skips the check (scripts only).
    The chronicle row is locked, so openings run one at a time; the ``one_open_game_night``
    and ``game_night_number`` constraints back that up in the database.
    """
    with transaction.atomic():
        Chronicle.objects.select_for_update().get(pk=chronicle.pk)
        current = GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()
        seen = current.number if current is not None else 0
        if expected_number is not None and seen != expected_number:
            if expected_number == 0:
                raise LedgerError(NIGHT_OPENED_MEANWHILE.format(number=seen))
            raise LedgerError(NIGHT_ALREADY_OPENED.format(number=expected_number))
        if current is not None:
            current.closed_at = timezone.now()
            current.save(update_fields=["closed_at"])
            transaction.on_commit(
                partial(night_closed.send, sender=GameNight, night=current, by=by)
            )
        last = GameNight.objects.filter(chronicle=chronicle).aggregate(n=Max("number"))["n"]
        try:
            with transaction.atomic():
                night = GameNight.objects.create(
                    chronicle=chronicle, number=(last or 0) + 1, opened_by=by
                )
        except IntegrityError:
            raise LedgerError(NIGHT_OPENED_MEANWHILE.format(number=(last or 0) + 1)) from None
        _announce_sheets(chronicle_ids=(chronicle.pk,))
        return night


# The first key of the advisory lock a player's ledger writes take (the second: the player).
_PLAYER_LEDGER_LOCK = 0x4C45


def _open_night_query(chronicle_id: int, *player: int) -> QuerySet[GameNight]:
    found = GameNight.objects.select_for_update().filter(
        chronicle_id=chronicle_id, closed_at__isnull=True
    )
    if player:
        # A player's sheets are counted by their newest entry (combat.selectors.sheet_seq,
        # the phones' data-sheet-seq), so a player's entries must commit in the order of their
        # ids: a write of one of their characters waits here (the player's advisory lock,
        # held to the commit) for one of another in flight. Only theirs wait: the night is
        # held shared. In this statement: no query of its own.
        lock = RawSQL(
            "pg_advisory_xact_lock(%s, %s) IS NOT NULL",
            (_PLAYER_LEDGER_LOCK, player[0]),
            output_field=BooleanField(),
        )
        found = found.filter(lock)
    # One open night a chronicle (one_open_game_night): no order, so no join to the
    # chronicle (its name orders nights), whose row the lock would hold too.
    return found.order_by()[:1]


# A cost holds the open night shared: costs of a chronicle's scenes (every pair of a
# convention's) do not wait for one another, and closing the night (an UPDATE of its row,
# game_night_open) waits for those in flight, as they wait for it, then find no open night.
_OPEN_NIGHT: Prepared[GameNight] = Prepared(_open_night_query, model=GameNight, share=True)


def _open_night(chronicle: Chronicle, character: Character | None = None) -> GameNight:
    """The chronicle's open night, held shared; ``character``: the one whose ledger is
    written (its player's writes one at a time on PostgreSQL, :func:`_open_night_query`;
    SQLite runs one write at a time)."""
    player = character.player_id if character is not None else None
    vendor = connections[router.db_for_write(LedgerEntry)].vendor
    if player is not None and vendor == "postgresql":
        night = _OPEN_NIGHT.first(chronicle.pk, player)
    else:
        night = _OPEN_NIGHT.first(chronicle.pk)
    if night is None:
        raise LedgerError(NO_OPEN_NIGHT.format(chronicle=chronicle))
    return night


def game_night_refresh(*, chronicle: Chronicle, by: AbstractBaseUser | None) -> int:
    """Refresh willpower, blood and health of every character in one bulk action.

    Recorded like any other change (RULES.md, Shared terms): one ``refresh`` entry each.
    Returns the number of characters refreshed.
    """
    with transaction.atomic():
        night = _open_night(chronicle)
        # the characters' rows alone: their order joins the chronicle's, whose row
        # game_night_open holds while it waits for this refresh's hold of the night
        ids = list(
            Character.objects.select_for_update(of=("self",))
            .filter(chronicle=chronicle)
            .values_list("pk", flat=True)
        )
        LedgerEntry.objects.bulk_create(
            LedgerEntry(
                game_night=night,
                character_id=pk,
                kind=LedgerKind.REFRESH,
                amount=0,
                reason="Start of game night refresh",
                created_by=by,
            )
            for pk in ids
        )
        bump_ledgers(ids)
        _announce_sheets(chronicle_ids=(chronicle.pk,))
        return len(ids)


# What ledger_spend records; refreshes and regains (W7) have their own services.
SPENT_KINDS = frozenset(LedgerKind) - {LedgerKind.REFRESH, LedgerKind.TRAIT_REGAINED}


def ledger_spend(
    *,
    character: Character,
    kind: str,
    by: AbstractBaseUser | None,
    subject: str = "",
    category: str = "",
    amount: int = 1,
    reason: str = "",
    source: str = "",
    idempotency_key: str | None = None,
) -> LedgerEntry:
    """Record a cost in the open game night: a lost trait, spent willpower or ability…

    Refuses (changing nothing) what the character does not currently have. A request
    repeated by ``by`` with the same ``idempotency_key`` (a double tap) returns the first
    entry; the same key with other arguments raises ``KeyReused`` (see
    ``characters.idempotency``).
    """
    if kind not in SPENT_KINDS:
        raise LedgerError(KIND_NOT_SPENT.format(kind=kind), field="kind")
    if not isinstance(amount, int) or amount < 1:
        raise LedgerError(AMOUNT_POSITIVE, field="amount")
    payload = {
        "character": character.pk,
        "kind": kind,
        "subject": subject,
        "category": category,
        "amount": amount,
        "reason": reason,
        "source": source,
    }
    spend = partial(
        _spend, by=by, kind=kind, subject=subject, category=category, amount=amount,
        reason=reason, source=source,
    )  # fmt: skip
    return _run(SPEND, character, by=by, key=idempotency_key, payload=payload, rules=spend)


def _spend(
    _scene: None,
    locked: Character,
    *,
    by: AbstractBaseUser | None,
    kind: str,
    subject: str,
    category: str,
    amount: int,
    reason: str,
    source: str,
) -> LedgerEntry:
    """The rules part of a cost: what the character has now pays for it, in the open night."""
    night = _open_night(locked.chronicle, locked)
    now = _current_values(locked)
    subject, category = _as_on_the_sheet(now, kind, subject.strip(), category.strip())
    _check_affordable(locked, now, kind, subject, category, amount)
    entry = LedgerEntry(
        game_night=night,
        character=locked,
        kind=kind,
        subject=subject,
        category=category,
        amount=amount,
        reason=reason,
        source=source,
        created_by=by,
    )
    insert_ledger_entry(entry)  # with its version's bump: one statement on PostgreSQL
    _announce_sheets(character_ids=(locked.pk,))
    return entry


def ledger_damage(
    *,
    character: Character,
    by: AbstractBaseUser | None,
    damage_type: str,
    amount: int,
    empty_boxes: int,
    reason: str = "",
    source: str = "",
    idempotency_key: str | None = None,
) -> LedgerEntry | None:
    """D2: damage on the health track through the ledger (a ``health_damage`` entry of
    ``damage_type``), as much of ``amount`` as fits in the ``empty_boxes`` the caller counted
    on the sheet: a full track takes what fits, nothing when none does (``None``)."""
    fits = min(amount, empty_boxes)
    if fits < 1:
        return None
    payload = {
        "character": character.pk,
        "damage_type": damage_type,
        "amount": fits,
        "reason": reason,
        "source": source,
    }
    damage = partial(
        _spend, by=by, kind=LedgerKind.HEALTH_DAMAGE, subject="", category=damage_type,
        amount=fits, reason=reason, source=source,
    )  # fmt: skip
    return _run(DAMAGE, character, by=by, key=idempotency_key, payload=payload, rules=damage)


REGAIN_CATEGORIES = (Category.PHYSICAL, Category.SOCIAL, Category.MENTAL)


def ledger_regain(
    *,
    character: Character,
    category: str,
    by: AbstractBaseUser | None,
    reason: str = "",
    source: str = "",
    idempotency_key: str | None = None,
) -> LedgerEntry:
    """W7: spend one willpower to regain every trait lost in a category so far tonight.

    Once per game night per category; losses recorded after the regain still count. Writes
    a ``willpower_spent`` entry and the ``trait_regained`` entry it pays for (returned).
    ``idempotency_key`` works as in :func:`ledger_spend`.
    """
    if category not in REGAIN_CATEGORIES:
        raise LedgerError(
            REGAIN_CATEGORY.format(category=category or "no category"), "W7", field="category"
        )
    payload = {"character": character.pk, "category": category, "reason": reason}
    regain = partial(_regain, by=by, category=category, reason=reason, source=source)
    return _run(REGAIN, character, by=by, key=idempotency_key, payload=payload, rules=regain)


def _regain(
    _scene: None,
    locked: Character,
    *,
    by: AbstractBaseUser | None,
    category: str,
    reason: str,
    source: str,
) -> LedgerEntry:
    """The rules part of a regain (W7)."""
    night = _open_night(locked.chronicle, locked)
    label = Category(category).label.lower()
    done = LedgerEntry.objects.filter(
        game_night=night,
        character=locked,
        kind=LedgerKind.TRAIT_REGAINED,
        category=category,
        reverses__isnull=True,
        reversed_by__isnull=True,
    )
    if done.exists():
        raise LedgerError(
            REGAIN_TWICE.format(character=locked, category=label), "W7", field="category"
        )
    now = _current_values(locked)
    if now["traits"].get(category) == now["permanent_traits"].get(category):
        raise LedgerError(
            REGAIN_NOTHING.format(character=locked, category=label), "W7", field="category"
        )
    if now["willpower"] < 1:
        raise LedgerError(REGAIN_NO_WILLPOWER.format(character=locked), "W7")
    common = {"game_night": night, "character": locked, "source": source, "created_by": by}
    paid = LedgerEntry.objects.create(
        kind=LedgerKind.WILLPOWER_SPENT,
        amount=1,
        reason=reason or f"Regained {label} traits (W7)",
        **common,
    )
    regain = LedgerEntry.objects.create(
        kind=LedgerKind.TRAIT_REGAINED,
        category=category,
        amount=1,
        reason=reason,
        paid_by=paid,
        **common,
    )
    _announce_sheets(character_ids=(locked.pk,))
    return regain


_POOLS = {
    LedgerKind.WILLPOWER_SPENT: "willpower",
    LedgerKind.BLOOD_SPENT: "blood",
    LedgerKind.RAGE_SPENT: "rage",
    LedgerKind.GNOSIS_SPENT: "gnosis",
}


def _as_on_the_sheet(now: dict, kind: str, subject: str, category: str) -> tuple[str, str]:
    """The trait or ability as the sheet spells it, whatever case it was given in."""
    if kind == LedgerKind.TRAIT_LOST:
        category = category.lower()
        names = now["permanent_traits"].get(category, {})
    elif kind == LedgerKind.ABILITY_SPENT:
        names = now["abilities"]
    else:
        return subject, category.lower() if kind == LedgerKind.HEALTH_DAMAGE else category
    wanted = subject.casefold()
    return next((name for name in names if name.casefold() == wanted), subject), category


def _check_affordable(
    character: Character, now: dict, kind: str, subject: str, category: str, amount: int
) -> None:
    if kind in _POOLS:
        what = _POOLS[LedgerKind(kind)]
        have = now[what]
        if have < amount:
            raise LedgerError(
                NOT_ENOUGH.format(character=character, have=have, what=what, amount=amount),
                field="amount",
            )
    elif kind == LedgerKind.TRAIT_LOST:
        have = now["traits"].get(category, {}).get(subject, 0)
        if have < amount:
            raise LedgerError(
                TRAIT_NOT_HELD.format(character=character, trait=subject, category=category),
                field="subject",
            )
    elif kind == LedgerKind.HEALTH_DAMAGE:
        if category and category not in DamageType.values:
            raise LedgerError(DAMAGE_TYPE.format(kind=category), field="category")
        have = now["health"]["boxes"] - now["damage"]
        if have < 1:
            raise LedgerError(TRACK_FULL.format(character=character), field="amount")
        if have < amount:
            raise LedgerError(
                TRACK_SHORT.format(character=character, have=have, amount=amount), field="amount"
            )
    elif kind == LedgerKind.ABILITY_SPENT:
        have = now["abilities"].get(subject, 0)
        if have < amount:
            raise LedgerError(
                NOT_ENOUGH.format(
                    character=character, have=have, what=f"{subject} points", amount=amount
                ),
                field="subject" if subject not in now["abilities"] else "amount",
            )


def _why_not_counting(entry: LedgerEntry, night: GameNight) -> str:
    if entry.kind in PER_NIGHT_KINDS and entry.game_night_id != night.pk:
        return f"game night {entry.game_night.number} has closed"
    return "a refresh came after it"


def ledger_reverse(
    *,
    entry: LedgerEntry,
    by: AbstractBaseUser | None,
    reason: str,
    idempotency_key: str | None = None,
) -> LedgerEntry:
    """Undo an entry with a reason; the reversal is itself an entry of the open night.

    Only an entry that still counts can be reversed: one from a closed game night (traits,
    abilities, once-per-night uses) or from before the last refresh (pools, damage) already
    stopped counting, and reversing it would lift a current value above the sheet. With an
    ``idempotency_key``, the same request sent again answers the first reversal.
    """
    if not reason.strip():
        raise LedgerError(REASON_REQUIRED)
    payload = {"entry": entry.pk, "reason": reason}
    reverse = partial(_reverse, by=by, reason=reason.strip())
    return _run(REVERSE, entry, by=by, key=idempotency_key, payload=payload, rules=reverse)


def _reverse(
    _scene: None, locked: LedgerEntry, *, by: AbstractBaseUser | None, reason: str
) -> LedgerEntry:
    """The rules part of a reversal."""
    if locked.reverses_id is not None:
        raise LedgerError(CANNOT_REVERSE_REVERSAL)
    if locked.kind == LedgerKind.REFRESH:
        raise LedgerError(CANNOT_REVERSE_REFRESH)
    if LedgerEntry.objects.filter(reverses=locked).exists():
        raise LedgerError(ALREADY_REVERSED)
    regain = LedgerEntry.objects.filter(paid_by=locked).first()
    if regain is not None:
        label = Category(regain.category).label.lower()
        raise LedgerError(PAID_FOR_REGAIN.format(category=label), "W7")
    night = _open_night(locked.character.chronicle, locked.character)
    if not entry_counts(locked):
        raise LedgerError(NO_LONGER_COUNTS.format(why=_why_not_counting(locked, night)))
    reversal = _write_reversal(locked, night, by, reason)
    if locked.paid_by is not None and entry_counts(locked.paid_by):
        _write_reversal(locked.paid_by, night, by, reason)
    _announce_sheets(character_ids=(locked.character_id,))
    return reversal


def _write_reversal(
    entry: LedgerEntry, night: GameNight, by: AbstractBaseUser | None, reason: str
) -> LedgerEntry:
    return LedgerEntry.objects.create(
        game_night=night,
        character_id=entry.character_id,
        kind=entry.kind,
        subject=entry.subject,
        category=entry.category,
        amount=-entry.amount,
        reason=reason,
        source=f"reverses entry {entry.pk}",
        reverses=entry,
        created_by=by,
    )
