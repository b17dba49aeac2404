"""Challenge throughput, part of ``make bench``: pairs of players play whole challenges through
the real HTTP endpoints while their phones listen on the real websockets.

For each set-up of ``challenge_setup.py`` (P pairs, each in a scene of its own or all in one shared
scene; with ``tablet``, the storyteller's socket open on each scene, as on a real night, so every
change pushes the board too) every player loads its phone page (for the CSRF cookie and the
``seq``), opens its scene socket (``bench/phones.py``), and each pair plays challenges back to back
for ``--challenge-seconds`` (``challenge_play.py``: start, bid, two throws, the loser accepts), the
attacker on the first server process, the defender on the second (so with two processes every push
to the other phone crosses the channel layer). After each POST the pair waits until the other
player's phone has a private part (``#scene-private`` or its ``#prompts`` piece) rendered after the
tap (a ``data-seq`` above every ``seq`` the pair's earlier answers carried: a push is rendered on
commit, before the answer, so an older push never passes for a newer one); the time from sending
the POST to that frame is the tap-to-other-screen latency (the throws' is the goal).

Measured per set-up: challenges resolved per second, p50/p99 of the throws' (and every tap's)
tap-to-other-screen latency, the POSTs' answer time, and the server processes' CPU per tap
(``/proc``, before and after). Errors (an answer other than 200, a push that never came)
are counted, never hidden. A 503 (the scene's taps queued too long, ``combat.turns``) is sent
again after its Retry-After with the same key, as the phone does, and counted (``busy``);
that tap's times run from its first send.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import secrets
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import machine
from bench.challenge_play import Pair
from bench.minihttp import Client
from bench.procs import PY, ROOT, Pool, Server, free_port, settle

SEQ = re.compile(r'data-seq="(\d+)"')
ACT = re.compile(r"/challenges/(\d+)/act/")
FRAME_TIMEOUT = 10.0


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)], 1)


@dataclass
class Player:
    label: str
    client: Client
    participant: int
    traits: dict[str, dict[str, int]]


@dataclass
class Scenario:
    pairs: int
    layout: str
    procs: int
    layer: str
    resolved: int = 0
    taps: int = 0
    seconds: float = 0.0
    cpu_s: float = 0.0
    throw_ms: list[float] = field(default_factory=list)
    tap_ms: list[float] = field(default_factory=list)
    post_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    missing: int = 0  # taps whose push never reached the other phone within FRAME_TIMEOUT
    busy: int = 0  # 503 answers (the scene's queue too long): sent again, as the phone does
    exhausted: int = 0  # pairs that ran out of bids before the time was up
    tablet: bool = False  # the storyteller's tablet open on each scene: the board is pushed too
    machine: machine.Usage | None = None  # the whole machine during the play (bench/machine.py)

    def row(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "layout": self.layout,
            "tablet": self.tablet,
            "procs": self.procs,
            "layer": self.layer,
            "resolutions": self.resolved,
            "seconds": round(self.seconds, 1),
            "resolutions_per_s": round(self.resolved / self.seconds, 2) if self.seconds else None,
            "taps": self.taps,
            "throw_p50_ms": pct(self.throw_ms, 50),
            "throw_p99_ms": pct(self.throw_ms, 99),
            "tap_p50_ms": pct(self.tap_ms, 50),
            "tap_p99_ms": pct(self.tap_ms, 99),
            "post_p50_ms": pct(self.post_ms, 50),
            "cpu_ms_per_tap": self.per_tap(self.cpu_s),
            **self.machine_row(),
            "errors": len(self.errors),
            "missing": self.missing,
            "busy": self.busy,
        }

    def per_tap(self, seconds: float | None) -> float | None:
        return round(1000 * seconds / self.taps, 1) if self.taps and seconds is not None else None

    def machine_row(self) -> dict[str, Any]:
        """The machine's share: PostgreSQL's and Redis's CPU per tap (None where they do not
        run on this machine), every core's busy time per tap (``all_in``: servers, database,
        Redis and the bench's own phones), how busy the cores were, and so what they would
        carry all busy at this cost (``ceiling``: the rate over the busy share)."""
        m = self.machine
        if m is None:
            return {}
        rate = self.resolved / self.seconds if self.seconds else 0.0
        return {
            "pg_ms_per_tap": self.per_tap(m.postgres_s if m.postgres_seen else None),
            "redis_ms_per_tap": self.per_tap(m.redis_s if m.redis_seen else None),
            "all_in_ms_per_tap": self.per_tap(m.busy_s),
            "machine_busy_pct": m.busy_pct,
            "cores": m.cores,
            "ceiling_resolutions_per_s": round(100 * rate / m.busy_pct, 1) if m.busy_pct else None,
        }


class Stop(Exception):
    """The pair cannot go on (an error answer)."""


class Table:
    """One pair at its scene: the two players, the pair's bids, the newest seq it saw."""

    def __init__(self, scene: int, a: Player, d: Player, above: int, result: Scenario):
        self.scene, self.a, self.d, self.above, self.result = scene, a, d, above, result
        self.play = Pair(traits={"attacker": a.traits, "defender": d.traits})

    def side(self, name: str) -> tuple[Player, Player]:
        return (self.a, self.d) if name == "attacker" else (self.d, self.a)

    async def tap(self, pool: Pool, side: str, path: str, data: dict, kind: str) -> str:
        me, other = self.side(side)
        data = {**data, "key": uuid.uuid4().hex}
        answer = await me.client.post(path, data, htmx=True)
        sent = answer.sent_ns
        while answer.status == 503:  # busy: the phone sends it again with its key (scene.js)
            self.result.busy += 1
            await asyncio.sleep(float(answer.header("Retry-After") or 1))
            answer = await me.client.post(path, data, htmx=True)
        self.result.post_ms.append((time.perf_counter_ns() - sent) / 1e6)
        self.result.taps += 1
        if answer.status != 200:
            self.result.errors.append(f"{kind}: HTTP {answer.status}")
            raise Stop(f"{kind} answered HTTP {answer.status}: {answer.text[:200]}")
        got = await pool.frame(other.label, self.above, FRAME_TIMEOUT)
        if got is None:
            self.result.missing += 1
        else:
            ms = (got - sent) / 1e6
            self.result.tap_ms.append(ms)
            if kind == "throw":
                self.result.throw_ms.append(ms)
        seqs = [int(s) for s in SEQ.findall(answer.text)]
        self.above = max([self.above, *seqs])
        return answer.text

    async def challenge(self, pool: Pool) -> bool:
        ch = self.play.next()
        if ch is None:
            return False
        base = f"/scenes/{self.scene}/challenges/"
        text = await self.tap(
            pool,
            "attacker",
            base,
            {
                "attacker": str(self.a.participant),
                "defender": str(self.d.participant),
                "mode": "contested",
                "bid": f"{ch.category}:{ch.bids['attacker']}",
                "effect": "bench",
            },
            "start",
        )
        cid = max((int(c) for c in ACT.findall(text)), default=None)
        if cid is None:
            raise Stop("the start's answer names no challenge")
        act = f"{base}{cid}/act/"
        bid = {"action": "answer", "side": "defender", "answer": "bid"}
        await self.tap(pool, "defender", act, {**bid, "bid": ch.bids["defender"]}, "answer")
        for side in ("attacker", "defender"):
            throw = {"action": "throw", "side": side, "throw": ch.throws[side]}
            await self.tap(pool, side, act, throw, "throw")
        await self.tap(pool, ch.loser, act, {"action": "accept", "side": ch.loser}, "accept")
        self.play.resolved()
        self.result.resolved += 1
        return True

    async def run(self, pool: Pool, deadline: float) -> None:
        try:
            while time.monotonic() < deadline:
                if not await self.challenge(pool):
                    self.result.exhausted += 1
                    return
        except Stop as stop:
            self.result.errors.append(str(stop))


async def _page_seq(client: Client, scene: int) -> int:
    """Load the phone page (the CSRF cookie comes with it); the scene's seq it shows."""
    page = await client.request("GET", f"/scenes/{scene}/phone/")
    if page.status != 200:
        raise RuntimeError(f"GET /scenes/{scene}/phone/ answered {page.status}")
    return max((int(s) for s in SEQ.findall(page.text)), default=0)


async def scenario(
    setup: dict[str, Any], pool: Pool, servers: list[Server], seconds: float, layer: str
) -> Scenario:
    layout = "shared" if setup["shared"] else "separate"
    result = Scenario(setup["pairs"], layout, len(servers), layer, tablet=bool(setup.get("tablet")))
    tables, targets = [], []
    for i, row in enumerate(setup["tables"]):
        players = []
        for side, server in (("attacker", servers[0]), ("defender", servers[-1])):
            info = row[side]
            client = Client("127.0.0.1", server.port, cookies={"sessionid": info["session"]})
            label = f"{setup['label']}/{i}/{side}"
            players.append(Player(label, client, info["participant"], info["traits"]))
            targets.append(
                {
                    "url": f"ws://127.0.0.1:{server.port}/ws/scenes/{row['scene']}/",
                    "cookie": f"sessionid={info['session']}",
                    "origin": f"http://127.0.0.1:{server.port}",
                    "label": label,
                }
            )
        seqs = [await _page_seq(p.client, row["scene"]) for p in players]
        tables.append(Table(row["scene"], players[0], players[1], max(seqs), result))
    if result.tablet:  # the storyteller's socket on each scene, as a night has: unlabelled,
        # its frames are read and counted, never waited on
        for i, scene in enumerate(dict.fromkeys(row["scene"] for row in setup["tables"])):
            server = servers[i % len(servers)]
            targets.append(
                {
                    "url": f"ws://127.0.0.1:{server.port}/ws/scenes/{scene}/",
                    "cookie": f"sessionid={setup['tablet']}",
                    "origin": f"http://127.0.0.1:{server.port}",
                }
            )
    try:
        added = await pool.add(targets)
        if added["failed"]:
            result.errors.append(f"{added['failed']} phones could not connect: {added['errors']}")
            return result
        state = await pool.initial(timeout=60)
        if state["with_state"] < state["phones"]:
            result.errors.append(f"{state['phones'] - state['with_state']} phones got no state")
            return result
        await settle(servers)
        cpu = sum(s.cpu for s in servers)
        before = machine.sample()
        began = time.monotonic()
        await asyncio.gather(*(t.run(pool, began + seconds) for t in tables))
        result.seconds = time.monotonic() - began
        result.cpu_s = sum(s.cpu for s in servers) - cpu
        result.machine = machine.usage(before, machine.sample())
    finally:
        for table in tables:
            await table.a.client.close()
            await table.d.client.close()
        await pool.close()
    return result


def report(result: Scenario) -> str:
    r = result.row()
    line = (
        f"    {r['pairs']:>2} pairs, {r['layout'] + (' + tablet' if r['tablet'] else ''):<17}: "
        f"{r['resolutions_per_s']} resolutions/s "
        f"({r['resolutions']} in {r['seconds']} s); throw to the other phone p50 "
        f"{r['throw_p50_ms']} ms, p99 {r['throw_p99_ms']} ms (every tap p50 {r['tap_p50_ms']}, "
        f"p99 {r['tap_p99_ms']}); post answered p50 {r['post_p50_ms']} ms; server CPU "
        f"{r['cpu_ms_per_tap']} ms a tap over {r['taps']} taps"
    )
    if r.get("all_in_ms_per_tap") is not None:
        shares = [
            f"{name} {r[key]}"
            for name, key in (("PostgreSQL", "pg_ms_per_tap"), ("Redis", "redis_ms_per_tap"))
            if r[key] is not None
        ]
        line += (
            f"; the whole machine {r['all_in_ms_per_tap']} ms a tap"
            + (f" ({', '.join(shares)})" if shares else "")
            + f", its {r['cores']} cores {r['machine_busy_pct']}% busy"
        )
    if r["busy"]:
        line += f"; {r['busy']} answers 503 (busy), sent again with their keys"
    if r["errors"] or r["missing"]:
        line += f"; {r['errors']} errors, {r['missing']} pushes missing"
        line += "".join(f"\n      {e}" for e in result.errors[:3])
    if result.exhausted:
        line += f"; {result.exhausted} pairs ran out of bids"
    return line


async def run_challenges(
    args: Any,
    pool: Pool,
    logs: Path,
    env: dict[str, str],
    procs: int,
    layer: str,
    log: Any,
) -> list[dict[str, Any]]:
    """Build the tables, start ``procs`` servers, play every set-up; the rows."""
    out = logs / f"challenges-{secrets.token_hex(4)}.json"
    argv = [PY, str(ROOT / "bench" / "challenge_setup.py"), str(out)]
    argv += ["--pairs", ",".join(map(str, args.pairs)), "--layouts", ",".join(args.layouts)]
    argv += ["--tablet-pairs", ",".join(map(str, args.tablet_pairs))]
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    text, _ = await asyncio.wait_for(proc.communicate(), 300)
    if proc.returncode != 0:
        raise RuntimeError(f"building the challenge tables failed:\n{text.decode()[-2000:]}")
    setups = json.loads(out.read_text(encoding="utf-8"))["setups"]
    servers = [
        Server(
            f"challenges-{layer}-{i}",
            [PY, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env,
            port,
            logs,
        )
        for i, port in enumerate(free_port() for _ in range(procs))
    ]
    rows = []
    try:
        await asyncio.gather(*(s.start() for s in servers))
        for setup in setups:
            result = await scenario(setup, pool, servers, args.challenge_seconds, layer)
            log(report(result))
            rows.append(result.row())
    finally:
        await asyncio.gather(*(s.stop() for s in servers))
    return rows
