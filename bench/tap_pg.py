"""PostgreSQL's share of a tap through the real servers: its backends' CPU and the statements.

``python bench/tap_pg.py [--pairs 16] [--layouts separate] [--seconds 10] [--log]``

``bench/tap_server.py`` (same options, same database and Redis set-up), and besides the
server's CPU a tap, per set-up: the CPU of the PostgreSQL backends serving the bench's
database (user + system time of each ``postgres: ... <database>`` process from /proc, summed
over the play and divided by the taps). ``--log``: the database logs every statement
(``log_statement = all`` for it alone, in the server's log), and the statements of the play
are counted per tap by kind. Logging costs the backends CPU: read the CPU from a run without
``--log``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import tap_server  # noqa: E402
from bench.procs import TICKS  # noqa: E402

LOG = Path("/var/log/postgresql/postgresql-15-main.log")

#: (kind, pattern on the statement's text), first match wins.
KINDS = [
    ("check/reset (empty, SELECT 1, ROLLBACK, DISCARD)", r"^(|SELECT 1|ROLLBACK|DISCARD ALL)$"),
    ("transaction (BEGIN, COMMIT, SAVEPOINT)", r"^(BEGIN|COMMIT|SAVEPOINT|RELEASE|ROLLBACK TO)"),
    ("SET", r"^SET "),
    ("session read", r"FROM \"django_session\""),
    ("session write", r"\"django_session\""),
    ("user read", r"FROM \"auth_user\""),
    ("idempotency key", r"idempotency"),
    ("lock (FOR UPDATE)", r"FOR (NO KEY )?UPDATE"),
    ("log write", r"^INSERT INTO \"combat_\w*log"),
    ("insert", r"^INSERT "),
    ("update", r"^UPDATE "),
    ("delete", r"^DELETE "),
    ("select", r"^SELECT "),
    ("other", r""),
]
_LINE = re.compile(r"^\S+ \S+ UTC \[(\d+)\] \S+@(\S+) LOG:  (?:statement|execute [^:]*): (.*)$")


class Watch:
    """The bench database's backends and log, read at the marks the play is bracketed by."""

    def __init__(self) -> None:
        self.name = ""
        self.cpu: list[float] = []
        self.offsets: list[int] = []

    def mark(self) -> None:
        self.cpu.append(backends_cpu(self.name))
        self.offsets.append(LOG.stat().st_size if LOG.exists() else 0)

    def statements(self) -> list[str]:
        """The statements the bench database ran between the last two marks, one a line."""
        start, end = self.offsets[-2], self.offsets[-1]
        with LOG.open("rb") as f:
            f.seek(start)
            text = f.read(end - start).decode("utf-8", "replace")
        found: list[str] = []
        current: list[str] | None = None
        for line in text.splitlines():
            if line.startswith("\t") and current is not None:
                current.append(line.strip())
                continue
            if current is not None:
                found.append(" ".join(current).strip())
                current = None
            match = _LINE.match(line)
            if match and match.group(2) == self.name:
                current = [match.group(3)]
        if current is not None:
            found.append(" ".join(current).strip())
        return found


def backends_cpu(database: str) -> float:
    """CPU seconds so far of the PostgreSQL backends connected to ``database``."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            if not cmdline.startswith("postgres: ") or f" {database} " not in cmdline:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def kind(statement: str) -> str:
    for name, pattern in KINDS:
        if re.search(pattern, statement):
            return name
    return "other"


def main() -> None:
    log = "--log" in sys.argv
    argv = [a for a in sys.argv[1:] if a != "--log"]
    watch = Watch()
    database, cpu, report = tap_server.database, tap_server.LoopServer.cpu, tap_server.report

    def made(url: str) -> str:
        made_url = database(url)
        watch.name = urlsplit(made_url).path.lstrip("/")
        if log:
            sql = f"ALTER DATABASE {watch.name} SET log_statement = 'all'"
            subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", sql], check=True)
        return made_url

    def marked(self: tap_server.LoopServer) -> float:
        if self.name.endswith("-0"):
            watch.mark()
        return cpu.fget(self)  # type: ignore[attr-defined]

    def reported(result):  # type: ignore[no-untyped-def]
        line = report(result)
        if result.taps and len(watch.cpu) >= 2:
            pg = 1000 * (watch.cpu[-1] - watch.cpu[-2]) / result.taps
            line += f"\n      PostgreSQL backends: {pg:.1f} ms a tap"
            if log:
                counts = Counter(kind(s) for s in watch.statements())
                total = sum(counts.values())
                line += f"\n      statements: {total / result.taps:.1f} a tap"
                for name, n in counts.most_common():
                    line += f"\n        {n / result.taps:5.2f}  {name}"
                dump = ROOT / "var" / "tap_pg_statements.txt"
                dump.write_text("\n".join(watch.statements()), encoding="utf-8")
        return line

    tap_server.database = made
    tap_server.LoopServer.cpu = property(marked)  # type: ignore[method-assign,assignment]
    tap_server.report = reported
    tap_server.challenge_bench.FRAME_TIMEOUT = 10.0
    import asyncio

    asyncio.run(tap_server.run(tap_server.parse(argv)))


if __name__ == "__main__":
    main()
