"""Faults against real processes: after each, every page equals a fresh render within 5 s,
each challenge has exactly one result, no presence row is left behind and nothing answers 500.

Two ``manage.py serve`` processes (DEBUG off) on the test database and a private Redis; the
test process sets the scene up through the services and checks through the ORM. The phones
are websocket clients that apply what they get (``tests/live_pages.py``) and never resync by
themselves (no gap detection): what brings them back is the server's doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from typing import Any

import pytest
import redis as redis_client
from asgiref.sync import sync_to_async

from bench.minihttp import Client
from characters.demo import CAST, _write_sheet
from combat import live
from combat import services as scenes
from combat.challenges.answering import challenge_answer
from combat.challenges.reads import round_token, step_token
from combat.challenges.starting import challenge_start
from combat.live import session_group
from combat.models import Challenge, Presence, SceneLogEntry
from tests.combat.challenges.conftest import Table, ledger_of, make_table
from tests.factories import CharacterFactory, UserFactory
from tests.faults.cluster import Browser, Cluster, Phone, converged, session_for, until

pytestmark = pytest.mark.django_db(transaction=True)


# The table: a storyteller, Marcus attacking Sophia (met_classic), a challenge at the throws --


def _table() -> tuple[Table, Challenge, dict[str, str]]:
    t = make_table("met_classic")
    ch = challenge_start(
        scene=t.scene, by=t.a_user, attacker=t.a, defender=t.d, category="physical", bid="Strong"
    )
    t.refresh()
    ch = challenge_answer(
        scene=t.scene, challenge=t.ch(ch), by=t.d_user, side="defender", answer="bid", bid="Tough"
    )
    sessions = {"st": session_for(t.st), "a": session_for(t.a_user), "d": session_for(t.d_user)}
    return t, t.ch(ch), sessions


def _throw(ch: Challenge, side: str, throw: str) -> dict[str, str]:
    """The throw button's form, as the card draws it."""
    ch = Challenge.objects.get(pk=ch.pk)
    return {
        "action": "throw",
        "side": side,
        "throw": throw,
        "token": round_token(ch),
        "key": f"c{ch.pk}-{ch.step}-{side}-throw-{throw}",
    }


def _accept(ch: Challenge, side: str) -> dict[str, str]:
    ch = Challenge.objects.get(pk=ch.pk)
    step, token = ch.step, step_token(ch)
    return {
        "action": "accept",
        "side": side,
        "token": token,
        "key": f"c{ch.pk}-{step}-{side}-accept",
    }


def _act(t: Table, ch: Challenge) -> str:
    return f"/scenes/{t.scene.pk}/challenges/{ch.pk}/act/"


def _one_result(t: Table, ch: Challenge) -> None:
    """Marcus won the throw and Sophia accepted: over once, one loss, one log line."""
    ch = Challenge.objects.get(pk=ch.pk)
    assert ch.status == "over" and ch.winner == "attacker"
    assert len(ledger_of(ch)) == 1  # Sophia's Tough, crossed off once
    wins = SceneLogEntry.objects.filter(scene=t.scene, text__startswith="Outcome of Marcus")
    assert wins.count() == 1


async def _phones(t: Table, sessions: dict[str, str], ports: dict[str, list[int]]) -> list[Phone]:
    who = {"st": None, "a": t.a_user, "d": t.d_user}
    phones = [
        Phone(name, t.scene.pk, sessions[name], ports[name], user=who[name]) for name in ports
    ]
    return list(await asyncio.gather(*(p.open() for p in phones)))


async def _close(phones: list[Phone], cluster: Cluster) -> None:
    """Every phone gone: no presence row left behind, and no server error in any log."""
    for phone in phones:
        await phone.close()
    await until(lambda: not Presence.objects.exists(), 5, "presence rows left behind")
    assert cluster.errors() == []


async def _post_to_a_dying_server(browser: Browser, path: str, data: dict[str, str], port: int):
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, OSError):
        await browser.post(path, data, port)


# Killed between its commit and its publish, and halfway through a publish -----------------


@pytest.mark.parametrize("fault", ["kill_after_commit", "kill_mid_publish"])
async def test_a_process_killed_around_its_publish_leaves_no_page_behind(cluster, fault) -> None:
    dying, alive = await cluster.start(2, STORYTELLER_FAULT=fault)
    t, ch, sessions = await sync_to_async(_table)()
    await sync_to_async(t.throw)(ch, "rock", "scissors")  # Marcus wins the throw
    phones = await _phones(t, sessions, {n: [alive.port] for n in ("st", "a", "d")})
    sophia = Browser(sessions["d"], dying.port)
    accept = await sync_to_async(_accept)(ch, "defender")

    await _post_to_a_dying_server(sophia, _act(t, ch), accept, dying.port)
    await asyncio.wait_for(dying.proc.wait(), 10)  # it killed itself at the fault point
    assert dying.proc.returncode == -9

    took = await converged(phones)
    # Sophia's phone never got an answer: it sends the tap again, with its key, to the other
    assert await sophia.tap(_act(t, ch), accept, alive.port) == 200
    await sync_to_async(_one_result)(t, ch)
    await converged(phones)
    await _close(phones, cluster)
    print(f"{fault}: every page equal to a fresh render {took:.1f} s after the kill")


# A player's own part lost while the public part goes through -----------------------------


async def test_a_players_own_part_lost_while_the_public_part_arrives(cluster) -> None:
    """The process that publishes Marcus's throw loses the players' own parts of that change
    (as a stale Redis connection did) and sends its public part and board: the phones are at
    the new seq with their old prompts until a hub's catch-up sees their own part behind."""
    dropping, other = await cluster.start(2, STORYTELLER_FAULT="drop_own_parts")
    t, ch, sessions = await sync_to_async(_table)()
    ports = {"st": [other.port], "a": [dropping.port], "d": [other.port]}
    phones = await _phones(t, sessions, ports)
    marcus = Browser(sessions["a"], dropping.port)
    assert await marcus.tap(_act(t, ch), await sync_to_async(_throw)(ch, "attacker", "rock")) == 200

    took = await converged(phones)
    lost = dropping.log_path.read_text(errors="replace")
    assert "fault drop_own_parts: a push of change" in lost  # the fault did lose them
    sophia = Browser(sessions["d"], other.port)
    throw = await sync_to_async(_throw)(ch, "defender", "scissors")
    assert await sophia.tap(_act(t, ch), throw) == 200  # the next change's parts all go
    await converged(phones)
    await _close(phones, cluster)
    print(f"own parts lost: every page equal to a fresh render {took:.1f} s after the tap")


# Redis restarted in the middle of a round, and away for seconds ----------------------------


async def test_a_redis_restart_in_the_middle_of_a_round(cluster) -> None:
    a, b = await cluster.start(2)
    t, ch, sessions = await sync_to_async(_table)()
    phones = await _phones(t, sessions, {"st": [a.port], "a": [a.port], "d": [b.port]})
    marcus, sophia = Browser(sessions["a"], a.port), Browser(sessions["d"], b.port)
    assert await marcus.tap(_act(t, ch), await sync_to_async(_throw)(ch, "attacker", "rock")) == 200

    await cluster.redis.restart()  # everything it held is gone: groups, queued messages
    throw = await sync_to_async(_throw)(ch, "defender", "scissors")
    assert await sophia.tap(_act(t, ch), throw) == 200
    took = await converged(phones)

    assert await sophia.tap(_act(t, ch), await sync_to_async(_accept)(ch, "defender")) == 200
    await sync_to_async(_one_result)(t, ch)
    await converged(phones)
    await _close(phones, cluster)
    print(f"redis restarted: every page equal to a fresh render {took:.1f} s after the tap")


async def test_while_redis_is_away_the_pages_say_so_and_still_converge(cluster) -> None:
    a, b = await cluster.start(2)
    t, ch, sessions = await sync_to_async(_table)()
    phones = await _phones(t, sessions, {"st": [a.port], "a": [a.port], "d": [b.port]})
    marcus = Browser(sessions["a"], b.port)

    await cluster.redis.kill()
    await until(lambda: all(p.layer == "<!--live:away-->" for p in phones), 5, "not live shown")
    # a tap answered while nothing can be pushed: the pages still show it (from the database)
    assert await marcus.tap(_act(t, ch), await sync_to_async(_throw)(ch, "attacker", "rock")) == 200
    await converged(phones)

    await cluster.redis.start()
    await until(lambda: all(p.layer == "<!--live:back-->" for p in phones), 5, "live again")
    throw = await sync_to_async(_throw)(ch, "defender", "scissors")
    assert await Browser(sessions["d"], a.port).tap(_act(t, ch), throw) == 200
    took = await converged(phones)
    await _close(phones, cluster)
    print(f"after redis came back: every page equal to a fresh render within {took:.1f} s")


# Sockets that fail: dropped right after the handshake, never reading ----------------------


async def _drop_right_after_the_handshake(port: int, scene_id: int, session: str) -> None:
    from websockets.asyncio.client import connect

    ws = await connect(
        f"ws://127.0.0.1:{port}/ws/scenes/{scene_id}/",
        origin=f"http://127.0.0.1:{port}",
        additional_headers={"Cookie": f"sessionid={session}"},
        ping_interval=None,
    )
    ws.transport.abort()  # gone at once: no close frame, the first state not read


def _group_members(url: str, prefix: str, group: str) -> int:
    return redis_client.Redis.from_url(url).zcard(f"{prefix}:group:{group}")


async def test_phones_dropping_right_after_the_handshake_leave_nothing_behind(cluster) -> None:
    a, b = await cluster.start(2)
    t, _ch, sessions = await sync_to_async(_table)()
    phones = await _phones(t, sessions, {"st": [a.port], "a": [b.port]})
    drops = [await sync_to_async(session_for)(t.d_user) for _ in range(100)]
    for batch in range(0, 100, 10):
        await asyncio.gather(
            *(
                _drop_right_after_the_handshake((a, b)[i % 2].port, t.scene.pk, drops[i])
                for i in range(batch, batch + 10)
            )
        )

    await until(lambda: Presence.objects.count() == 2, 5, "presence rows of dropped phones")
    for session in drops:  # no process's hub still hears a dropped socket's session
        assert _group_members(cluster.redis.url, cluster.prefix, session_group(session)) == 0
    await converged(phones)  # the board says Sophia is not connected
    assert "Sophia" in str(phones[0].page)
    await _close(phones, cluster)


def _never_reading(port: int, scene_id: int, session: str) -> socket.socket:
    """A websocket that completes its handshake and then never reads a byte."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", port))
    raw.sendall(
        (
            f"GET /ws/scenes/{scene_id}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: http://127.0.0.1:{port}\r\nCookie: sessionid={session}\r\n\r\n"
        ).encode()
    )
    assert raw.recv(12) == b"HTTP/1.1 101"
    return raw


async def test_a_socket_that_never_reads_is_given_up(cluster) -> None:
    (a,) = await cluster.start(1, LOG_LEVEL="INFO")
    t, _ch, sessions = await sync_to_async(_table)()
    phones = await _phones(t, sessions, {"st": [a.port], "a": [a.port]})
    stuck = await sync_to_async(_never_reading)(a.port, t.scene.pk, sessions["st"])
    await until(lambda: Presence.objects.count() == 3, 5, "the stuck socket connected")
    try:
        # Pushes to the storytellers until its writes stall (the kernel takes a few MB first)
        ballast = f'<div id="ballast">{"x" * 500_000}</div>'
        for pushes in range(1, 41):
            await sync_to_async(live._send)(live.storytellers_group(t.scene.pk), ballast)
            if pushes % 4 == 0:
                await sync_to_async(scenes.scene_advance_clock)(scene=t.scene, by=t.st, seconds=1)
                if await sync_to_async(Presence.objects.count)() == 2:
                    break
        await until(lambda: Presence.objects.count() == 2, 10, "the stuck socket given up")
        print(f"a socket that never reads: given up after {pushes} pushes of 500 KB")
        await converged(phones)  # the others never waited for it
    finally:
        stuck.close()
    await _close(phones, cluster)


# A burst: sixty players of one scene tapping at once on one process ------------------------


@contextlib.contextmanager
def _unannounced():
    """Changes made while no phone listens publish nothing (as bench/fanout_setup.py)."""
    kept = live.scene_changed
    live.scene_changed = lambda *args, **kwargs: None
    try:
        yield
    finally:
        live.scene_changed = kept


def _crowd(pairs: int, others: int) -> tuple[Table, list[tuple[Challenge, Any, Any]]]:
    """The table, ``pairs`` more pairs each with a challenge at the throws, and ``others``
    players who only watch."""
    t = make_table("met_classic")
    games = []

    def join(name: str, i: int) -> tuple[Any, Any]:
        user = UserFactory(username=f"{name.lower()}_{i}_{t.scene.pk}")
        _ruleset, sheet = CAST[name]
        character = CharacterFactory(chronicle=t.scene.chronicle, name=f"{name} {i}", player=user)
        _write_sheet(character, "met_classic", sheet)
        return user, scenes.scene_join(code=t.scene.join_code, user=user, character=character)

    for i in range(others):
        join("Sophia", 100 + i)
    for i in range(pairs):
        (a_user, a), (d_user, d) = join("Marcus", i), join("Sophia", i)
        t.refresh()
        ch = challenge_start(
            scene=t.scene, by=a_user, attacker=a, defender=d, category="physical", bid="Strong"
        )
        t.refresh()
        challenge_answer(
            scene=t.scene, challenge=t.ch(ch), by=d_user, side="defender", answer="bid",
            bid="Tough",
        )  # fmt: skip
        games.append((t.ch(ch), session_for(a_user), session_for(d_user)))
    return t, games


async def test_sixty_taps_at_once_in_one_scene_on_one_process(cluster) -> None:
    """Sixty players in the scene; six pairs throw, each throw tapped five times at once (a
    thumb on a bad screen), with a pool of six connections: sixty taps at the same moment."""
    (a,) = await cluster.start(1, DB_POOL_MAX_SIZE="6")
    began = time.monotonic()
    with _unannounced():  # nobody listens yet: the set-up renders nothing
        t, games = await sync_to_async(_crowd)(6, 46)
    set_up = time.monotonic() - began
    sessions = await sync_to_async(
        lambda: {"st": session_for(t.st), "a": session_for(t.a_user), "d": session_for(t.d_user)}
    )()
    phones = await _phones(t, sessions, {"st": [a.port], "a": [a.port], "d": [a.port]})
    taps = []
    for ch, attacker, defender in games:
        for session, side, throw in (
            (attacker, "attacker", "rock"),
            (defender, "defender", "scissors"),
        ):
            data = await sync_to_async(_throw)(ch, side, throw)
            taps += [(Browser(session, a.port), _act(t, ch), data) for _ in range(5)]

    async def health() -> dict:
        """The process's /healthz while the taps queue: its database check needs a pooled
        connection, so it answers only if the waiting taps left the pool to others."""
        client = Client("127.0.0.1", a.port, timeout=30)
        try:
            answer = await client.request("GET", "/healthz")
        finally:
            await client.close()
        return {"status": answer.status, **json.loads(answer.text)}

    began = time.monotonic()
    tapping = asyncio.gather(*(b.tap(path, data) for b, path, data in taps))
    checks = await asyncio.gather(*(health() for _ in range(3)))
    answers = await tapping
    tapped = time.monotonic() - began
    assert answers == [200] * 60  # the first counted, the same key again answered as it was
    statuses = [s for b, _p, _d in taps for s in b.answers]
    assert set(statuses) <= {200, 503}  # a tap kept waiting too long is sent again, never a 500
    for retry_after, text in (busy for b, _p, _d in taps for busy in b.busy):
        assert retry_after and int(retry_after) > 0  # when to send it again (same key)
        assert "The server is busy" in text and "data-busy" in text  # what the phone says
    # waiting taps hold no connection: the pool of six still serves the process's other work
    assert all(c["status"] == 200 and c["database"] for c in checks), checks

    def one_reveal_each() -> None:
        for ch, _a, _d in games:
            ch = Challenge.objects.get(pk=ch.pk)
            assert ch.sealed == {}  # both throws in
            reveals = [h for h in ch.history if "rock, " in h.get("text", "")]
            assert len(reveals) == 1, ch.history

    await sync_to_async(one_reveal_each)()
    took = await converged(phones)
    await _close(phones, cluster)
    print(
        f"burst: set up in {set_up:.0f} s, 60 taps answered in {tapped:.0f} s, "
        f"{statuses.count(503)} answers 503 (sent again), pages equal in {took:.1f} s"
    )
