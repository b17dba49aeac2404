"""The bench's reading of where a play's CPU went (bench/machine.py, bench/challenge_bench.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bench import machine
from bench.challenge_bench import Scenario

TICKS = machine.TICKS


def at(busy_s: float, wall_s: float, **groups: float) -> machine.Sample:
    cores = os.cpu_count() or 1
    return machine.Sample(
        busy=round(busy_s * TICKS),
        total=round(wall_s * TICKS * cores),
        groups={(name, 1 + i): s for i, (name, s) in enumerate(groups.items())},
    )


def test_usage_is_the_cores_busy_share_and_each_groups_seconds():
    cores = os.cpu_count() or 1
    used = machine.usage(at(1.0, 5.0, postgres=2.0), at(1.0 + 0.5 * cores, 6.0, postgres=2.25))
    assert used is not None
    assert used.busy_pct == pytest.approx(50.0)
    assert used.busy_s == pytest.approx(0.5 * cores)
    assert used.postgres_s == pytest.approx(0.25)
    assert (used.postgres_seen, used.redis_seen) == (True, False)


def test_no_usage_without_two_samples_in_order():
    assert machine.usage(None, at(1, 1)) is None
    assert machine.usage(at(1, 2), at(1, 2)) is None


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads Linux's /proc")
def test_a_sample_of_this_machine_counts_its_own_busy_time():
    before = machine.sample()
    started = time.process_time()
    while time.process_time() - started < 0.2:  # 20 clock ticks of this process's CPU at least
        sum(i * i for i in range(10_000))
    used = machine.usage(before, machine.sample())
    assert used is not None and used.busy_s > 0 and 0 < used.busy_pct <= 100


@pytest.mark.parametrize(
    ("busy_pct", "pg_seen", "ceiling", "pg_ms"),
    [(50.0, True, 20.0, 2.0), (80.0, False, 12.5, None), (0.0, True, None, 2.0)],
)
def test_a_plays_row_gives_the_machines_cost_a_tap_and_its_ceiling(
    busy_pct, pg_seen, ceiling, pg_ms
):
    result = Scenario(16, "separate", 2, "redis", resolved=100, taps=500, seconds=10.0)
    result.machine = machine.Usage(2, 6.0, busy_pct, 1.0, 0.1, pg_seen, True)
    row = result.row()
    assert row["all_in_ms_per_tap"] == 12.0
    assert row["pg_ms_per_tap"] == pg_ms
    assert row["redis_ms_per_tap"] == 0.2
    assert row["ceiling_resolutions_per_s"] == ceiling


def test_a_play_without_the_machines_figures_says_nothing_of_them():
    row = Scenario(1, "shared", 1, "memory", resolved=1, taps=5, seconds=1.0).row()
    assert "all_in_ms_per_tap" not in row


def test_stolen_ticks_are_neither_work_nor_capacity():
    #       user nice system idle iowait irq softirq steal guest guest_nice
    line = "cpu  300 0 100 500 100 0 0 1000 50 0"
    assert machine.cores_ticks(line) == (400, 1000)
