"""One channel layer instance per event loop, for a test process that runs several loops.

channels-redis keeps its receive state per layer instance: a receive lock and buffers, and
the process's channel prefix, whose Redis list every ``receive()`` pops. One instance
receiving on two event loops at once raises "Two event loops are trying to receive() on one
channel layer at once!" (and could hand one loop's messages to the other). A server process
runs one loop, so production never meets this. The test process runs two: the browser tests'
uvicorn server in a thread, kept for the whole session, and pytest-asyncio's loop of each
websocket test. ``channels.layers.channel_layers`` caches one instance for the process, so
both used it, and a websocket test that ran while the server still had a socket open (right
after the browser tests, their sockets still closing) failed.

Here each running loop gets its own instance; callers outside any loop (``async_to_sync`` in
sync code, which only sends) share one. The in-memory layer delivers only inside one
instance and keeps no per-loop state, so it stays shared.
"""

from __future__ import annotations

import asyncio
from typing import Any
from weakref import WeakKeyDictionary

from channels.layers import ChannelLayerManager, InMemoryChannelLayer


class PerLoopChannelLayers(ChannelLayerManager):
    def __init__(self) -> None:
        super().__init__()
        self._per_loop: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
            WeakKeyDictionary()
        )

    def _reset_backends(self, setting: str, **kwargs: Any) -> None:
        super()._reset_backends(setting, **kwargs)
        if setting == "CHANNEL_LAYERS":
            self._per_loop = WeakKeyDictionary()

    def __getitem__(self, key: str) -> Any:
        shared = super().__getitem__(key)
        if isinstance(shared, InMemoryChannelLayer):
            return shared
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return shared
        layers = self._per_loop.setdefault(loop, {})
        if key not in layers:
            layers[key] = self.make_backend(key)
        return layers[key]
