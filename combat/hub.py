"""One subscription per audience per server process: the fan-out of Phoenix PubSub.

A change is rendered once per audience and published once per audience (``group_send`` of
:mod:`combat.live`). Each server process holds one :class:`Hub` (one per event loop, in fact:
a test process runs several loops): the hub owns one channel of the channel layer and adds that
channel, not each socket's, to the groups its local sockets watch. So the layer carries one
message per audience per process, and the hub writes it to its own sockets of that audience.
A socket never has a channel of its own; nothing is rendered per socket on a broadcast.

Pushes can be lost (a process killed between its commit and its publish, or halfway through
it; Redis restarted or away; a message dropped), so the hub does not trust them alone:

- **Catching up** (:meth:`Hub._catch_up`): every ``CATCH_UP`` seconds it reads, in one query,
  the ``seq`` of the scenes its sockets show and compares it with the ``seq`` each socket has
  been sent every change up to (``shown``: the scene changes' pushes name their ``seq``, see
  :func:`combat.live.scene_changed`; the board must have each one, the players' public part is
  whole in each), and a player's own part with the seq of the last change to it
  (``Participant.own_seq``, which its events name for the hub alone: a private push lost
  while the public one arrived). A socket still behind on the next look gets the whole
  state again. The database is read, not the layer: a phone catches up even while Redis is
  away. Nothing new reaches a phone: the whole state is what a reconnect sends.
- **The layer's health** (:meth:`Hub._watch_layer`, channels-redis only): every
  ``LAYER_CHECK`` seconds it sets a marker key of its own in Redis. When Redis does not
  answer, its sockets are told the page is not live; when it answers again, or answers
  without the marker (it restarted and forgot the groups), the hub adds its channel to every
  group again and sends every socket the whole state.

A served process's heap (:class:`Heap`, on in ``manage.py serve``): the garbage collector's
full pass walks every object alive, and a thousand sockets make it a pause of a couple of
hundred milliseconds every few seconds, which the push of that moment waits out. So once the
sockets stop arriving the hub moves what is alive into the collector's permanent generation
(``gc.freeze``: it is no longer walked) and a full pass walks only what came since. A socket
that leaves after that may leave its cycles there: when enough have left (or after a while)
the hub unfreezes, collects once and freezes again: one pause for many departures.

The hub also keeps the scene presence of its process honest (see :func:`heartbeat`): every
``HEARTBEAT`` seconds it touches the ``Presence`` rows of the sockets it serves and deletes
its process's other rows (a socket that failed before it could clean up), and rows nobody
touched for ``STALE_AFTER`` seconds (a process that crashed or was killed) are deleted, and
the boards of their scenes told.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import secrets
import socket
import time
from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Protocol
from weakref import WeakKeyDictionary

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from combat import live
from combat.models import Presence
from combat.selectors import STALE_AFTER

log = logging.getLogger(__name__)

# Every socket's id (``Presence.channel_name``) starts with its process's: ``PROCESS_ID``.
PROCESS_ID = f"{socket.gethostname()[:40]}.{os.getpid()}.{secrets.token_hex(4)}"
HEARTBEAT = 30  # seconds between two touches of this process's presence rows
RETRY = 1.0  # seconds before the hub reads the layer again after an error
PRESENCE_DELAY = 0.2  # (dis)connections within this many seconds make one presence push
CATCH_UP = 1.0  # seconds between two looks at the seq of the scenes the sockets show
LAYER_CHECK = 1.0  # seconds between two looks at the channel layer (channels-redis)
LAYER_TIMEOUT = 2.0  # a layer that takes longer than this to answer is away
MARKER_TTL = 600  # seconds the hub's marker key lives in Redis (renewed every check)
RECANCEL = 0.05  # seconds between two cancellations of a hub's task that has not ended

FREEZE_QUIET = 1.0  # seconds without a new socket before the heap is frozen
FREEZE_EVERY = 10.0  # seconds: at the latest, a freeze (when sockets keep trickling in)
SWEEP_AFTER = 100  # sockets gone since the last sweep that make the next one
SWEEP_EVERY = 600.0  # seconds: at the latest, a sweep (when any socket left)
# The collector's thresholds in a served process. A pass stops every thread of the process
# (the GIL) for as long as it walks what it collects: a push of that moment waits it out.
# The young generation every 5,000 new objects (less those freed), not Python's 700 (the ones
# a tap's rendering holds alive were walked several times a tap) nor 50,000 (a pass of 20 to
# 40 ms of CPU, 60 to 120 ms on a busy machine); the middle one every 3 of those (it holds
# what was alive at a young pass: a few requests' objects, 8 ms). The old generation (what
# came after the heap was frozen) every 100 middle passes, not 10: its pass walks every
# object alive that is not frozen, some 60 ms, and at 10 it came every 20 s of play; the
# sweeps (Heap.tend) collect it too. Measured with bench/serve_timed.py (stop 32).
THRESHOLDS = (5_000, 3, 100)

LAYER_AWAY = {"type": "live.layer", "live": False}
LAYER_BACK = {"type": "live.layer", "live": True}
RESYNC = {"type": "live.resync"}
# Set on a message the hub hands several sockets: each writes the same compressed frame
# (combat.consumers._shared_frame) rather than compressing it once a socket.
SHARED = "_shared"


class Subscriber(Protocol):
    """A socket the hub writes to (a :class:`combat.consumers.SceneConsumer`)."""

    def hub_message(self, message: dict[str, Any]) -> None: ...


class Watched(Subscriber, Protocol):
    """A socket the hub keeps up to date: which scene, which audience carries its ``seq``,
    and the ``seq`` it was last sent (``shown``)."""

    socket_id: str
    scene_id: int
    role: str
    seq_group: str
    shown: int
    behind: int  # the scene's seq when it was first seen behind (0: it is not)
    user_id: int
    sheets: str  # a player's: the data-sheet-seq of the private part it was last sent
    own: int  # a player's: the scene's seq its own part was last sent at (hub-only)
    own_behind: int  # the database's own seq when it was first seen behind (0: it is not)


def new_socket_id() -> str:
    """An id for one socket of this process, unique across processes."""
    return f"{PROCESS_ID}.{secrets.token_hex(8)}"


def presence_heartbeat_seconds() -> float:
    return float(getattr(settings, "LIVE_PRESENCE_HEARTBEAT", HEARTBEAT))


def catch_up_seconds() -> float:
    return float(getattr(settings, "LIVE_CATCH_UP", CATCH_UP))


class Heap:
    """When to freeze the process's heap and when to sweep it (see the module's docstring).
    Off unless the server turns it on (a test process keeps the collector as it is)."""

    def __init__(self) -> None:
        self.on = False
        self.arrived = 0  # sockets connected since the last freeze
        self.left = 0  # sockets gone since the last sweep
        self.last_arrival = 0.0
        self.swept = self.frozen = time.monotonic()
        self.freezes = self.sweeps = 0

    def start(self) -> None:
        """At server start, the app loaded: what is alive now lives as long as the process.
        The collector runs at :data:`THRESHOLDS`: a tap's rendering makes and drops tens of
        thousands of objects, and at Python's 700 the collector walked the ones alive at that
        moment several times a tap, and the whole unfrozen heap every twenty taps or so."""
        self.on = True
        gc.collect()
        gc.freeze()
        gc.set_threshold(*THRESHOLDS)
        self.swept = time.monotonic()

    def arrive(self) -> None:
        self.arrived += 1
        self.last_arrival = time.monotonic()

    def leave(self) -> None:
        self.left += 1

    def tend(self, now: float | None = None) -> str:
        """Called every second by the hub: ``sweep``, ``freeze`` or ``""`` (nothing to do)."""
        if not self.on:
            return ""
        now = time.monotonic() if now is None else now
        if self.left >= SWEEP_AFTER or (self.left and now - self.swept >= SWEEP_EVERY):
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.left = self.arrived = 0
            self.swept = now
            self.sweeps += 1
            return "sweep"
        settled = now - self.last_arrival >= FREEZE_QUIET or now - self.frozen >= FREEZE_EVERY
        if self.arrived and settled:
            gc.collect(1)  # the young garbage goes first; what is left is the sockets'
            gc.freeze()
            self.arrived = 0
            self.frozen = now
            self.freezes += 1
            return "freeze"
        return ""


HEAP = Heap()


class Hub:
    """This process's one reader of the channel layer, for every socket of its event loop."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel = ""
        self.local: dict[str, set[Subscriber]] = {}
        self.watched: set[Watched] = set()
        self.lock = asyncio.Lock()
        self.tasks: list[asyncio.Task] = []
        self.delivered = 0  # layer messages read, for tests and the curious
        self.resyncs = 0  # whole states sent to sockets found behind
        self.presence_due: set[int] = set()
        self.layer_live = True  # the layer answered its last check
        self.marked = False  # the hub's marker key is in Redis
        self.stopping = False  # its loops end (see stop)

    async def start(self) -> None:
        if self.channel:
            return
        async with self.lock:
            if self.channel:
                return
            self.stopping = False
            if hasattr(self.layer, "receive_many"):  # config.layers: a channel of its own
                self.channel = self.layer.new_reader()
            else:
                # The layer's default prefix: channels-redis reads every process-local channel
                # of an instance through one list, and a channel of another prefix would wait
                # behind the other sockets' blocking reads (5 s).
                self.channel = await self.layer.new_channel()
            self.tasks = [
                asyncio.ensure_future(self._read()),
                asyncio.ensure_future(self._keep()),
                asyncio.ensure_future(self._catch_up()),
            ]
            if hasattr(self.layer, "connection"):  # channels-redis: it may go away
                self.tasks.append(asyncio.ensure_future(self._watch_layer()))

    @property
    def groups(self) -> list[str]:
        return sorted(self.local)

    async def subscribe(self, subscriber: Subscriber, groups: Iterable[str]) -> None:
        """The socket hears the groups; the first local socket of a group subscribes the hub.

        A layer that is away does not refuse the socket: the group is noted, and added to the
        layer when it is back (:meth:`_watch_layer`); meanwhile the socket catches up from the
        database.
        """
        groups = list(groups)
        while True:
            await self.start()
            async with self.lock:
                if not self.channel:  # stopped while this waited for the lock: start again
                    continue
                for group in groups:
                    members = self.local.get(group)
                    if members is None:
                        members = self.local[group] = set()
                        try:
                            await asyncio.wait_for(
                                self.layer.group_add(group, self.channel), LAYER_TIMEOUT
                            )
                        except Exception:
                            log.warning("could not subscribe to %s; when the layer is back", group)
                            self._layer_away()
                    members.add(subscriber)
                return

    async def unsubscribe(self, subscriber: Subscriber, groups: Iterable[str]) -> None:
        """The last local socket of a group gone: the hub leaves the group."""
        async with self.lock:
            for group in groups:
                members = self.local.get(group)
                if members is None:
                    continue
                members.discard(subscriber)
                if not members:
                    del self.local[group]
                    try:
                        await asyncio.wait_for(
                            self.layer.group_discard(group, self.channel), LAYER_TIMEOUT
                        )
                    except Exception:  # Redis away: the group expires by itself
                        log.warning("could not leave %s", group, exc_info=True)

    def watch(self, socket: Watched) -> None:
        """Keep this socket up to date with its scene (see :meth:`_catch_up`)."""
        self.watched.add(socket)
        HEAP.arrive()
        if not self.layer_live:
            socket.hub_message(LAYER_AWAY)

    def unwatch(self, socket: Watched) -> None:
        if socket in self.watched:
            self.watched.discard(socket)
            HEAP.leave()

    @property
    def socket_ids(self) -> set[str]:
        return {s.socket_id for s in list(self.watched)}

    def presence_soon(self, scene_id: int) -> None:
        """Tell the scene's board who is connected, once for a burst of (dis)connections."""
        if scene_id in self.presence_due:
            return
        self.presence_due.add(scene_id)
        asyncio.get_running_loop().call_later(
            PRESENCE_DELAY, lambda: asyncio.ensure_future(self._announce_presence(scene_id))
        )

    async def _announce_presence(self, scene_id: int) -> None:
        self.presence_due.discard(scene_id)
        try:
            await database_sync_to_async(live.presence_changed)(scene_id)
        except Exception:
            log.warning("could not tell scene %s's board who is here", scene_id, exc_info=True)

    def dispatch(self, message: dict[str, Any]) -> int:
        """Hand one layer message to every local socket of its group; how many got it."""
        group = message.get("group", "")
        members = self.local.get(group, ())
        if len(members) > 1:
            message[SHARED] = True
        for subscriber in list(members):
            try:
                subscriber.hub_message(message)
            except Exception:  # one broken socket must not cost the others their push
                log.exception("a socket refused a hub message")
        return len(members)

    async def _read(self) -> None:
        many = getattr(self.layer, "receive_many", None)  # every message waiting, one trip
        while not self.stopping:
            try:
                messages = (
                    await many(self.channel) if many else [await self.layer.receive(self.channel)]
                )
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("hub could not read the channel layer; retrying", exc_info=True)
                await asyncio.sleep(RETRY)
                continue
            for message in messages:
                self.delivered += 1
                self.dispatch(message)

    async def add_groups(self, groups: list[str]) -> None:
        """Add the hub's channel to every group again (they expire in the layer; a restarted
        Redis forgot them). On channels-redis, what its ``group_add`` writes, for every group
        in one round trip a Redis server rather than two a group: a process serving 500
        phones hears some 1,500 audiences (the players', each one's own, account, session)."""
        if not hasattr(self.layer, "connection"):
            for group in groups:
                await self.layer.group_add(group, self.channel)
            return
        shards: dict[int, list[str]] = {}
        for group in groups:
            shards.setdefault(self.layer.consistent_hash(group), []).append(group)
        now = time.time()
        for index, shard in shards.items():
            pipe = self.layer.connection(index).pipeline(transaction=False)
            for group in shard:
                key = self.layer._group_key(group)
                pipe.zadd(key, {self.channel: now})
                pipe.expire(key, self.layer.group_expiry)
            await pipe.execute()

    async def _keep(self) -> None:
        """Renew the hub's groups (they expire in the layer) and this process's presence."""
        while not self.stopping:
            await asyncio.sleep(presence_heartbeat_seconds())
            try:
                await database_sync_to_async(heartbeat)(served_sockets())
                await self.add_groups(list(self.local))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("hub upkeep failed; next time then", exc_info=True)

    # -- catching up ------------------------------------------------------------------------

    async def _catch_up(self) -> None:
        while not self.stopping:
            await asyncio.sleep(catch_up_seconds())
            HEAP.tend()
            try:
                await self.catch_up()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database away: the next look, then
                log.warning("hub could not look at the scenes' seq", exc_info=True)

    async def catch_up(self) -> int:
        """Send the whole state to each socket found behind its scene twice in a row (the
        first time a push may still be on its way). Returns how many were sent it."""
        sockets = list(self.watched)
        if not sockets:
            return 0
        seqs = await database_sync_to_async(live.audience_seqs)({s.scene_id for s in sockets})
        sent = 0
        for s in sockets:
            scene = seqs.get(s.scene_id, {})
            if s.role == "player" and self._own_behind(s, scene.get("own", {})):
                s.behind = s.own_behind = 0
                s.hub_message(RESYNC)
                sent += 1
                continue
            want = scene.get(s.role)
            if want is not None and s.role == "player" and s.shown >= want:
                # A sheet change (a cost: no seq) whose push was lost leaves the player's own
                # part behind its data-sheet-seq: counted as one change behind.
                sheets = scene["sheets"].get(s.user_id, "0.0")
                want = want + 1 if getattr(s, "sheets", sheets) != sheets else want
            if want is None or s.shown >= want:
                s.behind = 0
                continue
            if s.behind and s.shown >= s.behind:  # it caught up with what it lacked then
                s.behind = 0
            if not s.behind:
                s.behind = want
                continue
            s.behind = 0
            s.hub_message(RESYNC)
            sent += 1
        self.resyncs += sent
        return sent

    @staticmethod
    def _own_behind(s: Watched, own: dict[int, int]) -> bool:
        """Whether a player's own part stays behind the database's (``Participant.own_seq``):
        a change's private push lost while its public part, which carries the players' seq,
        arrived. Counted in the scene's seq, which the hub alone sees; only the changes to
        this player's own part bump it, so a hidden NPC's other steps never resync a phone.
        True on the second look that finds it behind what it lacked on the first."""
        want, shown = own.get(s.user_id, 0), getattr(s, "own", None)
        if shown is None:
            return False
        if s.own_behind and shown >= s.own_behind:  # it caught up with what it lacked then
            s.own_behind = 0
        if shown >= want:
            return False
        if not s.own_behind:
            s.own_behind = want
            return False
        return True

    # -- the layer's health (channels-redis) ---------------------------------------------------

    def _layer_away(self) -> None:
        if not self.layer_live:
            return
        self.layer_live = False
        log.warning("the channel layer is away: phones catch up from the database")
        for s in list(self.watched):
            s.hub_message(LAYER_AWAY)

    async def _layer_back(self) -> None:
        """Subscribe every group again (a restarted Redis forgot them) and send every socket
        the whole state (a push may have gone to nobody meanwhile)."""
        await asyncio.wait_for(self.add_groups(list(self.local)), LAYER_TIMEOUT)
        was_away, self.layer_live = not self.layer_live, True
        if was_away:
            log.warning("the channel layer is back")
        for s in list(self.watched):
            if was_away:
                s.hub_message(LAYER_BACK)
            s.hub_message(RESYNC)
        self.resyncs += len(self.watched)

    async def _check_layer(self) -> None:
        key = f"{self.layer.prefix}:hub:{self.channel}"
        forgot = False
        for index in range(self.layer.ring_size):
            connection = self.layer.connection(index)
            old = await asyncio.wait_for(
                connection.set(key, "1", ex=MARKER_TTL, get=True), LAYER_TIMEOUT
            )
            forgot = forgot or old is None
        if (forgot and self.marked) or not self.layer_live:
            await self._layer_back()
        self.marked = True

    async def _watch_layer(self) -> None:
        while not self.stopping:
            await asyncio.sleep(LAYER_CHECK)
            try:
                await self._check_layer()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.debug("the channel layer did not answer", exc_info=True)
                self._layer_away()

    async def stop(self) -> None:
        """End the hub's tasks, then leave its groups. Each task has ended when it returns:
        under Python 3.11 a task cancelled in the turn a ``wait_for`` of it completes (the
        layer's check answered as the hub stops) loses the cancellation and would go on
        (:data:`config.layers.WAIT_FOR_DROPS_CANCEL`), on a hub whose channel is gone. So
        the loops also stop at the flag, and a task still running is cancelled again."""
        self.stopping = True
        async with self.lock:  # a start under way has made its tasks
            tasks, self.tasks = self.tasks, []
            pending = {task for task in tasks if not task.done()}
            while pending:
                for task in pending:
                    task.cancel()
                _done, pending = await asyncio.wait(pending, timeout=RECANCEL)
            for group in list(self.local):
                with contextlib.suppress(Exception):  # stopping: the groups expire anyway
                    await self.layer.group_discard(group, self.channel)
            self.local.clear()
            self.watched.clear()
            self.channel = ""


_hubs: WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = WeakKeyDictionary()


def get_hub() -> Hub:
    """The hub of the running event loop (made on first use)."""
    loop = asyncio.get_running_loop()
    layer = get_channel_layer()
    hub = _hubs.get(loop)
    if hub is None or hub.layer is not layer:  # a test swapped the layer: a fresh hub
        hub = _hubs[loop] = Hub(layer)
    return hub


def served_sockets() -> set[str]:
    """The ids of the sockets every hub of this process serves (one hub in a server; a test
    process runs several loops, each with its own)."""
    return {socket_id for hub in list(_hubs.values()) for socket_id in hub.socket_ids}


def heartbeat(alive: Iterable[str] | None = None) -> list[int]:
    """Touch this process's presence rows; delete the ones of processes gone. Returns the
    scenes whose presence changed (their boards are told).

    ``alive``: the ids of the sockets this process serves; its other rows (a socket that
    failed before it could clean up) are deleted too. ``None`` touches every row of it.
    """
    now = timezone.now()
    mine = Presence.objects.filter(channel_name__startswith=PROCESS_ID + ".")
    gone = Presence.objects.filter(connected_at__lt=now - timedelta(seconds=STALE_AFTER))
    scenes: set[int] = set()
    if alive is not None:
        alive = set(alive)
        dead = [(c, s) for c, s in mine.values_list("channel_name", "scene_id") if c not in alive]
        if dead:
            Presence.objects.filter(channel_name__in=[c for c, _s in dead]).delete()
            scenes.update(s for _c, s in dead)
    mine.update(connected_at=now)
    stale = set(gone.values_list("scene_id", flat=True))
    if stale:
        gone.delete()
        scenes |= stale
    for scene_id in sorted(scenes):
        live.presence_changed(scene_id)
    return sorted(scenes)
