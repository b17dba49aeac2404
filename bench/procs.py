"""Processes of the fan-out benchmark: servers it starts and the phone processes it drives."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Server:
    """A server process on 127.0.0.1:port, in its own process group, logging to a file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], port: int, logs: Path):
        self.name, self.argv, self.env, self.port = name, argv, env, port
        self.log_path = logs / f"{name}.log"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, timeout: float = 60.0) -> None:
        log = self.log_path.open("ab")
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            cwd=ROOT,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                raise RuntimeError(
                    f"{self.name} exited ({self.proc.returncode}): see {self.log_path}"
                )
            try:
                _r, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.close()
            return
        raise RuntimeError(f"{self.name} did not listen on port {self.port} within {timeout:.0f} s")

    @property
    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc else 0.0

    @property
    def rss(self) -> float:
        return rss_mb(self.proc.pid) if self.proc else 0.0

    async def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.returncode is not None:
            return
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                await asyncio.wait_for(proc.wait(), wait)
                return
            except TimeoutError:
                continue


async def settle(servers: list[Server], quiet: float = 0.15, limit: float = 30.0) -> float:
    """Wait until the servers are idle (< ``quiet`` of a core over half a second)."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        before = [s.cpu for s in servers]
        await asyncio.sleep(0.5)
        busy = max((s.cpu - b) / 0.5 for s, b in zip(servers, before, strict=True))
        if busy < quiet:
            break
    return time.monotonic() - started


class Worker:
    """One ``bench/phones.py`` process: JSON commands in, JSON answers out."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ids = count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, compression: bool, logs: Path, index: int) -> Worker:
        argv = [PY, str(ROOT / "bench" / "phones.py")]
        if not compression:
            argv.append("--no-compression")
        with (logs / f"phones-{index}.log").open("ab") as log:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=ROOT,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                limit=2**24,
            )
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            answer = json.loads(line)
            future = self.pending.pop(answer.pop("id"), None)
            if future is not None and not future.done():
                future.set_result(answer)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(RuntimeError("a phones process exited"))

    async def call(self, cmd: str, **args: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        ident = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        self.proc.stdin.write((json.dumps({"id": ident, "cmd": cmd, **args}) + "\n").encode())
        await self.proc.stdin.drain()
        return await future

    @property
    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    async def stop(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(Exception):
                assert self.proc.stdin is not None
                self.proc.stdin.write(b'{"id": 0, "cmd": "quit"}\n')
                await self.proc.stdin.drain()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                await self.proc.wait()
        self.reader.cancel()


class Pool:
    """The phones, spread over a few client processes (phone i lives in process i mod k)."""

    def __init__(self, workers: list[Worker]) -> None:
        self.workers = workers
        self.size = 0
        self.where: dict[str, Worker] = {}  # a labelled phone's process

    @classmethod
    async def start(cls, processes: int, compression: bool, logs: Path) -> Pool:
        return cls([await Worker.start(compression, logs, i) for i in range(processes)])

    async def add(self, targets: list[dict[str, str]]) -> dict[str, Any]:
        chunks: list[list[dict[str, str]]] = [[] for _ in self.workers]
        for offset, target in enumerate(targets):
            index = (self.size + offset) % len(self.workers)
            chunks[index].append(target)
            if target.get("label"):
                self.where[target["label"]] = self.workers[index]
        answers = await asyncio.gather(
            *(w.call("connect", targets=c) for w, c in zip(self.workers, chunks, strict=True))
        )
        self.size += len(targets)
        errors = [e for a in answers for e in a["errors"]]
        return {"failed": sum(a["failed"] for a in answers), "errors": errors[:3]}

    async def initial(self, timeout: float) -> dict[str, Any]:
        answers = await asyncio.gather(*(w.call("initial", timeout=timeout) for w in self.workers))
        seqs = [a[k] for a in answers for k in ("min_seq", "max_seq") if a[k] is not None]
        return {
            "phones": sum(a["phones"] for a in answers),
            "with_state": sum(a["with_state"] for a in answers),
            "closed": sum(a["closed"] for a in answers),
            "close_reasons": sorted({r for a in answers for r in a["close_reasons"]}),
            "min_seq": min(seqs, default=None),
            "max_seq": max(seqs, default=None),
        }

    async def wait(self, seq: int, timeout: float) -> dict[str, Any]:
        answers = await asyncio.gather(
            *(w.call("wait", seq=seq, timeout=timeout) for w in self.workers)
        )
        lasts = [a["last_ns"] for a in answers if a["last_ns"] is not None]
        firsts = [a["first_ns"] for a in answers if a["first_ns"] is not None]
        sizes = [a["size"] for a in answers if a["size"] is not None]
        return {
            "phones": sum(a["phones"] for a in answers),
            "got": sum(a["got"] for a in answers),
            "last_ns": max(lasts, default=None),
            "first_ns": min(firsts, default=None),
            "size": max(sizes, default=None),
            "closed": sum(a["closed"] for a in answers),
        }

    async def frame(self, label: str, above: int, timeout: float) -> int | None:
        """When the labelled phone got its first private part with ``data-seq`` > ``above``
        (``perf_counter_ns``), or None (timeout, or the phone was closed)."""
        answer = await self.where[label].call("frame", label=label, above=above, timeout=timeout)
        return answer["ns"]

    async def tally(self, seqs: list[int]) -> dict[str, Any]:
        """Per seq, over every phone process: phones that have it, first and last arrival."""
        answers = await asyncio.gather(*(w.call("tally", seqs=seqs) for w in self.workers))
        per_seq = {}
        for seq in seqs:
            rows = [a["seqs"][str(seq)] for a in answers if str(seq) in a["seqs"]]
            per_seq[seq] = {
                "got": sum(r[0] for r in rows),
                "first_ns": min((r[1] for r in rows), default=None),
                "last_ns": max((r[2] for r in rows), default=None),
                "size": max((r[3] for r in rows), default=None),
            }
        return {
            "phones": sum(a["phones"] for a in answers),
            "closed": sum(a["closed"] for a in answers),
            "seqs": per_seq,
        }

    @property
    def cpu(self) -> float:
        return sum(w.cpu for w in self.workers)

    async def close(self) -> None:
        await asyncio.gather(*(w.call("close") for w in self.workers))
        self.size = 0
        self.where = {}

    async def stop(self) -> None:
        await asyncio.gather(*(w.stop() for w in self.workers), return_exceptions=True)
