"""What a push costs its publisher and its readers: CPU per ``group_send`` on channels-redis
(from a worker thread through ``async_to_sync``, as ``combat.live`` publishes on commit), and
per message read by a hub (``receive``), in one process.

``python bench/publish_cost.py [--sends 500] [--members 2] [--profile var/publish.prof]``

Uses ``REDIS_URL`` and ``CHANNELS_PREFIX`` (+ ``_pubcost``); the layer is the one
``CHANNEL_LAYERS`` names, so a layer of the project's own is measured as it is configured.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HTML = '<div id="scene-players" hx-swap-oob="true" data-seq="7">' + "x" * 2000 + "</div>"


async def main(args: argparse.Namespace) -> None:
    from asgiref.sync import async_to_sync, sync_to_async
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    readers = [await layer.new_channel() for _ in range(args.members)]
    group = "scene.1.players"
    for channel in readers:
        await layer.group_add(group, channel)
    event = {"type": "live.fragment", "html": HTML, "group": group, "seq": 7}
    got = 0

    async def read(channel: str) -> None:
        nonlocal got
        while True:
            await layer.receive(channel)
            got += 1

    tasks = [asyncio.ensure_future(read(c)) for c in readers]

    def publish(n: int) -> None:
        send = async_to_sync(layer.group_send)
        for _ in range(n):
            send(group, event)

    await sync_to_async(publish, thread_sensitive=False)(20)  # warm-up
    while got < 20 * args.members:
        await asyncio.sleep(0.01)
    got = 0
    prof = cProfile.Profile() if args.profile else None
    cpu = time.process_time()
    if prof:
        prof.enable()
    await sync_to_async(publish, thread_sensitive=False)(args.sends)
    while got < args.sends * args.members:
        await asyncio.sleep(0.001)
    if prof:
        prof.disable()
        prof.dump_stats(args.profile)
    cpu = time.process_time() - cpu
    print(
        f"{type(layer).__name__}: {1000 * cpu / args.sends:.3f} ms CPU a group_send to "
        f"{args.members} readers, sent and read ({args.sends} sends)"
    )
    for task in tasks:
        task.cancel()
    for channel in readers:
        await layer.group_discard(group, channel)
    assert threading.active_count() >= 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=500)
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--profile", default="")
    args = parser.parse_args()
    os.environ["CHANNELS_PREFIX"] = os.environ.get("CHANNELS_PREFIX", "bench") + "_pubcost"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import uvloop

    uvloop.run(main(args))
