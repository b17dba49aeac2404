"""Import the JSON written by export_characters back into a chronicle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from characters.models import Chronicle
from characters.sheet_io import SheetError, sheets_write


class Command(BaseCommand):
    help = "Import characters from export_characters JSON (created or updated by name)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--chronicle", required=True, help="chronicle name")

    def handle(self, *args: Any, file: Path, chronicle: str, **options: Any) -> None:
        try:
            document = json.loads(file.read_text(encoding="utf-8"))
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise CommandError(
                f"{file}: not JSON at line {error.lineno}, column {error.colno}; "
                "nothing was imported"
            ) from None
        target, _ = Chronicle.objects.get_or_create(name=chronicle)
        try:
            report = sheets_write(chronicle=target, sheets=document)
        except (SheetError, KeyError, TypeError, ValueError) as error:
            raise CommandError(f"{file}: {error}; nothing was imported") from None
        self.stdout.write(str(report))
