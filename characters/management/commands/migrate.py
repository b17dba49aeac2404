"""Django's migrate, saying first in one sentence when the database cannot be used."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as DjangoMigrate

from config.dbcheck import database_problem


class Command(DjangoMigrate):
    def handle(self, *args: Any, **options: Any) -> None:
        problem = database_problem(options["database"])
        if problem:
            raise CommandError(problem)
        super().handle(*args, **options)
