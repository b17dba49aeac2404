"""Import a Grapevine 3 chronicle file (.gex) into a chronicle."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from characters.grapevine import GrapevineError, read_grapevine
from characters.management.importer import read_capped, storyteller_named
from characters.sheet_io import SheetError, sheets_import

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "Import a Grapevine 3 file (.gex): every character is created or updated by name in "
        "the chronicle (made if it does not exist). Every value is checked first: a broken "
        "file or a bad value imports nothing, and the command exits non-zero. "
        "For the JSON of export_characters use import_characters."
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
        data = read_capped(file)
        try:
            read = read_grapevine(data, max_bytes=settings.GRAPEVINE_MAX_BYTES)
        except GrapevineError as error:
            raise CommandError(f"{file}: {error}; nothing was imported") from None
        try:
            report = sheets_import(
                chronicle_name=chronicle,
                sheets=read.sheets,
                source=str(file),
                storyteller=importer,
                notes=read.notes,
            )
        except SheetError as error:
            raise CommandError(f"{error}; nothing was imported") from None
        except DatabaseError as error:
            log.exception("import_grapevine: the database refused %s", file)
            raise CommandError(
                f"{file}: the database refused it ({error.__class__.__name__}); "
                "nothing was imported"
            ) from None
        self.stdout.write(str(report))
        for line in report.lines():
            self.stdout.write(line)
