"""A client process holding many simulated phones: websocket clients that note what they got.

Started by ``bench/fanout.py`` (several at once, so the client side has more than one core's
worth of Python). It reads one JSON command a line on stdin and answers one JSON line on
stdout, with the command's ``id``:

- ``connect`` ``targets=[{"url", "cookie", "origin"}]``: open these sockets (25 at a time);
- ``wait`` ``seq, timeout``: until every phone of this process has seen ``data-seq`` ``seq``
  (or the timeout): how many got it and when the last one did (``perf_counter_ns``, one
  clock for every process of the machine);
- ``initial`` ``timeout``: wait for every phone's first message (the app sends the state);
- ``tally`` ``seqs``: for each, how many phones have it by now and when (first, last);
- ``frame`` ``label, above, timeout``: the challenge bench's phones carry a ``label`` and
  note the arrival (and ``data-seq``) of each private part (``#scene-private``, or its
  ``#prompts`` piece) they get:
  when the first one with a ``data-seq`` above ``above`` came (waiting for it if need be);
- ``usage``: CPU seconds this process used; ``close``: close every socket; ``quit``.

A phone reads ``data-seq`` of each message (the first one in it) and counts a sequence number
once: a seq it never saw is a dropped fragment. Phones do not reconnect (a real one would).
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

SEQ = re.compile(r'data-seq="(\d+)"')
# A player's own part: whole (``#scene-private``: on connect, a join, a sheet push) or, for a
# scene change, its prompts piece (``#prompts``, combat.fragments).
PRIVATE = re.compile(r'id="(?:scene-private|prompts)"[^>]*?data-seq="(\d+)"')
CONNECT_AT_ONCE = 25  # phones arrive a few at a time, as at a venue


@dataclass
class Phone:
    ws: ClientConnection
    last: int = -1
    messages: int = 0
    closed: str = ""
    retired: bool = False
    label: str = ""
    private: list[tuple[int, int]] = field(default_factory=list)  # (arrival ns, data-seq)


class Seen:
    """Per sequence number: how many phones got it, the latest and earliest arrival."""

    __slots__ = ("count", "first_ns", "last_ns", "size")

    def __init__(self, now: int, size: int) -> None:
        self.count = 0
        self.first_ns = now
        self.last_ns = now
        self.size = size


class Phones:
    def __init__(self, compression: str | None) -> None:
        self.compression = compression
        self.phones: list[Phone] = []
        self.labelled: dict[str, Phone] = {}
        self.seen: dict[int, Seen] = {}
        self.closed = 0
        self.changed = asyncio.Event()

    def record(self, phone: Phone, text: str | bytes) -> None:
        now = time.perf_counter_ns()
        phone.messages += 1
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if phone.label:
            private = PRIVATE.search(text)
            if private is not None:
                phone.private.append((now, int(private.group(1))))
                self.changed.set()
        match = SEQ.search(text)
        if match is None:
            return
        seq = int(match.group(1))
        if seq <= phone.last:
            return
        phone.last = seq
        seen = self.seen.get(seq)
        if seen is None:
            seen = self.seen[seq] = Seen(now, len(text))
        seen.count += 1
        seen.last_ns = now
        self.changed.set()

    async def read(self, phone: Phone) -> None:
        try:
            async for message in phone.ws:
                self.record(phone, message)
        except ConnectionClosed as closed:
            phone.closed = f"closed {closed.rcvd.code if closed.rcvd else 'abnormally'}"
        else:
            rcvd = phone.ws.close_code
            phone.closed = f"closed {rcvd}"
        if not phone.retired:
            self.closed += 1
            self.changed.set()

    async def open_one(self, target: dict[str, str]) -> str | None:
        headers = {"Cookie": target["cookie"]} if target.get("cookie") else {}
        try:
            ws = await connect(
                target["url"],
                origin=target.get("origin"),
                additional_headers=headers,
                compression=self.compression,
                open_timeout=60,
                ping_interval=None,
                max_size=2**24,
                close_timeout=2,
            )
        except Exception as error:
            return f"{type(error).__name__}: {error}"[:200]
        phone = Phone(ws, label=target.get("label", ""))
        self.phones.append(phone)
        if phone.label:
            self.labelled[phone.label] = phone
        asyncio.get_running_loop().create_task(self.read(phone))
        return None

    async def connect(self, targets: list[dict[str, str]]) -> dict[str, Any]:
        gate = asyncio.Semaphore(CONNECT_AT_ONCE)

        async def one(target: dict[str, str]) -> str | None:
            async with gate:
                return await self.open_one(target)

        errors = [e for e in await asyncio.gather(*(one(t) for t in targets)) if e]
        return {
            "connected": len(targets) - len(errors),
            "errors": errors[:5],
            "failed": len(errors),
        }

    async def until(self, done, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                return

    async def initial(self, timeout: float) -> dict[str, Any]:
        await self.until(lambda: all(p.messages or p.closed for p in self.phones), timeout)
        seqs = [p.last for p in self.phones if p.last >= 0]
        closed = [p.closed for p in self.phones if p.closed]
        return {
            "phones": len(self.phones),
            "with_state": sum(1 for p in self.phones if p.messages),
            "min_seq": min(seqs, default=None),
            "max_seq": max(seqs, default=None),
            "closed": len(closed),
            "close_reasons": sorted(set(closed))[:5],
        }

    async def wait(self, seq: int, timeout: float) -> dict[str, Any]:
        total = len(self.phones)

        def done() -> bool:  # a closed phone will not get it: do not wait for it
            seen = self.seen.get(seq)
            alive = total - self.closed
            return seen is not None and seen.count >= alive

        await self.until(done, timeout)
        seen = self.seen.get(seq)
        return {
            "seq": seq,
            "phones": total,
            "got": seen.count if seen else 0,
            "first_ns": seen.first_ns if seen else None,
            "last_ns": seen.last_ns if seen else None,
            "size": seen.size if seen else None,
            "closed": sum(1 for p in self.phones if p.closed),
        }

    async def frame(self, label: str, above: int, timeout: float) -> dict[str, Any]:
        """The first private part the labelled phone got with a ``data-seq`` above ``above``."""
        phone = self.labelled[label]

        def found() -> tuple[int, int] | None:
            return next(((ns, seq) for ns, seq in phone.private if seq > above), None)

        await self.until(lambda: found() is not None or bool(phone.closed), timeout)
        hit = found()
        return {"ns": hit[0] if hit else None, "seq": hit[1] if hit else None}

    def tally(self, seqs: list[int]) -> dict[str, Any]:
        """For each seq: how many phones have it by now, first and last arrival, size."""
        out = {}
        for seq in seqs:
            seen = self.seen.get(seq)
            if seen is not None:
                out[str(seq)] = [seen.count, seen.first_ns, seen.last_ns, seen.size]
        return {"phones": len(self.phones), "closed": self.closed, "seqs": out}

    async def close(self) -> dict[str, Any]:
        phones, self.phones = self.phones, []
        self.labelled = {}
        self.closed = 0
        for phone in phones:
            phone.retired = True
        gate = asyncio.Semaphore(CONNECT_AT_ONCE)

        async def one(phone: Phone) -> None:
            async with gate:
                await phone.ws.close()

        await asyncio.gather(*(one(p) for p in phones), return_exceptions=True)
        self.seen.clear()
        return {"closed": len(phones)}


def usage() -> dict[str, float]:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": ru.ru_utime + ru.ru_stime}


async def main() -> None:
    compression = None if "--no-compression" in sys.argv else "deflate"
    phones = Phones(compression)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout
    tasks: set[asyncio.Task] = set()

    async def answer(command: dict[str, Any]) -> None:
        name = command["cmd"]
        if name == "connect":
            result = await phones.connect(command["targets"])
        elif name == "initial":
            result = await phones.initial(command["timeout"])
        elif name == "wait":
            result = await phones.wait(command["seq"], command["timeout"])
        elif name == "frame":
            result = await phones.frame(command["label"], command["above"], command["timeout"])
        elif name == "tally":
            result = phones.tally(command["seqs"])
        elif name == "usage":
            result = usage()
        elif name == "close":
            result = await phones.close()
        else:
            result = {"error": f"unknown command {name}"}
        out.write(json.dumps({"id": command["id"], **result}) + "\n")
        out.flush()

    while True:
        line = await reader.readline()
        if not line:
            break
        command = json.loads(line)
        if command["cmd"] == "quit":
            break
        task = loop.create_task(answer(command))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await phones.close()


if __name__ == "__main__":
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop comes with uvicorn[standard]
        asyncio.run(main())
    else:
        uvloop.run(main())
