"""One rendering of a scene's board at a time in a process, at most one a pace in a busy scene
(issue 21: a tap's cost with the tablet open): the changes that commit meanwhile are rendered
once, together, by the board thread, and that push names each of their seqs for the hubs."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from combat import fragments, live, services
from combat.board_turns import BoardTurns, merged
from combat.models import Presence, Scene
from tests.combat.test_scene_writes import _socket

WAIT = 5.0


def _idle(turns: BoardTurns) -> None:
    """Wait until no scene's board is being rendered or waits to be."""
    assert turns.wait_idle(WAIT), "the board thread did not finish"
    assert not turns.busy()


def test_regions_merged_are_their_union_or_all() -> None:
    assert merged([("clock", "log"), ("challenges", "clock")]) == ("challenges", "clock", "log")
    assert merged([("clock",), None]) is None


def test_a_change_that_finds_no_rendering_under_way_renders_its_board_itself() -> None:
    rendered: list[Any] = []
    turns = BoardTurns(lambda *a: rendered.append(a), lambda: 0)
    assert turns.claim(1, ("clock",), 5)
    assert turns.claim(2, ("clock",), 9)  # another scene is not held up
    turns.done(1)
    turns.done(2)
    assert not turns.busy()
    assert rendered == []  # nothing came meanwhile: the board thread renders nothing
    assert turns.claim(1, None, 6)  # the scene is free again


def test_changes_that_come_meanwhile_are_rendered_once_together_with_each_seq() -> None:
    rendered: list[Any] = []
    turns = BoardTurns(lambda *a: rendered.append(a), lambda: 0)
    assert turns.claim(1, ("clock",), 5)
    assert not turns.claim(1, ("clock", "log"), 7)
    assert not turns.claim(1, ("challenges", "clock"), 6)
    assert rendered == []  # left to the next rendering: their requests do not wait
    turns.done(1)
    _idle(turns)
    assert rendered == [(1, ("challenges", "clock", "log"), (6, 7))]


def test_a_change_during_the_board_threads_rendering_is_rendered_after_it() -> None:
    rendered: list[Any] = []
    begun, go_on = threading.Event(), threading.Event()

    def render(scene_id: int, regions: Any, seqs: tuple[int, ...]) -> None:
        rendered.append(seqs)
        if len(rendered) == 1:
            begun.set()
            go_on.wait(WAIT)

    turns = BoardTurns(render, lambda: 0)
    assert turns.claim(1, None, 1)
    assert not turns.claim(1, None, 2)
    turns.done(1)
    assert begun.wait(WAIT)
    assert not turns.claim(1, None, 3)  # the board thread's rendering is under way
    go_on.set()
    _idle(turns)
    assert rendered == [(2,), (3,)]


def test_a_rendering_that_fails_frees_the_scene(caplog) -> None:
    def render(*a: Any) -> None:
        raise RuntimeError("the database went away")

    turns = BoardTurns(render, lambda: 0)
    assert turns.claim(1, None, 1)
    assert not turns.claim(1, None, 2)
    turns.done(1)
    _idle(turns)  # the hubs catch the board up: its seq stays behind
    assert "could not push the board of scene 1" in caplog.text
    assert turns.claim(1, None, 3)


def test_a_connection_that_fails_to_close_frees_the_scene(monkeypatch, caplog) -> None:
    """Closing the board thread's connection can fail too (a broken one, a pool that refuses
    it back): the scene is freed all the same, and the board thread goes on, else every later
    change of the scene would wait for a rendering that never comes."""
    from combat import board_turns

    rendered: list[Any] = []
    closes = {"n": 0}

    def close_old_connections() -> None:
        closes["n"] += 1
        if closes["n"] == 2:  # after the first rendering
            raise RuntimeError("the connection could not be closed")

    monkeypatch.setattr(board_turns, "close_old_connections", close_old_connections)
    turns = BoardTurns(lambda *a: rendered.append(a), lambda: 0)
    assert turns.claim(1, None, 1)
    assert not turns.claim(1, None, 2)
    turns.done(1)
    _idle(turns)
    assert "could not close the board thread's connection" in caplog.text
    assert turns.claim(1, None, 3)  # the scene is free again
    assert not turns.claim(1, None, 4)
    turns.done(1)
    _idle(turns)
    assert rendered[-1] == (1, None, (4,))


def test_a_board_thread_that_could_not_start_is_started_by_the_next_change(monkeypatch) -> None:
    """A thread that cannot start (the process out of threads for a moment) fails the change
    that planned it; the changes that wait are not left waiting for good: the next change of
    the scene starts it."""
    from combat import board_turns

    starts = {"n": 0}

    class Thread(threading.Thread):
        def start(self) -> None:
            starts["n"] += self.name == "board-turns"
            if starts["n"] == 1 and self.name == "board-turns":
                raise RuntimeError("can't start new thread")
            super().start()

    monkeypatch.setattr(board_turns.threading, "Thread", Thread)
    rendered: list[Any] = []
    turns = BoardTurns(lambda *a: rendered.append(a), lambda: 0)
    assert turns.claim(1, None, 1)
    assert not turns.claim(1, None, 2)
    with pytest.raises(RuntimeError):
        turns.done(1)
    assert not turns.claim(1, None, 3)
    _idle(turns)
    assert rendered == [(1, None, (2, 3))]


def test_in_a_busy_scene_the_changes_within_the_pace_go_together_after_it() -> None:
    rendered: list[Any] = []
    turns = BoardTurns(lambda *a: rendered.append((time.monotonic(), *a)), lambda: 0.5)
    for seq in (1, 2):  # not busy yet (one change before the second): at once, by its request
        assert turns.claim(1, ("clock",), seq)
        went = time.monotonic()
        turns.done(1)
    assert not turns.claim(1, ("clock",), 3)  # busy, within the pace: left to the board thread
    assert not turns.claim(1, ("clock", "log"), 4)
    assert turns.claim(2, ("clock",), 7)  # another scene has a pace of its own
    turns.done(2)
    _idle(turns)
    assert [r[1:] for r in rendered] == [(1, ("clock", "log"), (3, 4))]
    assert rendered[0][0] >= went + 0.5  # not before the pace: that is what saves renders


def test_no_pace_each_change_renders_its_board_when_none_is_under_way() -> None:
    turns = BoardTurns(lambda *a: None, lambda: 0)
    for seq in (1, 2, 3):
        assert turns.claim(1, None, seq)
        turns.done(1)


async def test_a_board_push_of_several_changes_counts_each_for_the_socket() -> None:
    """The hub counts the board's changes one by one: a push naming 6, 7 and 8 moves a board
    that showed 5 to 8, with nothing left waiting for a gap."""
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    socket = _socket(send)
    socket.role, socket.seq_group, socket.shown = "storyteller", "scene.1.st", 5
    event = live.fragment_event('<div data-seq="8">8</div>', "scene.1.st", 8)
    socket.hub_message({**event, "seqs": [6, 7, 8]})
    assert socket.shown == 8
    assert socket.ahead == set()
    socket.hub_message(live.fragment_event('<div data-seq="9">9</div>', "scene.1.st", 9))
    assert socket.shown == 9
    socket.writer.cancel()
    await asyncio.sleep(0)


class _Layer:
    """The channel layer's blocking publish, recorded."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def group_send_blocking(self, group: str, event: dict[str, Any]) -> None:
        self.events.append((group, event))


@pytest.fixture
def layer(scene, storyteller, monkeypatch) -> _Layer:
    """The layer every push of the test goes to, with the storyteller's tablet open on the
    scene (its board is pushed)."""
    recorded = _Layer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: recorded)
    Presence.objects.create(scene=scene, user=storyteller, channel_name="tablet.1")
    return recorded


@pytest.mark.django_db(transaction=True)
def test_changes_left_by_a_rendering_under_way_reach_the_board_in_one_push(
    scene, storyteller, layer, django_capture_on_commit_callbacks
) -> None:
    st = live.storytellers_group(scene.pk)
    assert live.BOARDS.claim(scene.pk, None, 0)  # a rendering of the board under way
    try:
        for _ in range(2):
            with django_capture_on_commit_callbacks(execute=True):
                services.scene_advance_clock(scene=scene, by=storyteller, seconds=60)
            scene.refresh_from_db()
        assert [g for g, _ in layer.events if g == st] == []  # the players' parts went
        assert live.players_group(scene.pk) in [g for g, _ in layer.events]
    finally:
        live.BOARDS.done(scene.pk)
    _idle(live.BOARDS)
    boards = [event for group, event in layer.events if group == st]
    assert len(boards) == 1
    seq = Scene.objects.get(pk=scene.pk).seq
    assert boards[0]["seqs"] == [seq - 1, seq]
    assert boards[0]["seq"] == seq
    fresh = fragments.board_regions(Scene.objects.get(pk=scene.pk), ("clock", "log"))
    assert boards[0]["html"] == fresh


@pytest.mark.django_db(transaction=True)
def test_a_busy_scenes_next_change_reaches_the_board_from_the_board_thread(
    scene, storyteller, layer, settings, django_capture_on_commit_callbacks
) -> None:
    settings.LIVE_BOARD_PACE = 1.0  # the four changes come well within it
    st = live.storytellers_group(scene.pk)
    seqs = []
    for _ in range(4):
        with django_capture_on_commit_callbacks(execute=True):
            services.scene_advance_clock(scene=scene, by=storyteller, seconds=60)
        scene.refresh_from_db()
        seqs.append(scene.seq)
    _idle(live.BOARDS)
    boards = [event for group, event in layer.events if group == st]
    assert boards[0]["seq"] == seqs[0] and "seqs" not in boards[0]  # at once, in its request
    named = [s for b in boards for s in b.get("seqs", [b["seq"]])]
    assert named == seqs  # each change's seq named once, in order
    assert len(boards) < len(seqs)  # the board thread took the last ones together
    fresh = fragments.board_regions(Scene.objects.get(pk=scene.pk), ("clock", "log"))
    assert boards[-1]["html"] == fresh


@pytest.mark.django_db(transaction=True)
def test_on_the_in_memory_layer_each_change_renders_its_board_in_its_request(
    scene, storyteller, monkeypatch, settings, django_capture_on_commit_callbacks
) -> None:
    """The in-memory layer's queues belong to the event loop: only a request's thread (which
    publishes through the loop) sends to it, never the board thread."""
    settings.LIVE_BOARD_PACE = 1.0
    sent: list[str] = []

    class InMemory:
        def __init__(self) -> None:
            self.group_send = None  # _send uses async_to_sync(group_send): recorded below

    monkeypatch.setattr(live, "get_channel_layer", InMemory)
    monkeypatch.setattr(live, "async_to_sync", lambda f: lambda group, event: sent.append(group))
    Presence.objects.create(scene=scene, user=storyteller, channel_name="tablet.1")
    for _ in range(4):
        with django_capture_on_commit_callbacks(execute=True):
            services.scene_advance_clock(scene=scene, by=storyteller, seconds=60)
        scene.refresh_from_db()
    assert sent.count(live.storytellers_group(scene.pk)) == 4
    assert not live.BOARDS.busy()


@pytest.mark.django_db(transaction=True)
def test_a_quiet_scenes_board_goes_within_its_change_naming_its_seq(
    scene, storyteller, layer, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        services.scene_advance_clock(scene=scene, by=storyteller, seconds=60)
    boards = [e for g, e in layer.events if g == live.storytellers_group(scene.pk)]
    assert [(b["seq"], "seqs" in b) for b in boards] == [
        (Scene.objects.get(pk=scene.pk).seq, False)
    ]
    assert not live.BOARDS.busy()
