"""A finished challenge's card data and its row, computed and read once per process, not on
every tap of the night.

A phone keeps its player's finished cards (``selectors.KEPT``) and the board every one of the
night, and each change built every card again (its engine read back from JSON, its names,
status and words), although a finished challenge no longer changes unless someone writes to
it. A card that is over or void, waits on no choice (W8), has no mob (C16: its members are
read apart) and no timer offers no move, so its data is a function of:

- the challenge's pk and ``step``: every write to a challenge goes through
  :func:`combat.challenges.recording.save`, which moves ``step`` (a storyteller's void or call
  after the end among them); the only other write, a player leaving the card
  (:mod:`combat.challenges.leaving`), changes ``options["left"]``, which no card shows;
- the viewer (``attacker``, ``defender``, ``st`` or ``public``): a side's card holds what only
  that side sees, the storyteller's names a hidden NPC;
- each side's participant as the names read it (pk, name, hidden): a rename, a reveal.

:func:`key` says exactly that (None: build the card every time). What is kept never holds the
row itself: each caller gets a copy with its own ``ch``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from combat.models import Challenge, Participant

T = TypeVar("T")

VIEWERS = ("attacker", "defender", "st", "public")


class Memo(Generic[T]):
    """A small process-local LRU (thread-safe); ``stats`` counts its hits and misses."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._held: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = {"hits": 0, "misses": 0}

    def clear(self) -> None:
        with self._lock:
            self._held.clear()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """What is kept under ``key``, else ``make()`` (kept, the oldest dropped past size)."""
        found = self.find(key)
        if found is not None:
            return found
        value = make()
        self.keep(key, value)
        return value

    def find(self, key: Hashable) -> T | None:
        """What is kept under ``key`` (a hit), else None (a miss)."""
        with self._lock:
            if key in self._held:
                self._held.move_to_end(key)
                self.stats["hits"] += 1
                return self._held[key]
            self.stats["misses"] += 1
            return None

    def held(self) -> list[Hashable]:
        """The keys kept now, the oldest first (nothing counted)."""
        with self._lock:
            return list(self._held)

    def keep(self, key: Hashable, value: T) -> None:
        """Keep ``value`` under ``key`` (the oldest dropped past size)."""
        with self._lock:
            self._held[key] = value
            self._held.move_to_end(key)
            while len(self._held) > self.size:
                self._held.popitem(last=False)


cards: Memo[dict[str, Any]] = Memo(4096)

#: The rows of challenges no longer open, by ``(pk, step)``, as the database gave them (no
#: scene or participant attached): the phones' list (:func:`combat.challenges.reads.phone_rows`)
#: and the board's (:mod:`combat.challenges.board_reads`) list a scene's challenges by pk and
#: step and read whole only those not kept here. A row at a given step never changes but for
#: ``options["left"]`` (see the module), which the list reads afresh.
rows: Memo[Challenge] = Memo(4096)

#: The rows of open challenges, by ``(pk, step)``, made from the listing that reads them
#: whole (:func:`combat.challenges.reads._read`) with their token and engine, beside the
#: listing's values they were made from: every write to an open challenge moves its ``step``
#: (its player cannot leave it yet), and a shared scene's change shows many open challenges,
#: one of them moved. A row is made again when its values differ at the same step (a write
#: rolled back reuses its step; a write that moved none), so none is ever served stale.
open_rows: Memo[tuple[tuple[Any, ...], Challenge]] = Memo(1024)


def is_finished(ch: Challenge) -> bool:
    """Over or void with nothing left to do on it: no W8 choice, no mob, no timer."""
    if ch.is_open or ch.deadline is not None:
        return False
    options = ch.options or {}
    return not (options.get("choose") or options.get("mob") or options.get("mob_dropped"))


def _who(participant: Participant | None) -> tuple[Any, ...] | None:
    return None if participant is None else (participant.pk, participant.name, participant.hidden)


def key(ch: Challenge, viewer: str) -> Hashable | None:
    """What a finished card's data is a function of (see the module), or None."""
    if viewer not in VIEWERS or not is_finished(ch):
        return None
    return (ch.pk, ch.step, viewer, _who(ch.attacker), _who(ch.defender))


def card(ch: Challenge, viewer: str, build: Callable[[Challenge, str], dict[str, Any]]) -> dict:
    """``build(ch, viewer)``, once per process for a finished card; a copy with ``ch``."""
    found = key(ch, viewer)
    if found is None:
        return build(ch, viewer)

    def make() -> dict[str, Any]:
        return {k: v for k, v in build(ch, viewer).items() if k != "ch"}

    return {**cards.get(found, make), "ch": ch}
