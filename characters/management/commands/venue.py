"""Run the real night: migrate, make the first storyteller on first run, serve on the LAN.

``make venue`` runs it on the embedded default with its own SQLite file and key file under
``var/venue/`` (never the demo's), DEBUG off and no demo data.
"""

from __future__ import annotations

import getpass
import sys
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from characters import first_account
from config.dbcheck import database_problem


class Command(BaseCommand):
    help = (
        "Run a game night: migrate, make the first storyteller account on first run (asked for "
        "at the terminal, or a one-time link), and serve on the venue's LAN."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="0.0.0.0", help="address to bind (default 0.0.0.0)")
        parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
        parser.add_argument(
            "--no-input",
            action="store_true",
            help="never ask at the terminal: print a one-time link for the first storyteller",
        )

    def handle(self, *args: Any, host: str, port: int, no_input: bool, **options: Any) -> None:
        problem = database_problem()
        if problem:
            raise CommandError(problem)
        call_command("migrate", interactive=False, verbosity=0)
        if not first_account.storytellers_with_password():
            if not no_input and sys.stdin.isatty():
                user = first_account.ask_for_storyteller(input, getpass.getpass, self.stdout.write)
                self.stdout.write(self.style.SUCCESS(f"Storyteller {user.username} made."))
            else:
                self._print_link(host, port)
        call_command("serve", host=host, port=port, no_demo_logins=True)

    def _print_link(self, host: str, port: int) -> None:
        user = first_account.make_storyteller(first_account.DEFAULT_NAME, None)
        name = "localhost" if host in {"0.0.0.0", "::", "127.0.0.1"} else host
        link = f"http://{name}:{port}{first_account.set_password_path(user)}"
        self.stdout.write(
            self.style.WARNING(
                f"No storyteller can log in yet. Open this link once to set the password of "
                f"{user.username}:\n  {link}"
            )
        )
