"""``manage.py serve`` under cProfile, every thread of it: ``--out FILE`` then serve's own args.

``python bench/serve_profiled.py --out var/serve.prof --host 127.0.0.1 --port 8001``

cProfile sees only the thread that enables it, and a request's synchronous part runs in a
worker thread of its own (asgiref's executor), so each thread started gets a profiler too;
when the server stops (SIGTERM: uvicorn shuts down and ``serve`` returns), every profile is
merged into one pstats file (``python -m pstats FILE``, or ``bench/tap_server.py``'s table),
and the event loop's thread alone goes to ``FILE.loop`` too. Each ``SIGUSR1`` writes the event
loop's profile since the previous one (or the start) to ``FILE.loop.N`` (N = 1, 2, ...) and
starts it afresh: ``bench/tap_server.py`` sends one at each CPU reading, so the last of them
is the play alone.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import pstats
import signal
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

done: list[cProfile.Profile] = []
running: list[cProfile.Profile] = []
lock = threading.Lock()
_run = threading.Thread.run


def _profiled_run(self: threading.Thread) -> None:
    profile = cProfile.Profile(time.thread_time)
    with lock:
        running.append(profile)
    profile.enable()
    try:
        _run(self)
    finally:
        profile.disable()
        with lock:
            running.remove(profile)
            done.append(profile)


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


def main() -> None:
    out = sys.argv[2]
    argv = sys.argv[3:]
    threading.Thread.run = _profiled_run
    import django

    django.setup()
    from django.core.management import call_command

    # uvicorn raises the SIGTERM it caught again once it has shut down: then the profiles
    # are written, rather than the process ended by the default handler.
    signal.signal(signal.SIGTERM, _stop)
    main_profile = cProfile.Profile(time.thread_time)
    windows = 0

    def _window(signum: int, frame: object) -> None:
        # A signal's handler runs in the main thread: the event loop's profiler is its own.
        nonlocal main_profile, windows
        main_profile.disable()
        windows += 1
        pstats.Stats(main_profile).dump_stats(f"{out}.loop.{windows}")
        main_profile = cProfile.Profile(time.thread_time)
        main_profile.enable()

    signal.signal(signal.SIGUSR1, _window)
    main_profile.enable()
    try:
        call_command("serve", *argv)
    finally:
        main_profile.disable()
        # The event loop's thread alone too (``FILE.loop``): its share of a tap by itself.
        pstats.Stats(main_profile).dump_stats(out + ".loop")
        stats = pstats.Stats(main_profile)
        with lock:
            for profile in done + running:
                with contextlib.suppress(Exception):  # a thread's profile still running
                    stats.add(profile)
        stats.dump_stats(out)


if __name__ == "__main__":
    main()
