"""Delete what grows forever and serves no more: spent idempotency keys, expired sessions."""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from characters.models import IdempotencyKey

DB_SESSION_ENGINES = {
    "django.contrib.sessions.backends.db",
    "django.contrib.sessions.backends.cached_db",
    "config.sessions",  # the database's sessions, read with a statement written once
}


class Command(BaseCommand):
    help = (
        "Delete idempotency keys older than --keys-older-than hours (a key only guards a write "
        "against a double tap or a retry, minutes after it) and expired sessions (Django's "
        "clearsessions), printing what was removed. Logs, ledgers and sheets are never touched."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--keys-older-than",
            type=int,
            default=48,
            metavar="HOURS",
            help="idempotency keys older than this many hours go (default 48)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would go, delete nothing"
        )

    def handle(self, *args: Any, keys_older_than: int, dry_run: bool, **options: Any) -> None:
        hours = max(keys_older_than, 1)
        verb = "would remove" if dry_run else "removed"
        keys = IdempotencyKey.objects.filter(created_at__lt=timezone.now() - timedelta(hours=hours))
        count = keys.count() if dry_run else keys.delete()[0]
        self.stdout.write(f"{verb} {count} idempotency keys older than {hours} hours")
        self.stdout.write(self._sessions(dry_run, verb))

    def _sessions(self, dry_run: bool, verb: str) -> str:
        engine = settings.SESSION_ENGINE
        if engine in DB_SESSION_ENGINES:
            from django.contrib.sessions.models import Session

            expired = Session.objects.filter(expire_date__lt=timezone.now())
            count = expired.count() if dry_run else expired.delete()[0]
            return f"{verb} {count} expired sessions"
        if dry_run:
            return f"expired sessions of {engine} are not counted; nothing removed"
        store = import_module(engine).SessionStore
        try:
            store.clear_expired()
        except NotImplementedError:
            return f"{engine} removes expired sessions by itself"
        return f"removed the expired sessions of {engine} (it keeps no count)"
