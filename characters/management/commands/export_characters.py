"""Write a chronicle's characters as JSON (the shape import_characters reads)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from characters.models import Chronicle
from characters.sheet_export import chronicle_export


class Command(BaseCommand):
    help = "Export every character of a chronicle as JSON (to stdout, or --output FILE)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chronicle", required=True, help="chronicle name")
        parser.add_argument("--output", help="file to write instead of standard output")

    def handle(self, *args: Any, chronicle: str, output: str | None, **options: Any) -> None:
        found = Chronicle.objects.filter(name=chronicle).first()
        if found is None:
            raise CommandError(f"no chronicle named {chronicle!r}")
        text = json.dumps(chronicle_export(characters=found.characters.all()), indent=2)
        if output:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
        else:
            self.stdout.write(text)
