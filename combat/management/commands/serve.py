"""Serve pages, static files and websockets from one ASGI process (uvicorn).

Binds 0.0.0.0 so phones on the venue's wifi reach it, and prints the addresses to type in (and
a QR code of the first). Logs go through Django's LOGGING (time and level), uvicorn's access
log included.
"""

from __future__ import annotations

import io
import logging
import sys
from importlib import import_module
from typing import Any

import segno
import uvicorn
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from combat.hub import HEAP
from combat.websocket_protocol import SceneWebSocketProtocol
from config.dbcheck import database_problem
from config.network import lan_addresses


class Command(BaseCommand):
    help = "Serve the app (pages, static files, websockets) on all interfaces for the venue."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="0.0.0.0", help="address to bind (default 0.0.0.0)")
        parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
        parser.add_argument("--no-access-log", action="store_true", help="do not log every request")
        parser.add_argument(
            "--no-demo-logins", action="store_true", help="never print the demo's logins"
        )

    def handle(self, *args: Any, host: str, port: int, **options: Any) -> None:
        problem = database_problem()
        if problem:
            raise CommandError(problem)
        if settings.LIVE_SWITCH_INTERVAL <= 0:
            raise CommandError(
                "LIVE_SWITCH_INTERVAL_US must be a whole number of microseconds, 1 or more"
            )
        self.stdout.write(self.style.SUCCESS("Storyteller is up. Open one of these:"))
        self.stdout.write(f"  on this machine:  http://localhost:{port}/")
        lan = lan_addresses() if host in {"0.0.0.0", "::"} else []
        for address in lan:
            self.stdout.write(f"  on the venue LAN: http://{address}:{port}/")
        if lan:
            self.stdout.write(
                f"Phones on the venue's wifi can scan this for http://{lan[0]}:{port}/"
            )
            qr = io.StringIO()
            segno.make(f"http://{lan[0]}:{port}/", error="m").terminal(out=qr, compact=True)
            self.stdout.write(qr.getvalue(), ending="")
        if not options["no_demo_logins"]:
            self._print_demo_logins()
        self.stdout.flush()
        # The app loaded (what uvicorn would import first): the heap alive now lives as long
        # as the process, and the collector stops walking it (combat.hub.Heap).
        import_module("config.asgi")
        HEAP.start()
        sys.setswitchinterval(settings.LIVE_SWITCH_INTERVAL)  # the step's lock, not the GIL
        uvicorn.run(
            "config.asgi:application",
            host=host,
            port=port,
            lifespan="off",
            ws=SceneWebSocketProtocol,
            log_config=None,  # Django's LOGGING: every line with its time and level
            log_level=logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower(),
            access_log=not options["no_access_log"],
            proxy_headers=True,
        )

    def _print_demo_logins(self) -> None:
        from characters.demo import DEMO_LOGINS

        usernames = set(
            get_user_model()
            .objects.filter(username__in=[u for u, _p, _r in DEMO_LOGINS])
            .values_list("username", flat=True)
        )
        shown = [row for row in DEMO_LOGINS if row[0] in usernames]
        if not shown:
            return
        self.stdout.write("Demo logins (user / password):")
        for username, password, role in shown:
            self.stdout.write(f"  {role:<30} {username} / {password}")
