"""A scene's taps take turns in a process until their step commits (combat.turns).

The turn ends at the commit, not at the answer: the scene's next tap writes while this one
renders its pushes; at most ``DEPTH`` taps of a scene are under way at once. Both paths of
the middleware: the server's (on the event loop, the view in a thread) and the synchronous
one (the test client's, WSGI).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from django.http import HttpResponse
from django.test import RequestFactory

from combat import turns
from combat.turns import DEPTH, SceneTurnMiddleware

SHORT = 0.3  # LIVE_TURN_WAIT in these tests: a tap that cannot get its turn answers 503 soon
LONG = 5.0  # how long a test waits for something that must happen


class Tap:
    """A view that writes (``committed`` said or not), then renders until let go."""

    def __init__(self, *, commits: bool = True) -> None:
        self.commits = commits
        self.writing = threading.Event()  # inside the view
        self.rendering = threading.Event()  # past its commit
        self.go = threading.Event()

    def __call__(self) -> HttpResponse:
        self.writing.set()
        if self.commits:
            turns.committed()
            self.rendering.set()
        assert self.go.wait(LONG), "never let go"
        return HttpResponse("done")


def scene_post(pk: int = 7):
    return RequestFactory().post(f"/scenes/{pk}/challenges/start/")


@pytest.fixture
def short_wait(settings):
    settings.LIVE_TURN_WAIT = SHORT


def sync_middleware(taps: dict[str, Tap]) -> SceneTurnMiddleware:
    return SceneTurnMiddleware(lambda request: taps[request.META["TAP"]]())


def server_middleware(taps: dict[str, Tap]):
    """The middleware as the server runs it (on the event loop, each view in a thread of its
    own), and a scene post of a named tap."""

    async def get_response(request):
        return await sync_to_async(taps[request.META["TAP"]], thread_sensitive=False)()

    def request(name: str):
        r = scene_post()
        r.META["TAP"] = name
        return r

    return SceneTurnMiddleware(get_response), request


async def forgotten(middleware: SceneTurnMiddleware) -> None:
    """Wait until every turn of the middleware's ended (its views' threads finish after)."""
    for _ in range(int(LONG / 0.05)):
        if not middleware.turns.turns:
            return
        await asyncio.sleep(0.05)


def post(middleware, name: str, pk: int = 7) -> dict:
    request = scene_post(pk)
    request.META["TAP"] = name
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(r=middleware(request)), daemon=True)
    thread.start()
    answer["thread"] = thread
    return answer


def status(answer: dict) -> int:
    answer["thread"].join(LONG)
    return answer["r"].status_code


def test_the_next_tap_writes_while_this_one_renders_what_it_committed(short_wait) -> None:
    taps = {"a": Tap(), "b": Tap()}
    middleware = sync_middleware(taps)
    a = post(middleware, "a")
    assert taps["a"].rendering.wait(LONG)
    b = post(middleware, "b")
    assert taps["b"].writing.wait(LONG), "b waited for a's answer"
    taps["b"].go.set()
    assert status(b) == 200
    taps["a"].go.set()
    assert status(a) == 200


def test_a_tap_keeps_its_turn_until_its_step_commits(short_wait) -> None:
    taps = {"a": Tap(commits=False), "b": Tap()}
    middleware = sync_middleware(taps)
    a = post(middleware, "a")
    assert taps["a"].writing.wait(LONG)
    b = post(middleware, "b")
    assert status(b) == 503  # nothing written: the phone sends it again
    assert not taps["b"].writing.is_set()
    taps["a"].go.set()
    assert status(a) == 200


def test_at_most_depth_taps_of_a_scene_are_under_way(short_wait) -> None:
    names = [f"t{i}" for i in range(DEPTH + 1)]
    taps = {name: Tap() for name in names}
    middleware = sync_middleware(taps)
    under_way = []
    for name in names[:DEPTH]:
        under_way.append(post(middleware, name))
        assert taps[name].rendering.wait(LONG)
    one_more = post(middleware, names[DEPTH])
    assert status(one_more) == 503  # no connection more for the scene than DEPTH
    assert not taps[names[DEPTH]].writing.is_set()
    for name in names[:DEPTH]:
        taps[name].go.set()
    assert [status(a) for a in under_way] == [200] * DEPTH


def test_another_scenes_tap_does_not_wait(short_wait) -> None:
    taps = {"a": Tap(commits=False), "b": Tap()}
    middleware = sync_middleware(taps)
    a = post(middleware, "a", pk=7)
    assert taps["a"].writing.wait(LONG)
    taps["b"].go.set()
    assert status(post(middleware, "b", pk=8)) == 200
    taps["a"].go.set()
    assert status(a) == 200


async def test_on_the_server_the_commit_in_the_views_thread_ends_the_turn(short_wait) -> None:
    """The server's path: the middleware on the event loop, the view in a worker thread,
    whose commit ends the turn through the loop."""
    taps = {"a": Tap(), "b": Tap()}
    middleware, request = server_middleware(taps)
    assert middleware.is_async

    a = asyncio.ensure_future(middleware(request("a")))
    assert await asyncio.to_thread(taps["a"].rendering.wait, LONG)
    b = asyncio.ensure_future(middleware(request("b")))
    assert await asyncio.to_thread(taps["b"].writing.wait, LONG), "b waited for a's answer"
    taps["b"].go.set()
    taps["a"].go.set()
    assert [(await a).status_code, (await b).status_code] == [200, 200]
    assert middleware.turns.turns == {}  # forgotten once nobody waits


async def test_on_the_server_a_tap_that_does_not_commit_keeps_the_turn(short_wait) -> None:
    taps = {"a": Tap(commits=False), "b": Tap()}

    middleware, request = server_middleware(taps)

    a = asyncio.ensure_future(middleware(request("a")))
    assert await asyncio.to_thread(taps["a"].writing.wait, LONG)
    assert (await middleware(request("b"))).status_code == 503
    taps["a"].go.set()
    assert (await a).status_code == 200
    assert middleware.turns.turns == {}


def test_a_steps_commit_ends_the_turn_before_its_pushes_are_rendered(
    db, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """combat.steps.request_transaction: the turn's end is the first thing run on commit."""
    from django.db import transaction

    from combat import steps

    order: list[str] = []
    monkeypatch.setattr(turns, "committed", lambda: order.append("turn ended"))
    with django_capture_on_commit_callbacks(execute=True), steps.request_transaction():
        transaction.on_commit(lambda: order.append("pushes"))
    assert order == ["turn ended", "pushes"]


async def test_on_the_server_a_tap_whose_phone_went_away_keeps_its_turn_until_its_view_ends(
    short_wait,
) -> None:
    """A phone on bad wifi drops its connection mid-tap: the server cancels the request's
    task, but its view goes on in its thread, in its transaction, holding the scene's row and
    a connection. The scene's next tap must not write until it ends (else every dropped tap
    adds a connection waiting on the row: the burst the turn exists to prevent)."""
    taps = {"a": Tap(commits=False), "b": Tap()}

    middleware, request = server_middleware(taps)

    a = asyncio.ensure_future(middleware(request("a")))
    assert await asyncio.to_thread(taps["a"].writing.wait, LONG)
    a.cancel()  # what config.handler does when the client disconnects
    with pytest.raises(asyncio.CancelledError):
        await a
    assert (await middleware(request("b"))).status_code == 503
    assert not taps["b"].writing.is_set(), "b wrote while a's view still held the scene"
    taps["a"].go.set()
    taps["b"].go.set()
    await forgotten(middleware)
    assert middleware.turns.turns == {}  # a's turn ended with its view, and was forgotten
    assert (await middleware(request("b"))).status_code == 200


async def test_on_the_server_taps_whose_phones_went_away_count_until_their_views_end(
    short_wait,
) -> None:
    """The same past the commit: a cancelled tap that renders still counts in ``DEPTH``."""
    names = [f"t{i}" for i in range(DEPTH + 1)]
    taps = {name: Tap() for name in names}

    middleware, request = server_middleware(taps)

    under_way = []
    for name in names[:DEPTH]:
        under_way.append(asyncio.ensure_future(middleware(request(name))))
        assert await asyncio.to_thread(taps[name].rendering.wait, LONG)
    for task in under_way:
        task.cancel()
    await asyncio.gather(*under_way, return_exceptions=True)
    assert (await middleware(request(names[DEPTH]))).status_code == 503
    assert not taps[names[DEPTH]].writing.is_set()
    for tap in taps.values():
        tap.go.set()
    await forgotten(middleware)
    assert middleware.turns.turns == {}
