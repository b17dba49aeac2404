"""``manage.py serve`` with thread-CPU counters around a request's parts: ``--out FILE`` then
serve's own args (``bench/tap_server.py --profile DIR`` with ``SERVE_SCRIPT=serve_timed.py``).

Where a tap's CPU goes outside the view, without a profiler's weight: each ``SIGUSR1`` (the
tap server sends one at each CPU reading) appends to ``FILE`` one JSON line of totals so far,
in CPU seconds: ``respond`` (a request's synchronous part in its worker thread: the request's
signals, the synchronous middleware, the view), ``get_response`` (the view with its
``process_view`` hooks and the CSRF check: Django's ``_get_response``), ``publish`` (the
pushes written to Redis, ``group_send_blocking``, inside the view's commit; ``npub`` of them),
``main`` (the event loop's thread), ``proc`` (the process) and ``gc`` (the garbage
collector's passes, in whichever thread ran them; ``gc0``..``gc2`` of each generation).
The last two lines bound the play: their difference over the taps is the split.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

TOTALS = {"respond": 0.0, "get_response": 0.0, "n": 0, "publish": 0.0, "npub": 0}
GC = {"gc": 0.0, "gc0": 0, "gc1": 0, "gc2": 0}
_gc_began = threading.local()
lock = threading.Lock()


def counted(owner: Any, name: str, total: str, count: str = "") -> None:
    """Count the thread CPU of every call of ``owner.name`` into ``TOTALS[total]``."""
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent = time.thread_time() - began
            with lock:
                TOTALS[total] += spent
                if count:
                    TOTALS[count] += 1

    setattr(owner, name, timed)


def main() -> None:
    out, argv = sys.argv[2], sys.argv[3:]
    import django

    django.setup()
    from django.core.handlers.base import BaseHandler
    from django.core.management import call_command

    from config.handler import ASGIHandler
    from config.layers import RedisChannelLayer

    counted(ASGIHandler, "_respond", "respond", "n")
    counted(BaseHandler, "_get_response", "get_response")
    counted(RedisChannelLayer, "group_send_blocking", "publish", "npub")

    def dump(signum: int, frame: object) -> None:
        with lock:
            line = dict(TOTALS, **GC, main=time.thread_time(), proc=time.process_time())
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    def collecting(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            _gc_began.at = time.thread_time()
            return
        spent = time.thread_time() - getattr(_gc_began, "at", time.thread_time())
        with lock:
            GC["gc"] += spent
            GC[f"gc{info['generation']}"] += 1

    import gc

    gc.callbacks.append(collecting)
    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGTERM, stop)
    call_command("serve", *argv)


if __name__ == "__main__":
    main()
