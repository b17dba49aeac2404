"""Serve pages, static files and websockets from one ASGI process (uvicorn).

Binds 0.0.0.0 so phones on the venue's wifi reach it, and prints the addresses to type in.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from config.network import lan_addresses


class Command(BaseCommand):
    help = "Serve the app (pages, static files, websockets) on all interfaces for the venue."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="0.0.0.0", help="address to bind (default 0.0.0.0)")
        parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")

    def handle(self, *args: Any, host: str, port: int, **options: Any) -> None:
        self.stdout.write(self.style.SUCCESS("Storyteller is up. Open one of these:"))
        self.stdout.write(f"  on this machine:  http://localhost:{port}/")
        if host in {"0.0.0.0", "::"}:
            for address in lan_addresses():
                self.stdout.write(f"  on the venue LAN: http://{address}:{port}/")
        self._print_demo_logins()
        uvicorn.run(
            "config.asgi:application",
            host=host,
            port=port,
            lifespan="off",
            ws="websockets-sansio",
            log_level="info" if settings.DEBUG else "warning",
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
