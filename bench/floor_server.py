"""The floor: a bare ``websockets`` server that broadcasts one payload to every client.

``python bench/floor_server.py PORT PAYLOAD_FILE [--no-compression]``. Clients on ``/`` only
listen; a message on ``/trigger`` (a sequence number) broadcasts the payload with that
``data-seq`` to every listening client at once (``websockets.broadcast``). No framework, no
channel layer, no database: the least any server in Python could do for the same push.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from websockets.asyncio.server import ServerConnection, broadcast, serve

SEQ = re.compile(r'data-seq="\d+"')


async def main(port: int, payload: str, compression: str | None) -> None:
    listeners: set[ServerConnection] = set()

    async def handler(ws: ServerConnection) -> None:
        if ws.request is not None and ws.request.path == "/trigger":
            async for message in ws:
                broadcast(listeners, SEQ.sub(f'data-seq="{int(message)}"', payload))
            return
        listeners.add(ws)
        try:
            await ws.wait_closed()
        finally:
            listeners.discard(ws)

    async with serve(
        handler,
        "127.0.0.1",
        port,
        compression=compression,
        ping_interval=None,
        backlog=4096,
        max_queue=None,
    ):
        print("ready", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    text = Path(sys.argv[2]).read_text(encoding="utf-8")
    run = main(int(sys.argv[1]), text, None if "--no-compression" in sys.argv else "deflate")
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        asyncio.run(run)
    else:
        uvloop.run(run)
