"""``manage.py serve`` with thread-CPU counters around a request's parts: ``--out FILE`` then
serve's own args (``bench/tap_server.py --profile DIR`` with ``SERVE_SCRIPT=serve_timed.py``).

Where a tap's CPU goes outside the view, without a profiler's weight: each ``SIGUSR1`` (the
tap server sends one at each CPU reading) appends to ``FILE`` one JSON line of totals so far,
in CPU seconds: ``respond`` (a request's synchronous part in its worker thread: the request's
signals, the synchronous middleware, the view), ``get_response`` (the view with its
``process_view`` hooks and the CSRF check: Django's ``_get_response``), ``publish`` (the
pushes written to Redis, ``group_send_blocking``, inside the view's commit; ``npub`` of them),
``main`` (the event loop's thread), ``proc`` (the process) and ``gc`` (the garbage
collector's passes, in whichever thread ran them; ``gc0``..``gc2`` of each generation; by
wall time each one's longest pass since the line before, ``gcN_max_ms`` (``gcN_max_cpu_ms``
by CPU), and its passes of 10 ms or more, ``gcN_10ms``).
The last two lines bound the play: their difference over the taps is the split.
``SERVE_GC_THRESHOLDS=a,b,c`` serves with other collector thresholds than the hub's.
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
GC: dict[str, Any] = {"gc": 0.0, "gc0": 0, "gc1": 0, "gc2": 0}
# Each generation's passes by wall time (a push waits the pass out): the longest, in ms, and
# how many took 10 ms or more.
GC.update({f"gc{g}_max_ms": 0.0 for g in range(3)} | {f"gc{g}_10ms": 0 for g in range(3)})
GC.update({f"gc{g}_max_cpu_ms": 0.0 for g in range(3)})  # the same by CPU: less noisy
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
        # Not under ``lock``: the handler runs in the main thread between two bytecodes,
        # maybe of a ``with lock`` of that thread (a pass of the collector), which it would
        # wait for forever. A dict's copy is whole under the GIL.
        line = dict(TOTALS, **GC, main=time.thread_time(), proc=time.process_time())
        for key in GC:  # the longest passes since the last line, the play's alone in the last
            if "max" in key:
                GC[key] = 0.0
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    def collecting(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            _gc_began.at = time.thread_time()
            _gc_began.wall = time.perf_counter()
            return
        spent = time.thread_time() - getattr(_gc_began, "at", time.thread_time())
        wall = 1000 * (time.perf_counter() - getattr(_gc_began, "wall", time.perf_counter()))
        generation = info["generation"]
        with lock:
            GC["gc"] += spent
            GC[f"gc{generation}"] += 1
            GC[f"gc{generation}_max_ms"] = round(max(GC[f"gc{generation}_max_ms"], wall), 1)
            GC[f"gc{generation}_10ms"] += wall >= 10
            cpu = round(1000 * spent, 1)
            GC[f"gc{generation}_max_cpu_ms"] = max(GC[f"gc{generation}_max_cpu_ms"], cpu)

    import gc

    gc.callbacks.append(collecting)
    if os.environ.get("SERVE_GC_THRESHOLDS"):  # e.g. 20000,5,10: other thresholds to try
        from combat import hub

        hub.THRESHOLDS = tuple(int(n) for n in os.environ["SERVE_GC_THRESHOLDS"].split(","))
    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGTERM, stop)
    call_command("serve", *argv)


if __name__ == "__main__":
    main()
