"""Load (or refresh) the demo chronicles and print their scenes and logins."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from characters.demo import DEMO_LOGINS, load_demo


class Command(BaseCommand):
    help = (
        "Load the demo: a chronicle per ruleset with its cast, an open game night and a scene "
        "the cast has joined."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        from combat.models import Scene

        chronicles = load_demo()
        for chronicle in chronicles:
            scene = Scene.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()
            where = f" · scene {scene.name} (code {scene.join_code})" if scene else ""
            count = chronicle.characters.count()
            self.stdout.write(
                self.style.SUCCESS(
                    f"Demo chronicle {chronicle} (ruleset {chronicle.ruleset}): "
                    f"{count} characters{where}."
                )
            )
        if options["verbosity"] < 1:
            return  # `make run` lets the server print the logins once
        self.stdout.write("Logins (user / password):")
        for username, password, role in DEMO_LOGINS:
            self.stdout.write(f"  {role:<30} {username} / {password}")
