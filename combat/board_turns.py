"""One rendering of a scene's board at a time in a process; the changes that commit while it
is under way are rendered together, once, after it.

A storyteller's board is pushed by region, each change the regions it touched, and the hubs
count the board's changes one by one (:meth:`combat.consumers.SceneConsumer._note_change`).
In a busy scene the changes of many taps commit while the board of an earlier one is being
rendered: rendering the board again for each is most of what a tap costs with the tablet open
(``bench/tap_cost.py --shared 16 --tablet``). So the request whose change finds no rendering
of its scene's board under way renders it, as it always did (:func:`combat.live.scene_changed`:
a quiet scene's board comes at once, within its change's request); one that finds one under
way leaves its change to the next rendering and answers without waiting. When a rendering is
sent, the changes that came meanwhile are rendered once, together (the union of their
regions, read after each of them committed), by this process's board thread, and that push
names each of their ``seq`` (``seqs``). Nothing is lost by a fault: a push that never goes
(a killed process, a failed rendering) leaves the board behind by its ``seq``, which the hubs
catch up (:mod:`combat.hub`).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Collection

from django.db import close_old_connections

log = logging.getLogger(__name__)

Regions = tuple[str, ...] | None  # None: every region
Render = Callable[[int, Regions, tuple[int, ...]], None]


def merged(regions: Collection[Regions]) -> Regions:
    """The regions of several changes: all of them when any change touched all."""
    if any(r is None for r in regions):
        return None
    return tuple(sorted({name for r in regions for name in r or ()}))


class BoardTurns:
    """Per process: for each scene whose board is being rendered, the changes that came since
    (``waiting``), and the board thread that renders them (``render(scene_id, regions,
    seqs)``)."""

    def __init__(self, render: Render) -> None:
        self._render = render
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._waiting: dict[int, list[tuple[Regions, int]]] = {}
        self._ready: deque[int] = deque()
        self._thread: threading.Thread | None = None

    def claim(self, scene_id: int, regions: Regions, seq: int) -> bool:
        """True: the caller renders the scene's board for its change now, then calls
        :meth:`done`. False: a rendering is under way; the change is left to the next."""
        with self._lock:
            waiting = self._waiting.get(scene_id)
            if waiting is None:
                self._waiting[scene_id] = []
                return True
            waiting.append((regions, seq))
            return False

    def done(self, scene_id: int) -> None:
        """A rendering of the scene's board went (or failed): the changes that came meanwhile
        go to the board thread, or the scene has no rendering under way."""
        with self._lock:
            if self._waiting.get(scene_id):
                self._ready.append(scene_id)
                self._start()
                self._wake.notify()
            else:
                self._waiting.pop(scene_id, None)

    def busy(self) -> bool:
        """Whether any scene's board is being rendered or waits to be (for tests)."""
        with self._lock:
            return bool(self._waiting)

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="board-turns", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._ready:
                    self._wake.wait()
                scene_id = self._ready.popleft()
                changes, self._waiting[scene_id] = self._waiting[scene_id], []
            close_old_connections()  # a thread of its own: its connection may have gone stale
            try:
                regions = merged([r for r, _ in changes])
                self._render(scene_id, regions, tuple(sorted(seq for _, seq in changes)))
            except Exception:  # committed already: the hubs catch the board up
                log.exception("could not push the board of scene %s", scene_id)
            finally:
                close_old_connections()
                self.done(scene_id)
