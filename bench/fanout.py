"""Benchmark: how long until the last of N phones has the storyteller's change (``make bench``).

One run, on this machine, loopback only:

1. builds the bench scene (``bench/fanout_setup.py``) in its own SQLite file
   (``var/bench_fanout.sqlite3``): a storyteller, players joined by ``scene_join`` until the
   players' fragment is about 2 KB, and one session per phone (a few phones and the storyteller
   log in through the real login form; the rest get ``SessionStore`` sessions);
2. for N = 100, 300, 1,000 phones (websocket clients spread over a few client processes,
   ``bench/phones.py``), measures the time from the storyteller's ``POST /scenes/<pk>/clock/``
   (sent once a second) until the last phone has the fragment with the new ``data-seq``:
   - ``floor``: a bare ``websockets`` server broadcasting the same payload (``floor_server.py``);
   - ``channels``: a bare Channels consumer, one ``group_send`` to N sockets (``channels_app.py``);
   - ``app``: the real server started as ``manage.py serve`` (uvicorn, DEBUG off);
   each on one process with the in-memory layer, then (when PostgreSQL and Redis answer on
   loopback) on two processes with channels-redis and PostgreSQL (``storyteller_bench``), the
   phones split over both, the clock posted to the first;
3. with the largest N's phones still connected, the idle cost: the servers' CPU (% of a core)
   and resident memory over ``--idle-seconds``;
4. the challenge throughput (``bench/challenge_bench.py``) on the two-process setup (else on
   one process, SQLite): ``--pairs`` pairs playing whole challenges, in scenes of their own and
   in one shared scene, and ``--tablet-pairs`` pairs again with the storyteller's tablet open
   on each scene (a real night's shape);
5. prints the tables, each goal met or not and, last, one JSON line ``{"load_average", "fanout",
   "challenges", "idle", "goals"}``; removes its databases, Redis keys and processes.

Options: ``--phones 100,300,1000 --rounds 20 --clients 2 --no-compression --one-process
--only floor,channels,app,idle,challenges --pairs 1,4,16 --layouts separate,shared
--tablet-pairs 16 --challenge-seconds 10 --idle-seconds 30 --keep-logs --max-minutes 30``
(``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import re
import resource
import secrets
import shutil
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.challenge_bench import run_challenges  # noqa: E402
from bench.minihttp import Client  # noqa: E402
from bench.procs import PY, Pool, Server, free_port, settle  # noqa: E402

SQLITE = ROOT / "var" / "bench_fanout.sqlite3"
# Developers sharing a PostgreSQL server each name their own: BENCH_PG_NAME.
PG_NAME = os.environ.get("BENCH_PG_NAME", "storyteller_bench")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
SEQ = re.compile(r'data-seq="(\d+)"')
WARMUP = 2
ROUND_TIMEOUT = 5.0  # the next floor/Channels round waits at most this for the last phone
GRACE = 1.0  # after the last round: a fragment that has not come by then was dropped


@dataclass
class Measured:
    """One kind of server at one N in one setup."""

    kind: str  # floor | channels | app
    n: int
    procs: int
    layer: str
    latencies_ms: list[float] = field(default_factory=list)
    first_ms: list[float] = field(default_factory=list)  # the first phone, for comparison
    post_ms: list[float] = field(default_factory=list)  # the clock post's answer (app only)
    dropped: int = 0
    size: int | None = None
    client_cpu_ms: float = 0.0  # per round, all phone processes
    server_cpu_ms: float = 0.0  # per round, all server processes
    closed: int = 0  # phones the server closed during the rounds (their drops included)
    late: int = 0  # fragments that came after ROUND_TIMEOUT (counted in latency, not dropped)
    ready_s: float = 0.0  # connecting the phones and waiting for the server to settle
    connect_cpu_ms: float = 0.0  # server CPU per phone connected (app: auth, state, presence)
    note: str = ""

    def pct(self, p: float) -> float | None:
        """Nearest-rank percentile of the rounds (with 20 rounds p95 is the 19th, p99 the max)."""
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)], 1)


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else float("nan")


def log(line: str) -> None:
    print(line, flush=True)


def machine_speed() -> float:
    """CPU ms of a fixed pure-Python workload (the best of five) in the servers' interpreter:
    how fast this machine runs Python now. Its speed drifts (by 1.5x within minutes, seen on
    our shared two-core machine), so figures of two runs compare only beside this one."""

    def workload() -> int:
        total = 0
        for i in range(300_000):
            total += (i * 7) % 13
        return total

    best = math.inf
    for _ in range(5):
        started = time.process_time()
        workload()
        best = min(best, time.process_time() - started)
    return round(best * 1000, 1)


def load_warning() -> None:
    """Timings mean little on a busy machine: say how busy it was."""
    one, five, _ = os.getloadavg()
    cpus = os.cpu_count() or 1
    busy = " (BUSY: other work shares these CPUs; expect slower, noisier figures)"
    log(f"load average {one:.1f} / {five:.1f} on {cpus} CPUs{busy if five > cpus / 2 else ''}")


# -- environment --------------------------------------------------------------------------


def server_env(database: dict[str, str], redis: str | None, prefix: str, secret: str) -> dict:
    """Deployment settings on loopback: DEBUG off, no TLS redirect (nothing in front)."""
    drop = {"DATABASE_URL", "REDIS_URL", "CHANNELS_PREFIX", "SQLITE_PATH", "DEBUG"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(
        DEBUG="0",
        SECRET_KEY=secret,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        SECURE_HSTS_SECONDS="0",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        # A bench phone taps as soon as its last tap is answered, for many people at once:
        # the per-person throttle (settings.THROTTLES, a few taps a second) would be measured.
        THROTTLE="0",
        **database,
    )
    if redis:
        env.update(REDIS_URL=redis, CHANNELS_PREFIX=prefix)
    return env


def loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOOPBACK


def bench_database_url() -> str:
    """The bench's own PostgreSQL database on the server DATABASE_URL names (or the local one)."""
    if os.environ.get("BENCH_DATABASE_URL"):
        return os.environ["BENCH_DATABASE_URL"]
    base = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, "/" + PG_NAME, parts.query, ""))


def postgres_admin(url: str, sql: str) -> None:
    import psycopg

    parts = urlsplit(url)
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, ""))
    with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
        conn.execute(sql)


def two_process_reason(database_url: str, redis_url: str) -> str | None:
    """Why the two-process setup cannot run here, or None."""
    if not (loopback(database_url) and loopback(redis_url)):
        return "PostgreSQL and Redis must be on a loopback address for the bench"
    try:
        postgres_admin(database_url, "SELECT 1")
    except Exception as error:
        first = (str(error).splitlines() or [""])[0]
        return f"PostgreSQL not reachable at {urlsplit(database_url).netloc}: {first}"[:200]
    try:
        import redis

        redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
    except Exception as error:
        first = (str(error).splitlines() or [""])[0]
        return f"Redis not reachable at {urlsplit(redis_url).netloc}: {first}"[:200]
    return None


def redis_cleanup(redis_url: str, prefix: str) -> int:
    import redis

    client = redis.Redis.from_url(redis_url, socket_connect_timeout=3)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    return len(keys)


def remove_sqlite() -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(SQLITE) + suffix).unlink(missing_ok=True)


async def run(argv: list[str], env: dict[str, str], what: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 300)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{out.decode(errors='replace')[-2000:]}")


async def build_scene(env: dict[str, str], phones: int, logs: Path) -> dict[str, Any]:
    out = logs / f"setup-{secrets.token_hex(4)}.json"
    await run(
        [PY, str(ROOT / "bench" / "fanout_setup.py"), str(out), "--phones", str(phones)],
        env,
        "building the bench scene",
    )
    return json.loads(out.read_text(encoding="utf-8"))


# -- measuring ----------------------------------------------------------------------------


Trigger = Callable[[int], Awaitable[tuple[int, int]]]  # expected seq -> (sent_ns, new seq)


async def measure(
    pool: Pool,
    servers: list[Server],
    result: Measured,
    trigger: Trigger,
    seq: int,
    rounds: int,
    interval: float | None,
) -> int:
    """Fire ``rounds`` changes (after warm-up ones) and note when the last phone had each.

    ``interval``: once per interval (the storyteller's clock), rounds may overlap; ``None``:
    the next change after the last phone has the previous one (floor and bare Channels).
    """
    waits: list[tuple[int, int, asyncio.Task]] = []
    start = time.monotonic()
    cpu_client = cpu_server = 0.0
    for r in range(WARMUP + rounds):
        if r == WARMUP:
            cpu_client, cpu_server = pool.cpu, sum(s.cpu for s in servers)
        if interval:
            await asyncio.sleep(max(0.0, start + r * interval - time.monotonic()))
        sent, seq = await trigger(seq)
        task = asyncio.ensure_future(pool.wait(seq, ROUND_TIMEOUT))
        if r >= WARMUP:
            waits.append((sent, seq, task))
        if interval is None:
            await task
            await asyncio.sleep(0.05)
        if r == WARMUP - 1:  # nothing arrives at all: the server is not pushing; stop early
            first = await task
            if first["got"] == 0:
                result.note = "no phone got any fragment (is the push wired up?)"
                return seq
    answers = [await task for _sent, _seq, task in waits]
    result.client_cpu_ms = 1000 * (pool.cpu - cpu_client) / rounds
    result.server_cpu_ms = 1000 * (sum(s.cpu for s in servers) - cpu_server) / rounds
    await asyncio.sleep(GRACE)  # a fragment later than ROUND_TIMEOUT is late, not dropped
    tally = await pool.tally([s for _sent, s, _task in waits])
    result.closed = tally["closed"]
    for (sent, seq_r, _task), answer in zip(waits, answers, strict=True):
        got = tally["seqs"][seq_r]
        result.dropped += answer["phones"] - got["got"]
        result.late += got["got"] - answer["got"]
        result.size = got["size"] or result.size
        if got["last_ns"] is not None:
            result.latencies_ms.append((got["last_ns"] - sent) / 1e6)
            result.first_ms.append((got["first_ns"] - sent) / 1e6)
    return seq


async def ws_trigger(url: str) -> tuple[Trigger, Callable[[], Awaitable[None]]]:
    """A control socket: send the next seq, the server broadcasts."""
    from websockets.asyncio.client import connect

    ws = await connect(url, ping_interval=None, compression=None)

    async def trigger(seq: int) -> tuple[int, int]:
        seq += 1
        sent = time.perf_counter_ns()
        await ws.send(str(seq))
        return sent, seq

    return trigger, ws.close


def report(result: Measured, rounds: int) -> None:
    if result.note and not result.latencies_ms:
        log(f"    {result.kind:<8} N={result.n:<5} {result.note}")
        return
    spread = [a - b for a, b in zip(result.latencies_ms, result.first_ms, strict=True)]
    log(
        f"    {result.kind:<8} N={result.n:<5} p50 {result.pct(50)} ms, p95 {result.pct(95)} ms, "
        f"p99 {result.pct(99)} ms over {len(result.latencies_ms)}/{rounds} rounds, "
        f"dropped {result.dropped}, {result.size} B; p50 first phone "
        f"{median(result.first_ms):.1f} ms, first to last {median(spread):.1f} ms"
        + (f", post answered {median(result.post_ms):.1f} ms" if result.post_ms else "")
        + "; CPU a round: server "
        f"{result.server_cpu_ms:.0f} ms, phones {result.client_cpu_ms:.0f} ms; "
        f"ready in {result.ready_s:.0f} s"
        + (f" ({result.connect_cpu_ms:.0f} ms server CPU a phone)" if result.connect_cpu_ms else "")
        + (f"; {result.closed} phones closed by the server" if result.closed else "")
        + (f"; {result.late} fragments later than {ROUND_TIMEOUT:.0f} s" if result.late else "")
        + (f"; {result.note}" if result.note else "")
    )


async def grow(pool: Pool, targets: list[dict[str, str]]) -> str | None:
    added = await pool.add(targets)
    if added["failed"]:
        return f"{added['failed']} phones could not connect: {'; '.join(added['errors'])}"
    return None


# -- the three kinds of server ------------------------------------------------------------


async def run_floor(args, pool: Pool, payload: Path, logs: Path) -> list[Measured]:
    port = free_port()
    argv = [PY, str(ROOT / "bench" / "floor_server.py"), str(port), str(payload)]
    if args.no_compression:
        argv.append("--no-compression")
    server = Server("floor", argv, dict(os.environ), port, logs)
    results = []
    try:
        await server.start()
        trigger, close = await ws_trigger(f"ws://127.0.0.1:{port}/trigger")
        seq = 0
        for n in args.phones:
            result = Measured("floor", n, 1, "websockets")
            target = {"url": f"ws://127.0.0.1:{port}/"}
            began = time.monotonic()
            result.note = await grow(pool, [target] * (n - pool.size)) or ""
            if not result.note:
                await settle([server])
                result.ready_s = time.monotonic() - began
                seq = await measure(pool, [server], result, trigger, seq, args.rounds, None)
            report(result, args.rounds)
            results.append(result)
        await close()
    finally:
        await pool.close()
        await server.stop()
    return results


async def run_channels(
    args, pool: Pool, payload: Path, logs: Path, env: dict[str, str], procs: int, layer: str
) -> list[Measured]:
    servers = []
    for i in range(procs):
        port = free_port()
        argv = [PY, "-m", "uvicorn", "bench.channels_app:application", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--lifespan", "off", "--ws", "websockets-sansio"]
        argv += ["--log-level", "warning"]
        servers.append(
            Server(
                f"channels-{layer}-{i}",
                argv,
                {**env, "BENCH_PAYLOAD_FILE": str(payload)},
                port,
                logs,
            )
        )
    results = []
    try:
        await asyncio.gather(*(s.start() for s in servers))
        trigger, close = await ws_trigger(f"ws://127.0.0.1:{servers[0].port}/ws/bench/trigger/")
        seq = 0
        for n in args.phones:
            result = Measured("channels", n, procs, layer)
            targets = [
                {"url": f"ws://127.0.0.1:{servers[i % procs].port}/ws/bench/"}
                for i in range(pool.size, n)
            ]
            began = time.monotonic()
            result.note = await grow(pool, targets) or ""
            if not result.note:
                await settle(servers)
                result.ready_s = time.monotonic() - began
                seq = await measure(pool, servers, result, trigger, seq, args.rounds, None)
            report(result, args.rounds)
            results.append(result)
        await close()
    finally:
        await pool.close()
        await asyncio.gather(*(s.stop() for s in servers))
    return results


async def run_app(
    args, pool: Pool, scene: dict[str, Any], logs: Path, env: dict[str, str], procs: int, layer: str
) -> list[Measured]:
    servers = [
        Server(
            f"app-{layer}-{i}",
            [PY, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env,
            port,
            logs,
        )
        for i, port in enumerate(free_port() for _ in range(procs))
    ]
    results = []
    storyteller = Client("127.0.0.1", 0)
    pk = scene["scene"]
    try:
        await asyncio.gather(*(s.start() for s in servers))
        storyteller = Client("127.0.0.1", servers[0].port)
        await storyteller.login(scene["storyteller"], scene["password"])
        clock = f"/scenes/{pk}/clock/"

        async def trigger(seq: int) -> tuple[int, int]:
            answer = await storyteller.post(
                clock, {"seconds": "1", "key": uuid.uuid4().hex, "seq": str(seq)}, htmx=True
            )
            posts.append((time.perf_counter_ns() - answer.sent_ns) / 1e6)
            if answer.status >= 400:
                raise AppMissing(f"POST {clock} answered HTTP {answer.status}")
            seqs = [int(s) for s in SEQ.findall(answer.text)]
            if seqs and max(seqs) <= seq:  # the board came back unchanged: refused
                raise AppMissing(f"POST {clock} did not move the clock (seq {seq})")
            return answer.sent_ns, max(seqs) if seqs else seq + 1

        seq = scene["seq"]
        for n in args.phones:
            result = Measured("app", n, procs, layer, size=None)
            posts = result.post_ms
            began, cpu_before, added = time.monotonic(), sum(s.cpu for s in servers), n - pool.size
            targets = []
            for i in range(pool.size, n):
                server = servers[i % procs]
                phone = scene["phones"][i]
                if phone["session"]:
                    cookie = f"sessionid={phone['session']}"
                else:  # a real login through the form
                    browser = Client("127.0.0.1", server.port)
                    await browser.login(phone["user"], scene["password"])
                    await browser.close()
                    cookie = browser.cookie_header()
                targets.append(
                    {
                        "url": f"ws://127.0.0.1:{server.port}/ws/scenes/{pk}/",
                        "cookie": cookie,
                        "origin": f"http://127.0.0.1:{server.port}",
                    }
                )
            result.note = await grow(pool, targets) or ""
            if not result.note:
                state = await pool.initial(timeout=60)
                if state["with_state"] < state["phones"]:
                    result.note = (
                        f"{state['phones'] - state['with_state']} of {state['phones']} phones got "
                        f"no state on connect ({', '.join(state['close_reasons']) or 'silent'})"
                    )
            if not result.note:
                await settle(servers)
                result.ready_s = time.monotonic() - began
                result.connect_cpu_ms = 1000 * (sum(s.cpu for s in servers) - cpu_before) / added
                try:
                    seq = await measure(pool, servers, result, trigger, seq, args.rounds, 1.0)
                except AppMissing as missing:
                    result.note = str(missing)
            report(result, args.rounds)
            results.append(result)
            if result.note and not result.latencies_ms:
                break  # the app cannot be measured here: do not try bigger N
            if n == max(args.phones) and "idle" in args.only and args.idle_seconds > 0:
                idle = await measure_idle(servers, n, layer, args.idle_seconds)
                IDLE.append(idle)
                log(
                    f"    idle     N={n:<5} {idle['cpu_pct']}% of a core over {idle['seconds']} s,"
                    f" RSS {' + '.join(f'{m:.0f}' for m in idle['rss_mb'])} MB"
                )
    except AppMissing as missing:
        log(f"    app: {missing}")
    finally:
        await storyteller.close()
        await pool.close()
        await asyncio.gather(*(s.stop() for s in servers))
    return results


IDLE: list[dict[str, Any]] = []


async def measure_idle(servers: list[Server], n: int, layer: str, seconds: float) -> dict:
    """N phones connected, nothing happening: the servers' CPU (% of one core, all processes
    together) and resident memory (each process, at the end)."""
    await settle(servers)
    cpu, began = sum(s.cpu for s in servers), time.monotonic()
    await asyncio.sleep(seconds)
    spent, took = sum(s.cpu for s in servers) - cpu, time.monotonic() - began
    return {
        "phones": n,
        "procs": len(servers),
        "layer": layer,
        "seconds": round(took, 1),
        "cpu_pct": round(100 * spent / took, 1),
        "rss_mb": [round(s.rss, 1) for s in servers],
    }


class AppMissing(Exception):
    """The app on this branch cannot take part (an endpoint is not there yet)."""


# -- the run ------------------------------------------------------------------------------


async def setup_one(args, pool, logs, secret, database, redis, prefix, procs, layer):
    env = server_env(database, redis, prefix, secret)
    scene = await build_scene(env, max(args.phones), logs)
    log(
        f"  scene {scene['scene']} ({scene['vendor']}): {scene['players']} players joined, "
        f"players' fragment {scene['fragment_bytes']} bytes, {len(scene['phones'])} phones"
    )
    payload = logs / f"payload-{layer}.html"
    payload.write_text(scene["fragment"], encoding="utf-8")
    channels: list[Measured] = []
    app: list[Measured] = []
    plural = "es" if procs > 1 else ""
    if "channels" in args.only:
        log(f"  bare Channels ({procs} process{plural}, {layer} layer):")
        channels = await run_channels(args, pool, payload, logs, env, procs, layer)
    if "app" in args.only:
        log(f"  app, manage.py serve ({procs} process{plural}, {layer} layer):")
        app = await run_app(args, pool, scene, logs, env, procs, layer)
    return scene, channels, app


def entries(floor, channels, app, procs, layer, ns) -> list[dict[str, Any]]:
    by_n = {r.n: r for r in app}
    out = []
    for n in ns:
        f = next((r for r in floor if r.n == n), None)
        c = next((r for r in channels if r.n == n), None)
        a = by_n.get(n)
        measured = a is not None and bool(a.latencies_ms)
        out.append(
            {
                "n": n,
                "procs": procs,
                "layer": layer,
                "p50_ms": a.pct(50) if measured else None,
                "p95_ms": a.pct(95) if measured else None,
                "p99_ms": a.pct(99) if measured else None,
                "dropped": a.dropped if measured else None,
                "floor_p99_ms": f.pct(99) if f else None,
                "channels_p99_ms": c.pct(99) if c else None,
                # for the table only (not in the JSON line): where the app's time goes
                "_first_ms": round(median(a.first_ms), 1) if measured else None,
                "_post_ms": round(median(a.post_ms), 1) if measured and a.post_ms else None,
            }
        )
    return out


def table(rows: list[dict[str, Any]]) -> None:
    def show(value: Any) -> str:
        return "-" if value is None else str(value)

    log("")
    log(
        f"{'N':>6} {'procs':>5} {'layer':<7} {'p50':>7} {'p95':>7} {'p99':>7} {'drop':>5} "
        f"{'floor':>7} {'chan':>7} {'p99/floor':>9} {'1st p50':>8} {'post p50':>8}"
    )
    for row in rows:
        ratio = (
            f"{row['p99_ms'] / row['floor_p99_ms']:.1f}x"
            if row["p99_ms"] is not None and row["floor_p99_ms"]
            else "-"
        )
        log(
            f"{row['n']:>6} {row['procs']:>5} {row['layer']:<7} {show(row['p50_ms']):>7} "
            f"{show(row['p95_ms']):>7} {show(row['p99_ms']):>7} {show(row['dropped']):>5} "
            f"{show(row['floor_p99_ms']):>7} {show(row['channels_p99_ms']):>7} {ratio:>9} "
            f"{show(row['_first_ms']):>8} {show(row['_post_ms']):>8}"
        )
    log(
        "(ms from the storyteller's post to the last phone, p99 of floor and bare Channels "
        "alike;\n 1st p50: to the first phone; post p50: until the post's answer came back)"
    )


def fanout_goals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fan-out p99 within 2x the floor: N=300 on one process, N=1,000 on two."""
    goals = []
    for n, procs in ((300, 1), (1000, 2)):
        row = next((r for r in rows if r["n"] == n and r["procs"] == procs), None)
        name = f"fan-out N={n}, {procs} process{'es' if procs > 1 else ''}: p99 <= 2 x floor"
        if row is None or row["p99_ms"] is None or not row["floor_p99_ms"]:
            goals.append({"goal": name, "value": None, "met": None})
            continue
        met = row["p99_ms"] <= 2 * row["floor_p99_ms"] and row["dropped"] == 0
        value = (
            f"p99 {row['p99_ms']} ms vs 2 x floor {2 * row['floor_p99_ms']:.1f} ms, "
            f"dropped {row['dropped']}"
        )
        goals.append({"goal": name, "value": value, "met": met})
    return goals


def challenge_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The challenge rows as a table, and the goals they answer (two processes, 16 pairs)."""
    if not rows:
        return []

    def show(value: Any) -> str:
        return "-" if value is None else str(value)

    log("")
    log(
        f"{'pairs':>5} {'layout':<8} {'tablet':>6} {'procs':>5} {'res/s':>6} {'throw p50':>9} "
        f"{'p99':>7} "
        f"{'tap p50':>8} {'p99':>7} {'post p50':>8} {'CPU/tap':>7} {'all-in':>6} {'PG':>4} "
        f"{'busy%':>5} {'taps':>5} {'err':>4}"
    )
    for r in rows:
        log(
            f"{r['pairs']:>5} {r['layout']:<8} {'yes' if r.get('tablet') else 'no':>6} "
            f"{r['procs']:>5} {show(r['resolutions_per_s']):>6} "
            f"{show(r['throw_p50_ms']):>9} {show(r['throw_p99_ms']):>7} "
            f"{show(r['tap_p50_ms']):>8} {show(r['tap_p99_ms']):>7} {show(r['post_p50_ms']):>8} "
            f"{show(r['cpu_ms_per_tap']):>7} {show(r.get('all_in_ms_per_tap')):>6} "
            f"{show(r.get('pg_ms_per_tap')):>4} {show(r.get('machine_busy_pct')):>5} "
            f"{r['taps']:>5} {r['errors'] + r['missing']:>4}"
        )
    log(
        "(res/s: challenges resolved a second, all pairs; throw: ms from a throw's POST to the "
        "other phone's push\n carrying it; tap: every step alike; CPU/tap: server ms, all "
        "processes; all-in: the machine's busy CPU ms a tap\n (servers, PostgreSQL, Redis, "
        "the bench's phones); PG: PostgreSQL's ms a tap; busy%: of all cores;\n err: error "
        "answers and pushes missing; tablet: the storyteller's board open on each scene, so "
        "each change\n pushes it too, as on a real night)"
    )
    goals = []
    top = max(r["pairs"] for r in rows)
    procs = max(r["procs"] for r in rows)
    for tablet, layout in itertools.product((False, True), ("separate", "shared")):
        r = next(
            (
                r
                for r in rows
                if r["pairs"] == top and r["layout"] == layout and r.get("tablet", False) == tablet
            ),
            None,
        )
        if r is None:
            continue
        rate = r["resolutions_per_s"] or 0
        what = f"challenges, {top} pairs {layout}{' + tablet' if tablet else ''}, {procs} processes"
        value = f"{rate} resolutions/s"
        if r.get("ceiling_resolutions_per_s") is not None:
            value += (
                f" (the machine {r['all_in_ms_per_tap']} ms a tap, {r['machine_busy_pct']}% busy:"
                f" at most {r['ceiling_resolutions_per_s']}/s on its {r['cores']} cores at this"
                " cost)"
            )
        goals.append(
            {
                "goal": f"{what}: >= 50 resolutions/s",
                "value": value,
                "met": rate >= 50 and not r["errors"] and not r["missing"],
            }
        )
        p99 = r["throw_p99_ms"]
        goals.append(
            {
                "goal": f"{what}: throw on the other phone p99 <= 250 ms",
                "value": f"p99 {p99} ms",
                "met": p99 is not None and p99 <= 250 and not r["missing"],
            }
        )
    return goals


def idle_table() -> list[dict[str, Any]]:
    return [
        {
            "goal": f"idle cost, {i['phones']} phones on {i['procs']} process(es) (measured, "
            "no target)",
            "value": f"{i['cpu_pct']}% of a core, RSS {'+'.join(map(str, i['rss_mb']))} MB",
            "met": None,
        }
        for i in IDLE
    ]


def goal_lines(goals: list[dict[str, Any]]) -> None:
    log("")
    for g in goals:
        verdict = {True: "met", False: "NOT met", None: "not measured"}[g["met"]]
        if g["met"] is None and g["value"]:
            verdict = "measured"
        log(f"goal {g['goal']}: {g['value'] or '-'}: {verdict}")


async def main(args) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # children inherit it
    logs = ROOT / "var" / f"bench_fanout_logs_{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    secret = "bench-fanout-" + secrets.token_urlsafe(40)
    prefix = f"bench_fanout_{os.getpid()}_"
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    database_url = bench_database_url()
    ns = args.phones
    log(
        f"fan-out bench: N = {', '.join(map(str, ns))}; {args.rounds} rounds each after "
        f"{WARMUP} warm-up; {args.clients} phone processes; {os.cpu_count()} CPUs; "
        f"permessage-deflate {'off' if args.no_compression else 'on (as browsers offer it)'}; "
        f"Python {interpreter()} (its build matters: README, Set up)"
    )
    load_warning()
    speed = {"start": machine_speed()}
    log(f"machine speed: a fixed Python loop takes {speed['start']} ms of CPU (lower: faster)")
    began = time.monotonic()
    rows: list[dict[str, Any]] = []
    challenges: list[dict[str, Any]] = []
    pool = await Pool.start(args.clients, not args.no_compression, logs)
    pg_made = False
    failed = False
    try:
        remove_sqlite()
        await run(
            [PY, "manage.py", "collectstatic", "--noinput", "-v0"],
            server_env({"SQLITE_PATH": str(SQLITE)}, None, prefix, secret),
            "collectstatic",
        )
        log("one process, in-memory layer, SQLite (as make run):")
        _scene, channels, app = await setup_one(
            args, pool, logs, secret, {"SQLITE_PATH": str(SQLITE)}, None, prefix, 1, "memory"
        )
        payload = logs / "payload-memory.html"
        floor: list[Measured] = []
        if "floor" in args.only:
            log("  floor (bare websockets broadcast, one process):")
            floor = await run_floor(args, pool, payload, logs)
        rows += entries(floor, channels, app, 1, "memory", ns)

        reason = None if args.one_process else two_process_reason(database_url, redis_url)
        if args.one_process:
            reason = "--one-process given"
        if reason:
            log(f"two processes, channels-redis, PostgreSQL: SKIPPED ({reason})")
            if "challenges" in args.only:
                log("  challenges (one process, in-memory layer, SQLite):")
                env = server_env({"SQLITE_PATH": str(SQLITE)}, None, prefix, secret)
                challenges += await run_challenges(args, pool, logs, env, 1, "memory", log)
        else:
            log(f"two processes, channels-redis, PostgreSQL ({PG_NAME}), Redis prefix {prefix}:")
            postgres_admin(database_url, f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
            postgres_admin(database_url, f'CREATE DATABASE "{PG_NAME}"')
            pg_made = True
            _scene, channels2, app2 = await setup_one(
                args,
                pool,
                logs,
                secret,
                {"DATABASE_URL": database_url},
                redis_url,
                prefix,
                2,
                "redis",
            )
            rows += entries(floor, channels2, app2, 2, "redis", ns)
            if "challenges" in args.only:
                log("  challenges (two processes, channels-redis, PostgreSQL):")
                env = server_env({"DATABASE_URL": database_url}, redis_url, prefix, secret)
                challenges += await run_challenges(args, pool, logs, env, 2, "redis", log)
    except BaseException:
        failed = True
        raise
    finally:
        await pool.stop()
        if pg_made:
            with contextlib.suppress(Exception):
                postgres_admin(database_url, f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
        with contextlib.suppress(Exception):
            redis_cleanup(redis_url, prefix)
        remove_sqlite()
        if failed or args.keep_logs:
            log(f"logs kept in {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    table(rows)
    goals = fanout_goals(rows) + challenge_table(challenges) + idle_table()
    goal_lines(goals)
    log(f"bench took {time.monotonic() - began:.0f} s")
    speed["end"] = machine_speed()
    log(f"machine speed: the same loop took {speed['start']} ms at the start, {speed['end']} now")
    public = [{k: v for k, v in row.items() if not k.startswith("_")} for row in rows]
    one, five, _ = os.getloadavg()
    print(
        json.dumps(
            {
                "load_average": [round(one, 2), round(five, 2)],
                "python": interpreter(),
                "machine_speed_ms": speed,
                "fanout": public,
                "challenges": challenges,
                "idle": IDLE,
                "goals": goals,
            }
        ),
        flush=True,
    )


def interpreter() -> str:
    """The servers' Python (the bench's own, ``PY``): its version and the binary behind the venv."""
    return f"{sys.version.split()[0]} {os.path.realpath(PY)}"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--phones", default="100,300,1000", type=lambda s: sorted({int(x) for x in s.split(",")})
    )
    parser.add_argument("--rounds", type=int, default=20, help="measured rounds per N (1..200)")
    parser.add_argument("--clients", type=int, default=2, help="phone processes (1..8)")
    parser.add_argument("--no-compression", action="store_true", help="no permessage-deflate")
    parser.add_argument(
        "--one-process", action="store_true", help="skip the Redis/PostgreSQL setup"
    )
    parser.add_argument(
        "--pairs",
        default="1,4,16",
        type=lambda s: sorted({int(x) for x in s.split(",")}),
        help="challenge bench: pairs playing at once (1..64)",
    )
    parser.add_argument(
        "--layouts",
        default="separate,shared",
        type=lambda s: [x for x in ("separate", "shared") if x in s.split(",")],
        help="challenge bench: pairs in scenes of their own, in one shared scene, or both",
    )
    parser.add_argument(
        "--tablet-pairs",
        default="16",
        type=lambda s: sorted({int(x) for x in s.split(",") if x}),
        help="challenge bench: these numbers of pairs again with the storyteller's tablet open "
        "on each scene (a real night's shape; empty: none)",
    )
    parser.add_argument(
        "--challenge-seconds", type=float, default=10, help="challenge bench: per set-up"
    )
    parser.add_argument(
        "--idle-seconds", type=float, default=30, help="idle cost at the largest N (0: skip)"
    )
    parser.add_argument("--keep-logs", action="store_true")
    parser.add_argument("--max-minutes", type=float, default=30, help="stop the run after this")
    parser.add_argument(
        "--only",
        default="floor,channels,app,idle,challenges",
        type=lambda s: set(s.split(",")),
        help="what to measure (floor,channels,app,idle,challenges)",
    )
    args = parser.parse_args(argv)
    args.rounds = max(1, min(args.rounds, 200))
    args.clients = max(1, min(args.clients, 8))
    if not args.phones or min(args.phones) < 1 or max(args.phones) > 5000:
        parser.error("--phones: between 1 and 5000")
    if not args.pairs or min(args.pairs) < 1 or max(args.pairs) > 64:
        parser.error("--pairs: between 1 and 64")
    if not args.layouts:
        parser.error("--layouts: separate, shared or both")
    return args


async def bounded(args: argparse.Namespace) -> None:
    """The whole run, stopped (and cleaned up) after ``--max-minutes``."""
    try:
        await asyncio.wait_for(main(args), args.max_minutes * 60)
    except TimeoutError:
        log(f"fan-out bench stopped after {args.max_minutes} minutes (--max-minutes)")
        raise SystemExit(1) from None


if __name__ == "__main__":
    asyncio.run(bounded(parse(sys.argv[1:])))
