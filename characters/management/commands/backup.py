"""Back up the database while the app runs: SQLite's online backup API to a new file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

PG_DUMP = (
    "This database is PostgreSQL: back it up with pg_dump, for example\n"
    '  pg_dump --format=custom --file=storyteller-$(date +%Y%m%d-%H%M%S).dump "$DATABASE_URL"\n'
    'and restore with pg_restore --clean --dbname="$DATABASE_URL" FILE. Nothing was written.'
)


class Command(BaseCommand):
    help = (
        "Back up the SQLite database to a timestamped file under var/backups/ (or --output) "
        "with SQLite's online backup API: safe while the app serves a game. For PostgreSQL "
        "it says how to use pg_dump instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, help="the backup file (must not exist)")
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS)

    def handle(self, *args: Any, output: Path | None, database: str, **options: Any) -> None:
        connection = connections[database]
        if connection.vendor == "postgresql":
            raise CommandError(PG_DUMP)
        if connection.vendor != "sqlite":
            raise CommandError(f"No backup for a {connection.vendor} database; use its own tool.")
        source_name = str(connection.settings_dict["NAME"])
        if output is None:
            stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
            output = (
                settings.BASE_DIR / "var" / "backups" / f"{Path(source_name).stem}-{stamp}.sqlite3"
            )
        if output.exists():
            raise CommandError(f"{output} exists already; nothing was written.")
        output.parent.mkdir(parents=True, exist_ok=True)
        connection.ensure_connection()
        target = sqlite3.connect(output)
        try:
            connection.connection.backup(target)
            (check,) = target.execute("PRAGMA quick_check").fetchone()
        except sqlite3.Error as error:
            target.close()
            output.unlink(missing_ok=True)
            raise CommandError(f"The backup failed ({error}); nothing was kept.") from None
        target.close()
        if check != "ok":
            raise CommandError(f"The backup in {output} does not check out: {check}")
        self.stdout.write(f"backed up {source_name} to {output} ({output.stat().st_size} bytes)")
