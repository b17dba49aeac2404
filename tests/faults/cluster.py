"""Real processes for the fault tests: a private Redis, ``manage.py serve`` processes on the
test database, phones that hold a page, and browsers that tap.

The processes are started the way the benchmark starts them (``bench/procs.py``'s
:class:`Server`, ``bench/fanout.py``'s deployment environment: DEBUG off, loopback only); a
phone is a websocket client that applies what it gets as htmx and ``scene.js`` would
(:mod:`tests.live_pages`) and, when its socket drops, opens it again on the next server (a
load balancer's failover); a browser is ``bench/minihttp.py``'s client with a session made
here.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import secrets
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from websockets.asyncio.client import ClientConnection, connect

from bench.fanout import server_env
from bench.minihttp import Client
from bench.procs import PY, Server, cpu_seconds, free_port
from combat import fragments
from combat.models import Scene
from tests.live_pages import apply, as_shown, pieces

CONVERGE = 5.0  # seconds every page has to equal a fresh render after a fault
BACKEND = "django.contrib.auth.backends.ModelBackend"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def session_for(user: Any) -> str:
    """A login session for ``user``, as ``django.contrib.auth.login`` stores it."""
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = BACKEND
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return store.session_key


def _database_url() -> str:
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Redis:
    """A private redis-server on a free loopback port (never the shared one)."""

    def __init__(self, logs: Path) -> None:
        self.port = free_port()
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(logs)]
        self.server = Server(f"redis-{self.port}", argv, dict(os.environ), self.port, logs)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        await self.server.start()

    async def kill(self) -> None:
        """Gone at once, with everything it held (no persistence: as a crash)."""
        proc = self.server.proc
        if proc is not None and proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        self.server.proc = None

    async def restart(self) -> None:
        await self.kill()
        await self.start()


class Cluster:
    """Server processes on the test database and a private Redis."""

    def __init__(self, logs: Path, redis: Redis) -> None:
        self.logs, self.redis = logs, redis
        self.prefix = f"faults{secrets.token_hex(3)}"
        self.servers: list[Server] = []

    def env(self, **extra: str) -> dict[str, str]:
        env = server_env(
            {"DATABASE_URL": _database_url()}, self.redis.url, self.prefix, settings.SECRET_KEY
        )
        env.update(LIVE_SEND_TIMEOUT="2", **extra)
        return env

    async def start(self, count: int, **extra: str) -> list[Server]:
        """``count`` processes; ``extra`` goes into the environment of the first only."""
        new = []
        for i in range(count):
            port = free_port()
            argv = [PY, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
            env = self.env(**(extra if i == 0 else {}))
            new.append(Server(f"app-{len(self.servers) + i}-{port}", argv, env, port, self.logs))
        await asyncio.gather(*(s.start() for s in new))
        self.servers += new
        return new

    def errors(self) -> list[str]:
        """Server errors in the processes' logs (a 500, an exception in the app)."""
        found = []
        for server in self.servers:
            text = server.log_path.read_text(errors="replace") if server.log_path.exists() else ""
            found += [
                line
                for line in text.splitlines()
                if "Internal Server Error" in line or "Exception in ASGI application" in line
            ]
        return found

    async def stop(self) -> None:
        await asyncio.gather(*(s.stop() for s in self.servers), return_exceptions=True)


@dataclass
class Browser:
    """One person's browser: their session, and a tap's answers."""

    session: str
    port: int
    answers: list[int] = field(default_factory=list)
    busy: list[tuple[str | None, str]] = field(default_factory=list)  # each 503: Retry-After, body

    async def post(self, path: str, data: dict[str, str], port: int | None = None) -> int:
        token = secrets.token_hex(16)  # Django's CSRF: the cookie's secret sent back in a header
        client = Client("127.0.0.1", port or self.port, timeout=60)
        client.cookies.update(sessionid=self.session, csrftoken=token)
        try:
            answer = await client.post(path, data, htmx=True)
        finally:
            await client.close()
        self.answers.append(answer.status)
        if answer.status == 503:
            self.busy.append((answer.header("Retry-After"), answer.text))
        return answer.status

    async def tap(self, path: str, data: dict[str, str], port: int | None = None) -> int:
        """As scene.js does: a 503 is sent again, with the same key, after Retry-After."""
        while True:
            status = await self.post(path, data, port)
            if status != 503:
                return status
            await asyncio.sleep(1 + secrets.randbelow(1000) / 1000)


class Phone:
    """A phone's (or the tablet's) page on a scene's socket: the state it got, the pushes
    applied, reconnecting to the next server when its socket drops."""

    def __init__(self, name: str, scene_id: int, session: str, ports: list[int], user=None):
        self.name, self.scene_id, self.session, self.ports = name, scene_id, session, ports
        self.user = user  # None: the storyteller's board
        self.page: list = []
        self.layer = ""  # the last layer note: "<!--live:away-->" or "<!--live:back-->"
        self.notes: list[str] = []
        self.ws: ClientConnection | None = None
        self.task: asyncio.Task | None = None
        self.opened = asyncio.Event()
        self.changed_at = 0.0

    async def open(self) -> Phone:
        self.task = asyncio.ensure_future(self._run())
        async with asyncio.timeout(20):
            await self.opened.wait()
        return self

    async def _run(self) -> None:
        turn = 0
        while True:
            port = self.ports[turn % len(self.ports)]
            try:
                async with connect(
                    f"ws://127.0.0.1:{port}/ws/scenes/{self.scene_id}/",
                    origin=f"http://127.0.0.1:{port}",
                    additional_headers={"Cookie": f"sessionid={self.session}"},
                    ping_interval=None,
                    max_size=2**24,
                    open_timeout=10,
                ) as ws:
                    self.ws = ws
                    async for message in ws:
                        self.got(message if isinstance(message, str) else message.decode())
            except asyncio.CancelledError:
                raise
            except Exception:
                pass
            self.ws = None
            turn += 1
            await asyncio.sleep(0.3)  # scene.js reconnects after a moment

    def got(self, message: str) -> None:
        if message.startswith("<!--live:"):
            self.layer = message
            self.notes.append(message)
            return
        before = "".join(map(str, self.page))
        if not self.page:  # the state a socket sends first
            self.page = pieces(message)
            self.opened.set()
        else:  # a push, or the whole state again: each part replaces its id's
            apply(self.page, message, keep_newer=True)
        if "".join(map(str, self.page)) != before:
            self.changed_at = time.monotonic()  # when what the page shows last changed

    def fresh(self) -> str:
        """What a fresh load would show this page now."""
        scene = fragments.load(self.scene_id)
        if self.user is None:
            return fragments.storyteller_state(scene)
        return fragments.players_state(scene) + fragments.private_state(scene, self.user)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()


def _scene_seq(scene_id: int) -> int:
    return Scene.objects.get(pk=scene_id).seq


async def converged(phones: list[Phone], within: float = CONVERGE) -> float:
    """Wait until every page equals a fresh render; fail unless the last message that made it
    so landed within ``within`` seconds (a page changes only when a message lands, so the
    time the comparison itself takes on a busy machine is not counted). Returns that time."""
    began = time.monotonic()
    while True:
        differ = []
        for phone in phones:
            seq = await sync_to_async(_scene_seq)(phone.scene_id)
            want = as_shown(pieces(await sync_to_async(phone.fresh)()), seq)
            shown = as_shown(phone.page, seq)
            if shown != want:
                differ.append((phone, shown, want))
        if not differ:
            took = max(0.0, max(p.changed_at for p in phones) - began)
            assert took <= within, f"the pages took {took:.1f} s to equal a fresh render"
            return took
        if time.monotonic() - began > within + 10:  # + the comparisons' own time
            phone, shown, want = differ[0]
            diff = "\n".join(
                list(difflib.unified_diff(want.split("><"), shown.split("><"), lineterm=""))[:40]
            )
            raise AssertionError(f"{phone.name} differs from a fresh render:\n{diff}")
        await asyncio.sleep(0.1)


async def until(predicate: Callable[[], Any], within: float, what: str) -> float:
    """Wait until ``predicate()`` (sync, run in a thread) is true; how long it took."""
    began = time.monotonic()
    while not await sync_to_async(predicate)():
        if time.monotonic() - began > within:
            raise AssertionError(f"{what}: not within {within:.0f} s")
        await asyncio.sleep(0.1)
    return time.monotonic() - began


__all__ = ["CONVERGE", "Browser", "Cluster", "Phone", "Redis", "converged", "cpu_seconds"]
