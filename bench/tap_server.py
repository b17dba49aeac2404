"""The server's CPU per tap through the real endpoints: the challenge bench alone, small.

``python bench/tap_server.py [--pairs 1,4] [--layouts separate] [--procs 2] [--seconds 10]
[--tablet] [--profile var/serve_prof]``

What ``make bench`` measures for challenges (``bench/challenge_bench.py``: pairs playing whole
challenges through ``manage.py serve``, their phones on the real websockets), without the fan-out
and idle parts before it, so the server's share of a tap can be looked at alone. It runs against a
PostgreSQL database of its own (the database of ``DATABASE_URL`` with ``_tapserver`` appended,
dropped and made again) and channels-redis (``REDIS_URL``, its keys under ``CHANNELS_PREFIX`` +
``_tapserver``), two server processes by default (``--procs 1``: one). ``--tablet``: the
storyteller's tablet open on each scene, as on a real night (each change pushes the board too). Per
set-up it prints the challenge bench's line, and the server CPU per tap split into the event loop's
thread (ASGI, HTTP parsing, websockets, the hub, the channel layer, the asynchronous middleware)
and the rest (the worker threads: synchronous middleware and views).

``--profile DIR``: each server runs under ``bench/serve_profiled.py`` (cProfile in every
thread) and leaves ``DIR/<server>.prof`` when it stops, and its event loop's thread during the
play alone in the last ``DIR/<server>.prof.loop.N``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import challenge_bench  # noqa: E402
from bench.challenge_bench import report, scenario  # noqa: E402
from bench.fanout import server_env  # noqa: E402
from bench.procs import PY, Pool, Server, free_port  # noqa: E402

# Its database and Redis prefix: the environment's, with this appended (bench/asgi_cost.py's too).
SUFFIX = "_tapserver"
SECRET = "bench-tap-server-" + "x" * 50


class LoopServer(Server):
    """A server whose every CPU reading also notes its event loop thread's."""

    marks: list[tuple[float, float]]
    profiled = False  # under bench/serve_profiled.py: each reading marks a profile window

    @property
    def cpu(self) -> float:
        total = super().cpu
        if self.profiled and self.proc:
            os.kill(self.proc.pid, signal.SIGUSR1)
        self.marks.append((total, main_thread_cpu(self.proc.pid) if self.proc else 0.0))
        return total


def main_thread_cpu(pid: int) -> float:
    """CPU seconds of a process's main thread (its event loop) so far."""
    try:
        stat = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def database(url: str) -> str:
    """The bench's database beside ``url``'s, made empty."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/") + SUFFIX
    host = parts.hostname or "127.0.0.1"
    user = parts.username or "postgres"
    subprocess.run(["dropdb", "-h", host, "-U", user, "--if-exists", name], check=True)
    subprocess.run(["createdb", "-h", host, "-U", user, name], check=True)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


def flush_redis(redis_url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)


async def run(args: argparse.Namespace) -> None:
    url = database(os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/bench")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    prefix = os.environ.get("CHANNELS_PREFIX", "bench") + SUFFIX
    flush_redis(redis_url, prefix)
    env = server_env({"DATABASE_URL": url}, redis_url, prefix, SECRET)
    logs = ROOT / "var" / "tap_server_logs"
    logs.mkdir(parents=True, exist_ok=True)
    out = logs / "setup.json"
    argv = [PY, str(ROOT / "bench" / "challenge_setup.py"), str(out)]
    pairs = ",".join(map(str, args.pairs))
    argv += ["--layouts", ",".join(args.layouts)]
    argv += ["--pairs", "", "--tablet-pairs", pairs] if args.tablet else ["--pairs", pairs]
    subprocess.run(argv, cwd=ROOT, env=env, check=True)
    setups = json.loads(out.read_text(encoding="utf-8"))["setups"]
    serve = [PY, "manage.py", "serve"]
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    pool = await Pool.start(2, True, logs)
    rows = []
    try:
        for setup in setups:
            servers = []
            for i in range(args.procs):
                port = free_port()
                name = f"{setup['label']}-{i}"
                options = ["--host", "127.0.0.1", "--port", str(port), "--no-demo-logins"]
                argv = [*serve, *options]
                if args.profile:
                    out = str(Path(args.profile) / f"{name}.prof")
                    script = os.environ.get("SERVE_SCRIPT", "serve_profiled.py")
                    argv = [PY, str(ROOT / "bench" / script), "--out", out, *options]
                server = LoopServer(name, argv, env, port, logs)
                server.marks = []
                server.profiled = bool(args.profile)
                servers.append(server)
            await asyncio.gather(*(s.start() for s in servers))
            try:
                result = await scenario(setup, pool, servers, args.seconds, "redis")
                # scenario() reads the CPU last just before the play and just after it
                loop_cpu = sum(s.marks[-1][1] - s.marks[-2][1] for s in servers)
            finally:
                await asyncio.gather(*(s.stop() for s in servers))
            row = result.row()
            row["loop_ms_per_tap"] = (
                round(1000 * loop_cpu / result.taps, 1) if result.taps else None
            )
            rows.append(row)
            print(report(result), flush=True)
            print(f"      event loop thread: {row['loop_ms_per_tap']} ms a tap")
    finally:
        await pool.stop()
        flush_redis(redis_url, prefix)
    print(json.dumps(rows), flush=True)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="1,4", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--layouts", default="separate", type=lambda s: s.split(","))
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--tablet", action="store_true", help="a tablet open on each scene")
    parser.add_argument("--profile", default="")
    return parser.parse_args(argv)


if __name__ == "__main__":
    challenge_bench.FRAME_TIMEOUT = 10.0
    asyncio.run(run(parse(sys.argv[1:])))
