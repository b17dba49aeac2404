"""What the HTTP stack costs a tap, without the view: CPU per request through the real ASGI
application (every middleware, Django's ASGI handler, its thread hops) to a view that does
nothing but what every tap view does first (the user, logged in).

``python bench/asgi_cost.py [--requests 400] [--profile var/asgi.prof]``

Run after ``bench/tap_server.py`` (it reads that run's database and sessions:
``var/tap_server_logs/setup.json``), with the same ``DATABASE_URL`` / ``REDIS_URL`` /
``CHANNELS_PREFIX``. One process, uvloop as ``manage.py serve`` runs; the POST goes to
``/scenes/<pk>/noop/`` (a route of this script), so the scene's turn, the throttle, the
CSRF check, the session and the user all apply as they do to a tap. Prints CPU ms per
request (``time.process_time``: every thread of the process). ``THROTTLE=1``: with the taps'
throttle (its buckets never run dry here).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import pstats
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import tap_server  # noqa: E402
from bench.fanout import server_env  # noqa: E402

CSRF = "x" * 32


def environment() -> None:
    """This process's settings: ``bench/tap_server.py``'s servers' (its database, its Redis
    prefix), with this module as the settings."""
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench")
    if not url.endswith(tap_server.SUFFIX):
        url += tap_server.SUFFIX
    prefix = os.environ.get("CHANNELS_PREFIX", "bench") + tap_server.SUFFIX
    redis = os.environ.get("REDIS_URL")
    env = server_env({"DATABASE_URL": url}, redis, prefix, tap_server.SECRET)
    env.update(THROTTLE=os.environ.get("THROTTLE", "0"), DJANGO_SETTINGS_MODULE="bench.asgi_cost")
    os.environ.clear()
    os.environ.update(env)


def scope(scene: int, session: str, body: bytes) -> dict:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"cookie", f"sessionid={session}; csrftoken={CSRF}".encode()),
        (b"x-csrftoken", CSRF.encode()),
        (b"origin", b"http://127.0.0.1:8000"),
        (b"referer", b"http://127.0.0.1:8000/"),
        (b"hx-request", b"true"),
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", str(len(body)).encode()),
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": f"/scenes/{scene}/noop/",
        "raw_path": f"/scenes/{scene}/noop/".encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def one(app, scope_: dict, body: bytes) -> int:
    sent: list[dict] = []
    delivered = False
    never = asyncio.get_running_loop().create_future()

    async def receive() -> dict:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await never  # the client never disconnects

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope_, receive, send)
    never.cancel()
    return sent[0]["status"]


async def drive(requests: int, profile: str) -> None:
    from config.asgi import application

    setup = json.loads((ROOT / "var" / "tap_server_logs" / "setup.json").read_text())
    table = setup["setups"][0]["tables"][0]
    body = b"action=noop&key=1"
    s = scope(table["scene"], table["attacker"]["session"], body)
    for _ in range(30):  # warm-up
        status = await one(application, s, body)
    if status != 200:
        raise SystemExit(f"the noop tap answered {status}")
    prof = cProfile.Profile() if profile else None
    if prof:
        threads: list[cProfile.Profile] = []
        run = threading.Thread.run

        def profiled(self: threading.Thread) -> None:  # a request's worker thread too
            p = cProfile.Profile()
            threads.append(p)
            p.enable()
            try:
                run(self)
            finally:
                p.disable()

        threading.Thread.run = profiled
        prof.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(requests):
        await one(application, s, body)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if prof:
        prof.disable()
        threading.Thread.run = run
        stats = pstats.Stats(prof)
        for p in threads:
            with contextlib.suppress(Exception):
                stats.add(p)
        stats.dump_stats(profile)
    print(
        f"HTTP stack, noop tap: {1000 * cpu / requests:.2f} ms CPU a request "
        f"({1000 * wall / requests:.2f} ms wall) over {requests}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--profile", default="")
    args = parser.parse_args()
    environment()
    import uvloop

    uvloop.run(drive(args.requests, args.profile))


if os.environ.get("DJANGO_SETTINGS_MODULE") == "bench.asgi_cost":
    # This module is the settings too: the project's, and a noop route under /scenes/.
    from config.settings import *  # noqa: F403

    ROOT_URLCONF = "bench.asgi_cost_urls"
    # THROTTLE=1: the tap's bucket is looked at and taken as in play, but never runs dry.
    THROTTLES = {**THROTTLES, "player": (1e6, 10**6), "storyteller": (1e6, 10**6)}  # noqa: F405

if __name__ == "__main__":
    main()
