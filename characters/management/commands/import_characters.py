"""Import the JSON written by export_characters back into a chronicle."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from characters.management.importer import read_capped, storyteller_named
from characters.sheet_io import SheetError, sheets_import

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "Import characters from export_characters JSON (created or updated by name). Every "
        "value is checked first: a bad one imports nothing, and the command exits non-zero."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--chronicle", required=True, help="chronicle name")
        parser.add_argument(
            "--storyteller",
            help="who imports (a username): players are matched within the chronicles they "
            "run, and a chronicle the import makes is theirs; without it, players are matched "
            "within this chronicle alone",
        )

    def handle(
        self, *args: Any, file: Path, chronicle: str, storyteller: str | None, **options: Any
    ) -> None:
        importer = storyteller_named(storyteller, chronicle) if storyteller else None
        raw = read_capped(file)
        try:
            document = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise CommandError(
                f"{file}: not UTF-8 text (byte {error.start}); nothing was imported"
            ) from None
        except json.JSONDecodeError as error:
            raise CommandError(
                f"{file}: not JSON at line {error.lineno}, column {error.colno}; "
                "nothing was imported"
            ) from None
        except RecursionError:
            raise CommandError(f"{file}: nested too deeply; nothing was imported") from None
        try:
            report = sheets_import(
                chronicle_name=chronicle, sheets=document, source=str(file), storyteller=importer
            )
        except SheetError as error:
            raise CommandError(f"{error}; nothing was imported") from None
        except DatabaseError as error:
            log.exception("import_characters: the database refused %s", file)
            raise CommandError(
                f"{file}: the database refused it ({error.__class__.__name__}); "
                "nothing was imported"
            ) from None
        self.stdout.write(str(report))
        for line in report.lines():
            self.stdout.write(line)
