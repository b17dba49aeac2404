"""Where a play's CPU went on this machine: its cores' busy time, PostgreSQL's and Redis's.

The challenge bench measures the servers' CPU per tap from their processes. A tap also costs
PostgreSQL's backends and Redis, and on one machine the bench's own phones take their share:
what a set-up could carry at most is bounded by the machine's whole busy time per tap, not the
servers' alone. :func:`sample` reads, from ``/proc`` (Linux), the cores' busy and idle ticks and
the CPU of every process named ``postgres`` or ``redis-server``; two samples give a
:class:`Usage`. Elsewhere (no ``/proc/stat``) it reads nothing and the figures stay empty.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bench.procs import TICKS, cpu_seconds

GROUPS = {"postgres": "postgres", "redis-server": "redis"}  # a process's name -> its group


@dataclass(frozen=True)
class Sample:
    busy: int  # ticks of all cores so far: not idle, not waiting on the disk
    total: int  # ticks of all cores so far, less those the hypervisor gave another machine
    groups: dict[tuple[str, int], float]  # (group, pid) -> CPU seconds so far


@dataclass(frozen=True)
class Usage:
    """Between two samples: the cores' busy seconds and their share, each group's seconds."""

    cores: int
    busy_s: float
    busy_pct: float  # of all cores: 100 is every core busy all the time
    postgres_s: float
    redis_s: float
    postgres_seen: bool
    redis_seen: bool


def sample() -> Sample | None:
    """This machine's CPU so far, or None where ``/proc`` does not say."""
    try:
        busy, total = cores_ticks(Path("/proc/stat").read_text().splitlines()[0])
    except OSError:
        return None
    groups: dict[tuple[str, int], float] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            group = GROUPS.get(Path(entry.path, "comm").read_text().strip())
        except OSError:
            continue
        if group is not None:
            groups[(group, int(entry.name))] = cpu_seconds(int(entry.name))
    return Sample(busy=busy, total=total, groups=groups)


def cores_ticks(line: str) -> tuple[int, int]:
    """``/proc/stat``'s ``cpu`` line as (busy, total) ticks. Stolen ticks (a virtual machine's
    core running another guest) were neither this machine's work nor capacity it had: left
    out of both; guests' ticks are in ``user`` already."""
    user, nice, system, idle, iowait, irq, softirq, _steal = (int(x) for x in line.split()[1:9])
    total = user + nice + system + idle + iowait + irq + softirq
    return total - idle - iowait, total


def usage(before: Sample | None, after: Sample | None) -> Usage | None:
    """What the machine did between two samples (a process that ended meanwhile is not
    counted; one that began is counted from its start)."""
    if before is None or after is None or after.total <= before.total:
        return None
    cores = os.cpu_count() or 1
    available_s = (after.total - before.total) / TICKS  # core-seconds the cores had
    busy_s = (after.busy - before.busy) / TICKS

    def spent(group: str) -> tuple[float, bool]:
        keys = [k for k in after.groups if k[0] == group]
        return sum(after.groups[k] - before.groups.get(k, 0.0) for k in keys), bool(keys)

    pg, pg_seen = spent("postgres")
    redis, redis_seen = spent("redis")
    return Usage(
        cores=cores,
        busy_s=busy_s,
        busy_pct=round(100 * busy_s / available_s, 1),
        postgres_s=pg,
        redis_s=redis,
        postgres_seen=pg_seen,
        redis_seen=redis_seen,
    )
