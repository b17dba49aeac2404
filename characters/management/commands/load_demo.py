"""Load (or refresh) the demo chronicle and print its logins."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from characters.demo import DEMO_LOGINS, load_demo


class Command(BaseCommand):
    help = "Load the demo chronicle: a storyteller, players and characters of every ruleset."

    def handle(self, *args: Any, **options: Any) -> None:
        chronicle = load_demo()
        count = chronicle.characters.count()
        self.stdout.write(self.style.SUCCESS(f"Demo chronicle {chronicle}: {count} characters."))
        if options["verbosity"] < 1:
            return  # `make run` lets the server print the logins once
        self.stdout.write("Logins (user / password):")
        for username, password, role in DEMO_LOGINS:
            self.stdout.write(f"  {role:<22} {username} / {password}")
