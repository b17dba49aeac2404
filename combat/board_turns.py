"""One rendering of a scene's board at a time in a process, at most one a ``LIVE_BOARD_PACE``
(0.1 s) in a busy scene; the changes that commit meanwhile are rendered together, once.

A storyteller's board is pushed by region, each change the regions it touched, and the hubs
count the board's changes one by one (:meth:`combat.consumers.SceneConsumer._note_change`).
In a busy scene the changes of many taps commit one after another: rendering the board again
for each is most of what a tap costs with the tablet open (``bench/tap_server.py --tablet``,
shared scene). So a change's request renders its scene's board, as it always did
(:func:`combat.live.scene_changed`: a quiet scene's board comes at once, within its change's
request, sharing its reads), unless a rendering of it is under way, or the scene is busy
(``BUSY`` changes within the pace before this one) and its board went less than ``pace``
ago. Then the change waits, and its request answers without rendering the board. The changes
that wait are rendered once, together (the union of their regions, read after each of them
committed), by this process's board thread as soon as the pace allows: a busy scene's board
lags its newest change by the pace at most, and is rendered that often at most. That push
names each of their ``seq`` (``seqs``). A tablet's own tap is not slowed: its answer is
rendered by its request. Nothing is lost by a fault: a push that never goes (a killed
process, a failed rendering) leaves the board behind by its ``seq``, which the hubs catch up
(:mod:`combat.hub`).
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Collection

from django.db import close_old_connections

log = logging.getLogger(__name__)

MAX_SCENES = 1000  # scenes whose last board time is kept before the old ones are let go
# A scene is busy when this many of its changes came within the pace before this one: more
# are likely to come, and a board rendered for several at once pays for the reads it does not
# share with its changes' requests. A scene of one pair is rarely so.
BUSY = 2

Regions = tuple[str, ...] | None  # None: every region
Render = Callable[[int, Regions, tuple[int, ...]], None]


def merged(regions: Collection[Regions]) -> Regions:
    """The regions of several changes: all of them when any change touched all."""
    if any(r is None for r in regions):
        return None
    return tuple(sorted({name for r in regions for name in r or ()}))


class BoardTurns:
    """Per process: for each scene whose board is being rendered or is due to be, the changes
    that wait for it (``waiting``); when each scene's board last went (``last``); the board
    thread that renders the changes that wait (``render(scene_id, regions, seqs)``), a scene
    at most once a ``pace()`` seconds."""

    def __init__(self, render: Render, pace: Callable[[], float]) -> None:
        self._render = render
        self._pace = pace
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._waiting: dict[int, list[tuple[Regions, int]]] = {}
        self._last: dict[int, float] = {}
        self._changes: dict[int, tuple[float, ...]] = {}  # each scene's latest changes' times
        self._due: list[tuple[float, int]] = []  # a heap: when each scene's board goes next
        self._thread: threading.Thread | None = None
        self._working = False  # the board thread renders, or still holds its connection

    def claim(self, scene_id: int, regions: Regions, seq: int) -> bool:
        """True: the caller renders the scene's board for its change now, then calls
        :meth:`done`. False: the change waits for the next rendering, the board thread's (one
        is under way, or the scene is busy and its board went less than ``pace`` ago)."""
        with self._lock:
            waiting = self._waiting.get(scene_id)
            if waiting is not None:
                waiting.append((regions, seq))
                if self._due:  # a board thread that could not start is started now
                    self._start()
                return False
            now, pace = time.monotonic(), self._pace()
            earlier = self._changes.get(scene_id, ())
            self._changes[scene_id] = (*earlier, now)[-BUSY:]
            last = self._last.get(scene_id)
            busy = len(earlier) >= BUSY and now - earlier[-BUSY] < pace
            if last is None or now - last >= pace or not busy:
                self._waiting[scene_id] = []
                return True
            self._waiting[scene_id] = [(regions, seq)]
            self._plan(scene_id, last)
            return False

    def done(self, scene_id: int) -> None:
        """A rendering of the scene's board went (or failed): the changes that came meanwhile
        go to the board thread, ``pace`` seconds later, or the scene has none under way."""
        with self._lock:
            now = time.monotonic()
            self._last[scene_id] = now
            if len(self._last) > MAX_SCENES:  # scenes whose board went long ago
                pace = self._pace()
                self._last = {k: v for k, v in self._last.items() if now - v < pace}
                self._changes = {k: v for k, v in self._changes.items() if k in self._last}
            if self._waiting.get(scene_id):
                self._plan(scene_id, now)
            else:
                self._waiting.pop(scene_id, None)
                self._wake.notify_all()

    def forget(self) -> None:
        """Forget when each scene's board last went, as a new process starts (tests: ids come
        again in a test database)."""
        with self._lock:
            self._last.clear()
            self._changes.clear()

    def busy(self) -> bool:
        """Whether any scene's board is being rendered or waits to be, or the board thread
        still holds its connection."""
        with self._lock:
            return bool(self._waiting) or self._working

    def wait_idle(self, timeout: float) -> bool:
        """Wait until not :meth:`busy` (tests: a test database is dropped only when no
        connection uses it); whether it came to that within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._waiting or self._working:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(left)
            return True

    def _plan(self, scene_id: int, last: float) -> None:
        heapq.heappush(self._due, (last + self._pace(), scene_id))
        self._start()
        self._wake.notify_all()  # the board thread, and any wait_idle

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="board-turns", daemon=True)
            self._thread.start()

    def _next(self) -> tuple[int, list[tuple[Regions, int]]]:
        with self._lock:
            while True:
                if not self._due:
                    self._wake.wait()
                    continue
                due, scene_id = self._due[0]
                delay = due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                heapq.heappop(self._due)
                changes, self._waiting[scene_id] = self._waiting[scene_id], []
                self._working = True
                return scene_id, changes

    def _run(self) -> None:
        while True:
            scene_id, changes = self._next()
            try:
                close_old_connections()  # a thread of its own: its connection may have gone stale
                regions = merged([r for r, _ in changes])
                self._render(scene_id, regions, tuple(sorted(seq for _, seq in changes)))
            except Exception:  # committed already: the hubs catch the board up
                log.exception("could not push the board of scene %s", scene_id)
            finally:
                self.done(scene_id)
                _close_connections()
                with self._lock:
                    self._working = False
                    self._wake.notify_all()


def _close_connections() -> None:
    """Give the board thread's connection back (the pool's) whatever came of the rendering;
    a close that fails is logged: the thread must go on, or every scene it holds or will be
    handed waits for a rendering that never comes."""
    try:
        close_old_connections()
    except Exception:
        log.exception("could not close the board thread's connection")
