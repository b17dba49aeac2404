"""Profile the taps of a challenge end to end, in one process: where a tap's CPU goes.

``python bench/profile_tap.py --challenges 20 --top 40 [--sort tottime] [--out var/tap.prof]``

Builds one pair in its own SQLite file (``var/bench_profile.sqlite3``, ``bench/
challenge_setup.py``) and plays whole challenges through the real views with Django's test
client, DEBUG off: the start, the defender's bid, both throws and the loser's acceptance, each
a POST that locks, writes, commits and then (``transaction.on_commit``) renders every
audience's fragments and publishes them on the in-memory layer, then answers with the
actor's region. Prints the CPU per tap (``time.process_time``), the queries per tap, and
cProfile's top functions over every measured tap (the first challenge warms up).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.challenge_play import Pair  # noqa: E402

DB = ROOT / "var" / "bench_profile.sqlite3"


def environment() -> None:
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(
        SQLITE_PATH=str(DB),
        DEBUG="0",
        SECRET_KEY="bench-profile-" + "x" * 50,
        ALLOWED_HOSTS="testserver",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        SECURE_HSTS_SECONDS="0",
        THROTTLE="0",  # one phone taps as fast as it is answered: no person's throttle
        DJANGO_SETTINGS_MODULE="config.settings",
    )


def build() -> dict:
    for suffix in ("", "-wal", "-shm"):
        Path(str(DB) + suffix).unlink(missing_ok=True)
    out = ROOT / "var" / "bench_profile_setup.json"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "challenge_setup.py"), str(out), "--pairs", "1"],
        check=True,
        env=os.environ,
    )
    return json.loads(out.read_text())["setups"][0]["tables"][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--challenges", type=int, default=15)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--out", help="write the raw profile here (for snakeviz, pstats)")
    args = parser.parse_args()
    environment()
    table = build()

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.db.backends.signals import connection_created
    from django.test import Client

    scene = table["scene"]
    phones = {}
    for side in ("attacker", "defender"):
        client = Client(enforce_csrf_checks=False)
        client.cookies[settings.SESSION_COOKIE_NAME] = table[side]["session"]
        phones[side] = client
    counter = iter(range(10**9))

    def post(who: str, url: str, **data) -> None:
        data["key"] = f"bench-{next(counter):08d}"
        answer = phones[who].post(url, data, HTTP_HX_REQUEST="true")
        if answer.status_code != 200:
            raise SystemExit(f"POST {url} answered {answer.status_code}: {answer.content[:300]}")

    pair = Pair(traits={side: table[side]["traits"] for side in ("attacker", "defender")})

    def challenge() -> int:
        ch = pair.next()
        if ch is None:
            raise SystemExit("the pair's bids ran out: fewer --challenges")
        post(
            "attacker",
            f"/scenes/{scene}/challenges/",
            attacker=table["attacker"]["participant"],
            defender=table["defender"]["participant"],
            mode="contested",
            bid=f"{ch.category}:{ch.bids['attacker']}",
            effect="bench",
        )
        from combat.models import Challenge

        cid = Challenge.objects.filter(scene_id=scene).order_by("-pk").values_list("pk")[0][0]
        act = f"/scenes/{scene}/challenges/{cid}/act/"
        bid = ch.bids["defender"]
        post("defender", act, action="answer", side="defender", answer="bid", bid=bid)
        post("attacker", act, action="throw", side="attacker", throw=ch.throws["attacker"])
        post("defender", act, action="throw", side="defender", throw=ch.throws["defender"])
        post(ch.loser, act, action="accept", side=ch.loser)
        pair.resolved()
        return 5

    challenge()  # warm-up: templates compiled, caches filled
    queries = [0]

    def count(execute, sql, params, many, context):
        queries[0] += 1
        return execute(sql, params, many, context)

    def wrap(sender, connection, **kwargs) -> None:
        connection.execute_wrappers.append(count)

    connection_created.connect(wrap)
    connection.close()  # the next request opens one that counts
    profile = cProfile.Profile()
    taps = 0
    cpu = time.process_time()
    wall = time.perf_counter()
    profile.enable()
    for _ in range(args.challenges):
        taps += challenge()
    profile.disable()
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    counted = queries[0]
    connection_created.disconnect(wrap)
    # The profile itself slows Python down: time a run without it as well.
    cpu_plain = time.process_time()
    for _ in range(args.challenges):
        challenge()
    cpu_plain = time.process_time() - cpu_plain
    print(
        f"{taps} taps ({args.challenges} challenges): {1000 * cpu_plain / taps:.1f} ms CPU a tap "
        f"without the profiler ({1000 * cpu / taps:.1f} ms with it, wall {1000 * wall / taps:.1f}"
        f" ms); {counted / taps:.1f} queries a tap"
    )
    if args.out:
        profile.dump_stats(args.out)
    stats = pstats.Stats(profile)
    stats.strip_dirs().sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
