"""One step for every write: the order, the refusal, its HTTP answer, the token.

Every change a tap makes (a challenge, a round, a chase, a scene or a ledger step) runs in
this order, inside one transaction::

    lock (the scene, then the row) → claim the key (a replay answers as the first did, before
    any other check) → who may act (a hidden participant does not exist for a player) → the
    token the actor saw → the feature's step (rules only) → log → publish on commit

:func:`begin` does the first two, so no feature can check a pause, a stage or a token
before it knows whether the request is a replay (a tap queued offline and sent again after a
pause is answered as it was the first time, not refused). A refusal is :class:`Refused`:
a sentence for people and the rule that refuses; :func:`http_status` is the one place it
becomes an HTTP status (400 for a form or key that cannot be read, 409 for a refusal).
Tokens ("the state you saw") are keyed with the server's secret (:func:`token`), never
derived from what the state holds, so a player cannot recover a hidden NPC's declaration
from one.

A tap's request runs in one transaction (:func:`request_transaction`, opened by
``combat.posts.scene_post``): the view's own reads of the scene and of the row the URL names
lock them (``select_for_update``, scene first) and :func:`hold` them, and the step's lock
takes them from there (:func:`held`) instead of reading them a second time. Same order,
same rows, read under the same lock; one query each instead of two.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from characters.idempotency import (
    Claim,
    IdempotencyError,
    KeyMalformed,
    KeyReused,
    idempotency_claim,
)
from combat import turns

Row = TypeVar("Row")
Model = TypeVar("Model")
_RULE_AT_END = re.compile(r"\(([A-Z]{1,2}\d+)\)\.?$")


class Refused(Exception):
    """A step refused and nothing changed: ``sentence`` for people, ``rule`` the rule ID
    that refuses it (empty when no rule of the book does, e.g. "the round moved on")."""

    status = 409
    key_reused = False  # the request's key was used for another request (a screen draws anew)

    def __init__(self, sentence: str, rule: str = "") -> None:
        super().__init__(sentence)
        self.sentence = sentence
        # a subclass may have named it already; a sentence ending "(D3)." names it too
        named = _RULE_AT_END.search(sentence)
        self.rule = rule or getattr(self, "rule", "") or (named.group(1) if named else "")


class Unreadable(Refused):
    """A form (or key) the server cannot read: nothing was tried."""

    status = 400


def http_status(error: Exception) -> int:
    """The HTTP status of a refusal (the one mapping): 400 unreadable, 409 refused."""
    if isinstance(error, KeyMalformed):
        return 400
    if isinstance(error, Refused):
        return error.status
    if isinstance(error, IdempotencyError):
        return 409
    raise TypeError(f"not a refusal: {error!r}")


@dataclass
class _Request:
    """The transaction of a tap's request: its depth, the rows its view locked."""

    depth: int
    rows: dict[tuple[type, Any], Any] = field(default_factory=dict)
    stepped: bool = False


_request: ContextVar[_Request | None] = ContextVar("step_request", default=None)


@contextmanager
def request_transaction() -> Iterator[None]:
    """Run a tap's whole request (its view's reads, then its step) in one transaction: rows
    the view locks and holds (:func:`hold`) are its step's lock, and the step, the request's
    first, takes no savepoint of its own (a refusal rolls the whole request back). Its
    commit ends the tap's turn (:func:`combat.turns.committed`) before anything else runs on
    commit: the scene's next tap writes while this one's pushes are rendered."""
    with transaction.atomic():
        transaction.on_commit(turns.committed)
        depth = len(transaction.get_connection().atomic_blocks)
        token = _request.set(_Request(depth=depth))
        try:
            yield
        finally:
            _request.reset(token)  # before the commit: the pushes never see these rows


def hold(row: Model) -> Model:
    """Keep ``row``, read with ``select_for_update`` inside :func:`request_transaction`, for
    the step's lock (:func:`held`); outside one, nothing is kept."""
    request = _request.get()
    if request is not None and row is not None:
        request.rows[(type(row), row.pk)] = row  # type: ignore[attr-defined]
    return row


def held(model: type[Model], pk: Any) -> Model | None:
    """The ``model`` row ``pk`` this request's view locked (:func:`hold`), once: the step's
    lock uses it instead of reading it again; a second lock of it reads afresh."""
    request = _request.get()
    return None if request is None else request.rows.pop((model, pk), None)


def holding(model: type[Model], pk: Any) -> Model | None:
    """The ``model`` row ``pk`` this request's view holds (:func:`hold`), left held: the
    view's own later look at a row it read with another."""
    request = _request.get()
    return None if request is None else request.rows.get((model, pk))


def forget_held() -> None:
    """A change was recorded: whatever the view locked and no lock took yet may be stale now
    (another read of it may have been written), so every later lock reads afresh."""
    request = _request.get()
    if request is not None:
        request.rows.clear()


_refusal_ends: ContextVar[bool] = ContextVar("step_refusal_ends", default=False)


@contextmanager
def refusal_ends_step() -> Iterator[None]:
    """Run steps nested in another step whose refusal the caller never survives (it raises
    it on, and the outer step refuses): they take no savepoint of their own. Should one
    raise anyway, Django marks the whole transaction for rollback (an ``atomic`` without a
    savepoint), so nothing of it can commit, nor can any query run before it ends."""
    token = _refusal_ends.set(True)
    try:
        yield
    finally:
        _refusal_ends.reset(token)


def _own_transaction() -> bool:
    """Whether this step needs no savepoint: it is the request's own
    (:func:`request_transaction`, no step before it, not nested deeper), or nested where a
    refusal ends the outer step (:func:`refusal_ends_step`)."""
    if _refusal_ends.get() and transaction.get_connection().in_atomic_block:
        return True
    request = _request.get()
    if request is None or request.stepped:
        return False
    request.stepped = True
    return len(transaction.get_connection().atomic_blocks) == request.depth


@dataclass
class Begun(Generic[Row]):
    """A step under way: the locked scene and row, and whether the request is a replay."""

    scene: Any
    row: Row
    replay: bool
    claim: Claim | None = None  # the claimed key: a replay's ``claim.result`` is the first answer


def begin(
    *,
    lock: Callable[[], tuple[Any, Row]],
    by: AbstractBaseUser,
    action: str,
    key: str | None,
    payload: Mapping[str, Any],
    refusal: type[Refused] = Refused,
) -> Begun[Row]:
    """Lock (``lock`` takes the scene, then the row, and returns both) and claim the
    request's key for ``payload``; call inside the step's transaction. ``replay`` true: the
    first answer stands, check nothing else and change nothing. A key used for another
    request is refused as ``refusal``."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a step begins inside its transaction")
    scene, row = lock()
    claim = None
    if key:
        try:
            claim = idempotency_claim(user=by, action=action, key=key, payload=payload)
        except KeyMalformed as error:
            raise Unreadable(str(error)) from None
        except IdempotencyError as error:
            refused = refusal(str(error))
            refused.key_reused = isinstance(error, KeyReused)
            raise refused from None
    return Begun(scene=scene, row=row, replay=claim is not None and claim.replay, claim=claim)


def token(kind: str, pk: int, counter: int | str) -> str:
    """A state token: keyed with the server's secret over what changes (a row's id and a
    counter that only goes up), so it says "this state" and nothing about what is in it."""
    message = f"{kind}:{pk}:{counter}".encode()
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, message, sha256).hexdigest()[:16]


# -- declared steps ------------------------------------------------------------------------

Target = TypeVar("Target")
Result = TypeVar("Result")

#: The sentence for a tap made on a state that moved on (a token that is no longer current).
MOVED_ON = "The scene moved on since you looked; nothing was changed. Look again."


@dataclass(frozen=True)
class Step(Generic[Target, Row]):
    """A feature's step, declared once (:func:`declare`): what it locks, who may take it, the
    tokens a screen may have seen. The feature writes only its rules part (:func:`run`)."""

    action: str  # "challenge.throw": the key's namespace and the contract test's row
    lock: Callable[[Target], tuple[Any, Row]]  # the scene, then the row (select_for_update)
    # who may act: raises a Refused (a hidden participant is nobody to a player)
    may_act: Callable[[AbstractBaseUser, Any, Row, Mapping[str, Any]], None] | None = None
    # the tokens a current screen carries (the tablet's and the phones'); none: no token
    tokens: Callable[[Row], tuple[str, ...]] | None = None
    refusal: type[Refused] = Refused
    moved_on: str = MOVED_ON


#: Every declared step by its action: the contract test runs each one four ways.
STEPS: dict[str, Step] = {}


def declare(step: Step[Target, Row]) -> Step[Target, Row]:
    """Register ``step`` (one declaration per action) and return it."""
    if step.action in STEPS and STEPS[step.action] != step:
        raise RuntimeError(f"step {step.action!r} is declared twice")
    STEPS[step.action] = step
    return step


def run(
    step: Step[Target, Row],
    target: Target,
    *,
    by: AbstractBaseUser,
    key: str | None,
    payload: Mapping[str, Any],
    seen: str | None = None,
    rules: Callable[[Any, Row], Result],
    replayed: Callable[[Any, Row], Result] | None = None,
    answer: Callable[[Result], Mapping[str, Any]] | None = None,
    recall: Callable[[Mapping[str, Any]], Result] | None = None,
) -> Result:
    """Take ``step`` on ``target`` in the one order, in one transaction: lock → claim the key
    (a replay answers ``replayed(scene, row)``, default the row, and checks nothing else) →
    who may act → the token the actor ``seen`` → ``rules(scene, row)``, which steps the
    engine, writes, logs and publishes on commit (``combat.services.record_change``).

    A step whose answer is a new row keeps it with the key: ``answer(result)`` is stored
    (ids, not objects: it is JSON) and a replay answers ``recall(stored)``, the first row."""
    with transaction.atomic(savepoint=not _own_transaction()):
        begun = begin(
            lock=lambda: step.lock(target),
            by=by,
            action=step.action,
            key=key,
            payload=payload,
            refusal=step.refusal,
        )
        if begun.replay:
            if recall is not None and begun.claim is not None:
                return recall(begun.claim.result)
            return replayed(begun.scene, begun.row) if replayed else begun.row  # type: ignore[return-value]
        if step.may_act is not None:
            step.may_act(by, begun.scene, begun.row, payload)
        if seen is not None and step.tokens is not None and seen not in step.tokens(begun.row):
            raise step.refusal(step.moved_on)
        result = rules(begun.scene, begun.row)
        if answer is not None and begun.claim is not None:
            begun.claim.complete(**answer(result))
        return result
