"""What one tap costs the server: CPU ms and queries per tap, for a challenge and a round.

``python bench/tap_cost.py [--database sqlite|postgres] [--challenges 10] [--rounds 4]
[--shared 0] [--history 0] [--profile var/tap.prof] [--lock-profile var/lock.prof] [--sql 20]``

A benchmark, never a test: it prints numbers and asserts nothing. In one process, through
the real views with Django's test client (DEBUG off), against SQLite (a file of its own,
``var/bench_tap_cost.sqlite3``) or PostgreSQL (``--database postgres``: the database of
``DATABASE_URL`` with ``_tapcost`` appended, dropped and made again; the in-memory channel
layer either way, so a push is rendered and handed to the layer but crosses no network).

- **Challenge**: one pair of ``bench/challenge_setup.py`` (met_classic) plays whole
  challenges: the start, the defender's bid, both throws, the loser takes the result (5
  posts). Each post locks, writes, commits, renders every audience's fragments on commit and
  answers with the actor's region. The first challenges warm up (templates compiled, caches
  filled) and leave finished cards on both phones and the board, as a night does.
- ``--shared P``: P pairs in one scene instead (as ``tap_server.py``'s shared layout), their
  taps interleaved (each pair's next post in turn), so P challenges are open at once and every
  change is rendered for a scene of 2P players; a "challenge" is then P of them.
- ``--history N``: after the warm-up, N finished challenges of two NPCs are added to the
  challenge's scene (copies of its newest): the history a shared scene builds up, on no
  phone of the pair's (then analyzed, as autovacuum would have the table of a night that
  grew over hours). What a tap costs should not grow with it.
- ``--tablet``: the storyteller's tablet is open on both scenes (a presence row), so every
  change renders the board too; without it no board is open and none is rendered.
- **Round** (wod_dice): the storyteller starts a fight of two players, sets both
  initiatives, begins the round; each player declares from the phone; the storyteller
  resolves both and ends the fight (8 posts).

For each it prints the CPU per tap (``time.process_time``: this process's CPU, the server's
whole share of a tap), the queries per tap, and where the CPU went: the step itself, the
pushes rendered on commit, and the answer. Then the scene's lock: from the statement that
locks the scene's row to the commit (every other tap of the scene waits that long), its wall
time and CPU a tap, the statements under it and the time spent in them and in the commit;
``--lock-profile FILE`` writes cProfile's CPU profile of those holds alone. The last line is
JSON.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.challenge_play import Pair  # noqa: E402

SQLITE = ROOT / "var" / "bench_tap_cost.sqlite3"
SETUP = ROOT / "var" / "bench_tap_cost_setup.json"


def environment(database: str) -> str:
    """Settings for a DEBUG-off server on its own database; returns the database's label."""
    os.environ.pop("REDIS_URL", None)  # the in-memory layer and cache: one process
    os.environ.update(
        DEBUG="0",
        SECRET_KEY="bench-tap-cost-" + "x" * 50,
        ALLOWED_HOSTS="testserver",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        SECURE_HSTS_SECONDS="0",
        THROTTLE="0",  # one phone taps as fast as it is answered: no person's throttle
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    if database == "postgres":
        url = os.environ.get("DATABASE_URL", "")
        if not url.startswith("postgres"):
            raise SystemExit("--database postgres needs DATABASE_URL=postgres://…")
        base, _, name = url.rpartition("/")
        name = name.split("?")[0] + "_tapcost"
        host = base.split("@")[-1].split(":")[0] or "127.0.0.1"
        user = base.split("//")[1].split("@")[0].split(":")[0] if "@" in base else "postgres"
        for tool in ("dropdb", "createdb"):
            extra = ["--if-exists"] if tool == "dropdb" else []
            subprocess.run([tool, "-h", host, "-U", user, *extra, name], check=True)
        os.environ["DATABASE_URL"] = f"{base}/{name}"
        return f"postgres ({name})"
    os.environ.pop("DATABASE_URL", None)
    for suffix in ("", "-wal", "-shm"):
        Path(str(SQLITE) + suffix).unlink(missing_ok=True)
    os.environ["SQLITE_PATH"] = str(SQLITE)
    return "sqlite"


def build_challenge_pairs(shared: int = 0) -> list[dict[str, Any]]:
    """One pair in its scene, or ``shared`` pairs in one scene."""
    pairs = ["--pairs", str(shared), "--layouts", "shared"] if shared else ["--pairs", "1"]
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "challenge_setup.py"), str(SETUP), *pairs],
        check=True,
        env=os.environ,
    )
    return json.loads(SETUP.read_text())["setups"][0]["tables"]


def build_round_table() -> dict[str, Any]:
    """A wod_dice scene: the storyteller and two players with dots (no pushes while built)."""
    from django.contrib.auth import get_user_model

    from characters.models import Attribute, Character, Chronicle, GameNight
    from characters.roles import storytellers_group
    from combat import live, services

    saved = live.scene_changed, live.presence_changed, live.sheets_changed
    live.scene_changed = live.presence_changed = live.sheets_changed = lambda *a, **k: None
    try:
        users = get_user_model()
        st = users.objects.create(username="tapcost_st", is_staff=True)
        st.groups.add(storytellers_group())
        chronicle = Chronicle.objects.create(name="Tap cost rounds", ruleset="wod_dice")
        chronicle.storytellers.add(st)
        GameNight.objects.create(chronicle=chronicle, number=1, opened_by=st)
        scene = services.scene_open(chronicle=chronicle, by=st, name="Tap cost fight")
        out: dict[str, Any] = {"scene": scene.pk, "st": st, "players": []}
        for name in ("Jane", "Frank"):
            user = users.objects.create(username=f"tapcost_{name.lower()}")
            character = Character.objects.create(
                chronicle=chronicle, name=name, player=user, creature="mortal", willpower=5
            )
            for attr in ("Strength", "Dexterity", "Stamina", "Wits", "Perception"):
                Attribute.objects.create(character=character, name=attr, value=3)
            p = services.scene_join(code=scene.join_code, user=user, character=character)
            out["players"].append({"user": user, "participant": p.pk})
        return out
    finally:
        live.scene_changed, live.presence_changed, live.sheets_changed = saved


class Meter:
    """Counts queries and CPU by phase: the step, the pushes (on commit), the answer."""

    def __init__(self) -> None:
        self.queries = Counter()
        self.shapes = Counter()
        self.cpu = Counter()
        self.phase = "step"
        self.on = False
        # the scene's lock: from its statement to the commit (wall, CPU, statements under it)
        self.locked_at: tuple[float, float] | None = None
        self.lock = Counter()
        self.lock_profile: cProfile.Profile | None = None  # the lock's hold alone

    def count(self, execute, sql, params, many, context):
        if self.on:
            self.queries[self.phase] += 1
            if self.locked_at is not None:
                self.lock["statements"] += 1
            elif "FOR UPDATE" in sql and 'FROM "combat_scene"' in sql:
                self.locked_at = (time.perf_counter(), time.process_time())
                if self.lock_profile is not None:
                    self.lock_profile.enable()
                self.lock["statements"] += 1
                self.lock["holds"] += 1
            locked = "locked" if self.locked_at is not None else ""
            self.shapes[(self.phase, locked, " ".join(sql.split())[:90])] += 1
            if self.locked_at is not None:
                start = time.perf_counter()
                try:
                    return execute(sql, params, many, context)
                finally:
                    self.lock["in_statements"] += time.perf_counter() - start
        return execute(sql, params, many, context)

    def committing(self) -> None:
        if self.locked_at is not None:
            self.lock["commit"] -= time.perf_counter()

    def released(self) -> None:
        """The transaction that held the scene's lock committed or rolled back."""
        if self.locked_at is not None:
            self.lock["commit"] += time.perf_counter()
            if self.lock_profile is not None:
                self.lock_profile.disable()
            wall, cpu = self.locked_at
            self.lock["wall"] += time.perf_counter() - wall
            self.lock["cpu"] += time.process_time() - cpu
            self.locked_at = None

    @contextmanager
    def paused(self):
        """The driver's own look-ups (which challenge, which token) are no tap's."""
        was, self.on = self.on, False
        try:
            yield
        finally:
            self.on = was

    @contextmanager
    def during(self, phase: str):
        before, start = self.phase, time.process_time()
        self.phase = phase
        try:
            yield
        finally:
            if self.on:
                self.cpu[phase] += time.process_time() - start
            self.phase = before


def instrument(meter: Meter) -> None:
    """Attribute the pushes' and the answer's CPU and queries to them."""
    from django.db.backends.signals import connection_created

    from combat import live, posts

    def wrap(fn, phase):
        def wrapped(*args, **kwargs):
            with meter.during(phase):
                return fn(*args, **kwargs)

        return wrapped

    for name in ("scene_changed", "sheets_changed"):
        setattr(live, name, wrap(getattr(live, name), "pushes"))
    # The answer is the ``reply`` a view hands ``scene_post`` when its module is imported:
    # wrapped before the views are imported (the URLconf imports them on the first request).
    views = ("combat.challenges.views", "combat.rounds.views", "chases.views", "combat.views")
    if any(name in sys.modules for name in views):
        raise RuntimeError("instrument() runs before the views are imported")
    scene_post = posts.scene_post

    def answered(*args, reply=posts.screen_reply, **kwargs):
        return scene_post(*args, reply=wrap(reply, "answer"), **kwargs)

    posts.scene_post = answered

    def connected(sender, connection, **kwargs) -> None:
        # the wrapper outlives its connections: counted once however often it reconnects
        if meter.count not in connection.execute_wrappers:
            connection.execute_wrappers.append(meter.count)
        for name in ("_commit", "_rollback"):
            if not hasattr(getattr(connection, name), "metered"):
                done = _then(getattr(connection, name), meter.committing, meter.released)
                setattr(connection, name, done)

    connection_created.connect(connected, weak=False)


def _then(fn, before, after):
    def wrapped(*args, **kwargs):
        before()
        try:
            return fn(*args, **kwargs)
        finally:
            after()

    wrapped.metered = True
    return wrapped


def open_tablets(scene_ids: list[int]) -> None:
    """A storyteller's socket on each scene, as its presence row says (no socket is read)."""
    from combat.models import Presence, Scene

    for scene in Scene.objects.filter(pk__in=scene_ids).select_related("chronicle"):
        st = scene.chronicle.storytellers.first()
        Presence.objects.create(scene=scene, user=st, channel_name=f"tapcost.tablet.{scene.pk}")


def client_for(user=None, session: str = ""):
    from django.conf import settings
    from django.test import Client

    client = Client()
    if user is not None:
        client.force_login(user)
    else:
        client.cookies[settings.SESSION_COOKIE_NAME] = session
    return client


def post(client, url: str, counter, **data) -> str:
    data.setdefault("key", f"tap-{next(counter):08d}")
    # as htmx sends a form (urlencoded), not the test client's default multipart body
    body = urlencode(data, doseq=True)
    form = "application/x-www-form-urlencoded"
    answer = client.post(url, body, content_type=form, HTTP_HX_REQUEST="true")
    if answer.status_code != 200:
        raise SystemExit(f"POST {url} answered {answer.status_code}: {answer.content[:400]!r}")
    return answer.content.decode()


def challenge_driver(tables: list[dict[str, Any]], counter, meter: Meter):
    """Each pair plays one challenge (5 posts); the pairs' posts interleaved, one each in turn."""
    from combat.models import Challenge

    def one(table: dict[str, Any]):
        scene = table["scene"]
        phones = {s: client_for(session=table[s]["session"]) for s in ("attacker", "defender")}
        pair = Pair(traits={s: table[s]["traits"] for s in ("attacker", "defender")})
        mine = table["attacker"]["participant"]

        def play():
            ch = pair.next()
            if ch is None:
                raise SystemExit("the pair's bids ran out: fewer --challenges")
            post(
                phones["attacker"],
                f"/scenes/{scene}/challenges/",
                counter,
                attacker=mine,
                defender=table["defender"]["participant"],
                mode="contested",
                bid=f"{ch.category}:{ch.bids['attacker']}",
                effect="bench",
            )
            yield
            with meter.paused():
                cid = (
                    Challenge.objects.filter(scene_id=scene, attacker_id=mine)
                    .order_by("-pk")
                    .values_list("pk")[0][0]
                )
            act = f"/scenes/{scene}/challenges/{cid}/act/"
            bid = ch.bids["defender"]
            post(phones["defender"], act, counter, action="answer", side="defender",
                 answer="bid", bid=bid)  # fmt: skip
            yield
            post(phones["attacker"], act, counter, action="throw", side="attacker",
                 throw=ch.throws["attacker"])  # fmt: skip
            yield
            post(phones["defender"], act, counter, action="throw", side="defender",
                 throw=ch.throws["defender"])  # fmt: skip
            yield
            post(phones[ch.loser], act, counter, action="accept", side=ch.loser)
            pair.resolved()
            yield

        return play

    players = [one(table) for table in tables]

    def play() -> int:
        running = [p() for p in players]
        taps = 0
        while running:
            for gen in list(running):
                try:
                    next(gen)
                    taps += 1
                except StopIteration:
                    running.remove(gen)
        return taps

    return play


def round_driver(table: dict[str, Any], counter, meter: Meter):
    from combat.models import Combat
    from combat.rounds.tokens import state_token

    scene = table["scene"]
    st = client_for(table["st"])
    phones = [client_for(p["user"]) for p in table["players"]]
    ids = [p["participant"] for p in table["players"]]

    def url(slug: str) -> str:
        return f"/scenes/{scene}/combat/{slug}/"

    def at() -> str:
        with meter.paused():
            return state_token(Combat.objects.filter(scene_id=scene).latest("pk"))

    def play() -> int:
        post(st, url("start"), counter, who=ids)
        for pk, roll in zip(ids, (7, 3), strict=True):
            post(st, url("initiative"), counter, participant=pk, roll=roll)
        post(st, url("begin"), counter, token=at())
        # the lower initiative declares first (W: declarations go up the order)
        post(phones[1], url("declare"), counter, participant=ids[1], action="dodge", token=at(),
             **{"from": "phone"})  # fmt: skip
        post(phones[0], url("declare"), counter, participant=ids[0], action="dodge", token=at(),
             **{"from": "phone"})  # fmt: skip
        for pk in ids:
            post(st, url("resolve"), counter, participant=pk, token=at())
        post(st, url("end"), counter)
        return 9

    return play


def add_history(scene_id: int, count: int) -> None:
    """``count`` finished challenges of two NPCs of the scene's, copies of its newest one: a
    scene's history as a shared scene has it (other pairs' challenges, none on these phones)."""
    from django.db import connection

    from combat import live
    from combat.challenges import board_reads
    from combat.models import Challenge, Participant

    if count < 1:
        return
    model = Challenge.objects.filter(scene_id=scene_id, status="over").order_by("-pk").first()
    npcs = [
        Participant.objects.create(scene_id=scene_id, name=f"History {n}", npc=True) for n in (1, 2)
    ]
    rows = []
    for _ in range(count):
        row = Challenge.objects.get(pk=model.pk)
        row.pk = None
        row.attacker, row.defender = npcs
        rows.append(row)
    Challenge.objects.bulk_create(rows)
    board_reads.recount(scene_id)  # written outside the steps, which count finished ones
    # the attacker's latest started, as the starts write it (its start form's key)
    Participant.objects.filter(pk=npcs[0].pk).update(last_started=rows[-1].pk)
    live._people_changed(scene_id)  # the NPCs' joining is no measured tap's
    if connection.vendor == "postgresql":  # as autovacuum would have after a night's growth
        with connection.cursor() as cursor:  # (over hours, never in one bulk insert)
            cursor.execute("ANALYZE combat_challenge")


def backends_cpu() -> dict[int, float] | None:
    """CPU seconds (user + system, from ``/proc``) each PostgreSQL backend of this database has
    used so far, by pid: read from a connection of its own, which is left out. ``None`` on
    SQLite, or when the server's processes cannot be read (another machine)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    import psycopg

    params = connection.get_connection_params()
    params.pop("pool", None)
    params.pop("prepare_threshold", None)
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as own:
        pids = [
            pid
            for (pid,) in own.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        found[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return found


def measure(
    name: str,
    play,
    repeats: int,
    warm: int,
    meter: Meter,
    profile,
    show_sql: int = 0,
    before=None,
) -> dict[str, Any]:
    from django.db import connection

    for _ in range(warm):
        play()
    if before is not None:
        before()
    connection.close()  # the next request opens a connection that counts
    meter.queries.clear()
    meter.cpu.clear()
    meter.shapes.clear()
    meter.lock.clear()
    meter.on = True
    taps = 0
    backends = backends_cpu()
    start = time.process_time()
    if profile is not None:
        profile.enable()
    for _ in range(repeats):
        taps += play()
    if profile is not None:
        profile.disable()
    cpu = time.process_time() - start
    meter.on = False
    pg_ms = None
    after = backends_cpu() if backends is not None else None
    if backends is not None and after is not None:  # a backend opened since: from its start
        pg_ms = round(1000 * sum(t - backends.get(p, 0.0) for p, t in after.items()) / taps, 2)
    meter.cpu["step"] = cpu - meter.cpu["pushes"] - meter.cpu["answer"]
    row = {
        "what": name,
        "taps": taps,
        "cpu_ms_per_tap": round(1000 * cpu / taps, 1),
        "queries_per_tap": round(sum(meter.queries.values()) / taps, 1),
        "pg_backend_cpu_ms_per_tap": pg_ms,
        "by_phase": {
            phase: {
                "cpu_ms": round(1000 * meter.cpu[phase] / taps, 1),
                "queries": round(meter.queries[phase] / taps, 1),
            }
            for phase in ("step", "pushes", "answer")
        },
        "scene_lock": {
            "held_ms": round(1000 * meter.lock["wall"] / taps, 2),
            "cpu_ms": round(1000 * meter.lock["cpu"] / taps, 2),
            "in_statements_ms": round(1000 * meter.lock["in_statements"] / taps, 2),
            "commit_ms": round(1000 * meter.lock["commit"] / taps, 2),
            "statements": round(meter.lock["statements"] / taps, 1),
            "holds": round(meter.lock["holds"] / taps, 1),
        },
    }
    phases = ", ".join(
        f"{p} {v['cpu_ms']} ms / {v['queries']} q" for p, v in row["by_phase"].items()
    )
    print(
        f"{name}: {row['cpu_ms_per_tap']} ms CPU a tap, {row['queries_per_tap']} queries a tap"
        f" over {taps} taps ({phases})",
        flush=True,
    )
    if row["pg_backend_cpu_ms_per_tap"] is not None:
        print(f"  PostgreSQL's backends: {row['pg_backend_cpu_ms_per_tap']} ms CPU a tap")
    lock = row["scene_lock"]
    print(
        f"  the scene's lock (its statement to the commit): held {lock['held_ms']} ms a tap"
        f" (CPU {lock['cpu_ms']} ms; in its {lock['statements']} statements"
        f" {lock['in_statements_ms']} ms, the commit {lock['commit_ms']} ms)",
        flush=True,
    )
    if show_sql:
        for (phase, locked, sql), n in meter.shapes.most_common(show_sql):
            print(f"  {n / taps:5.1f} a tap  {phase:6} {locked:6} {sql}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--challenges", type=int, default=10)
    parser.add_argument("--warm", type=int, default=8, help="challenges played before measuring")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--tablet",
        action="store_true",
        help="the storyteller's tablet open on each scene (a presence row): its board is pushed",
    )
    parser.add_argument(
        "--shared", type=int, default=0, help="P pairs in one scene, their taps interleaved"
    )
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="finished challenges of two NPCs added to the challenge's scene after the warm-up",
    )
    parser.add_argument("--sql", type=int, default=0, help="print the N commonest queries")
    parser.add_argument("--profile", help="write cProfile's stats of the measured taps here")
    parser.add_argument(
        "--lock-profile", help="write cProfile's stats of the scene lock's holds alone here"
    )
    args = parser.parse_args()
    label = environment(args.database)
    tables = build_challenge_pairs(args.shared)  # migrates the database too

    import django

    django.setup()
    import itertools

    round_table = build_round_table()
    if args.tablet:
        open_tablets([tables[0]["scene"], round_table["scene"]])
    meter = Meter()
    instrument(meter)
    counter = itertools.count()
    profile = cProfile.Profile() if args.profile else None
    if args.lock_profile:
        meter.lock_profile = cProfile.Profile(time.process_time)  # CPU, not the waits
    rows = [
        measure(
            "challenge",
            challenge_driver(tables, counter, meter),
            args.challenges,
            args.warm,
            meter,
            profile,
            args.sql,
            before=lambda: add_history(tables[0]["scene"], args.history),
        ),
    ]
    if args.rounds:  # --rounds 0: the challenges alone
        rows.append(
            measure(
                "round",
                round_driver(round_table, counter, meter),
                args.rounds,
                1,
                meter,
                profile,
                args.sql,
            )
        )
    if profile is not None:
        profile.dump_stats(args.profile)
    if meter.lock_profile is not None:
        meter.lock_profile.dump_stats(args.lock_profile)
    print(
        json.dumps(
            {
                "database": label,
                "tablet": args.tablet,
                "shared": args.shared,
                "history": args.history,
                "results": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
