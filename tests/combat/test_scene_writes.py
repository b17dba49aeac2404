"""How a scene socket writes the hub's pushes: in the hub's own step when it is idle, through
its writer when a write has to wait (a phone that reads slowly), in order either way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from combat import hub
from combat.consumers import SceneConsumer
from combat.live import fragment_event


def _socket(send: Any) -> SceneConsumer:
    """A scene socket past its first state, writing through ``send``."""
    socket = SceneConsumer()
    socket.base_send = socket.push_send = send
    socket.given_up = asyncio.get_running_loop().create_future()
    socket.outbox = asyncio.Queue()
    socket.writing = False
    socket.role, socket.seq_group, socket.own_group = "player", "scene.1.players", "own"
    socket.shown = socket.behind = 0
    socket.ahead = set()
    socket.sheets = ""
    socket.writer = asyncio.ensure_future(socket._write())
    return socket


def _push(n: int) -> dict[str, Any]:
    return fragment_event(f'<div data-seq="{n}">{n}</div>', "scene.1.players", n)


async def test_an_idle_socket_gets_the_push_in_the_hubs_own_step() -> None:
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    socket = _socket(send)
    socket.hub_message(_push(1))
    assert sent == ['<div data-seq="1">1</div>']  # no await in between: no task, no queue
    assert socket.shown == 1
    socket.writer.cancel()


async def test_a_write_that_waits_is_finished_by_the_writer_and_the_next_pushes_follow() -> None:
    sent: list[str] = []
    gate = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if not sent and not gate.is_set():  # the phone's buffer is full: the first write waits
            await gate.wait()
        sent.append(message["text"])

    socket = _socket(send)
    for n in (1, 2, 3):
        socket.hub_message(_push(n))
    await asyncio.sleep(0.05)
    assert sent == []
    gate.set()
    for _ in range(100):
        if len(sent) == 3:
            break
        await asyncio.sleep(0.01)
    assert [s.split(">")[1].split("<")[0] for s in sent] == ["1", "2", "3"]
    socket.hub_message(_push(4))  # idle again: written at once
    assert len(sent) == 4
    socket.writer.cancel()


async def test_a_write_stalled_past_the_send_timeout_gives_the_socket_up(settings) -> None:
    settings.LIVE_SEND_TIMEOUT = 0.1

    async def send(message: dict[str, Any]) -> None:
        await asyncio.Event().wait()  # a phone that never reads

    socket = _socket(send)
    socket.hub_message(_push(1))
    await asyncio.wait_for(socket.given_up, 2)
    await asyncio.sleep(0)
    assert socket.writer.done()


async def test_a_write_that_fails_stops_the_writes_to_that_socket_only() -> None:
    async def send(message: dict[str, Any]) -> None:
        raise ConnectionResetError

    socket = _socket(send)
    socket.hub_message(_push(1))  # does not raise into the hub
    socket.hub_message(_push(2))
    assert socket.writing
    socket.writer.cancel()


class _Collector:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def collect(self, generation: int = 2) -> int:
        self.calls.append(f"collect{generation}")
        return 0

    def freeze(self) -> None:
        self.calls.append("freeze")

    def unfreeze(self) -> None:
        self.calls.append("unfreeze")


@pytest.fixture
def collector(monkeypatch) -> _Collector:
    fake = _Collector()
    for name in ("collect", "freeze", "unfreeze"):
        monkeypatch.setattr(hub.gc, name, getattr(fake, name))
    return fake


def test_the_heap_freezes_once_the_sockets_stop_arriving(collector) -> None:
    heap = hub.Heap()
    heap.on = True
    for _ in range(3):
        heap.arrive()
    arrived = heap.last_arrival
    assert heap.tend(arrived + hub.FREEZE_QUIET / 2) == ""  # still arriving
    assert heap.tend(arrived + hub.FREEZE_QUIET) == "freeze"
    assert collector.calls == ["collect1", "freeze"]
    assert heap.tend(arrived + 2 * hub.FREEZE_QUIET) == ""  # nothing new since


def test_the_heap_is_swept_when_enough_sockets_left_or_after_a_while(collector) -> None:
    heap = hub.Heap()
    heap.on = True
    start = heap.swept
    for _ in range(hub.SWEEP_AFTER - 1):
        heap.leave()
    assert heap.tend(start + 1) == ""
    heap.leave()
    assert heap.tend(start + 2) == "sweep"
    assert collector.calls == ["unfreeze", "collect2", "freeze"]
    heap.leave()  # one socket gone: swept only after SWEEP_EVERY
    assert heap.tend(start + 3) == ""
    assert heap.tend(start + 3 + hub.SWEEP_EVERY) == "sweep"


def test_a_served_heap_is_frozen_and_collected_at_the_servers_thresholds(
    collector, monkeypatch
) -> None:
    thresholds = []
    monkeypatch.setattr(hub.gc, "set_threshold", lambda *t: thresholds.append(t))
    hub.Heap().start()
    assert collector.calls == ["collect2", "freeze"]
    assert thresholds == [hub.THRESHOLDS] and hub.THRESHOLDS[0] > 700


def test_a_heap_left_off_touches_nothing(collector) -> None:
    heap = hub.Heap()
    heap.arrive()
    heap.leave()
    assert heap.tend(heap.last_arrival + 3600) == ""
    assert collector.calls == []


def test_sockets_that_keep_trickling_in_are_frozen_all_the_same(collector) -> None:
    heap = hub.Heap()
    heap.on = True
    start = heap.frozen
    tick = start
    while tick < start + hub.FREEZE_EVERY - 1:
        tick += hub.FREEZE_QUIET / 2
        heap.arrive()
        heap.last_arrival = tick
        assert heap.tend(tick) == ""
    tick = start + hub.FREEZE_EVERY + 0.5
    heap.arrive()
    heap.last_arrival = tick
    assert heap.tend(tick) == "freeze"
