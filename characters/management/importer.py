"""What the import commands share: reading the file under the cap, who imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from characters.access import chronicles_run_by, is_storyteller
from characters.models import Chronicle


def storyteller_named(username: str, chronicle_name: str) -> Any:
    """The storyteller an import runs as: a storyteller, and of the chronicle if it exists."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None or not is_storyteller(user):
        raise CommandError(f"{username!r} is not a storyteller; nothing was imported")
    existing = Chronicle.objects.filter(name=chronicle_name.strip()).first()
    if existing is not None and not chronicles_run_by(user).filter(pk=existing.pk).exists():
        raise CommandError(
            f"{username!r} does not run the chronicle {existing.name!r}; nothing was imported"
        )
    return user


def read_capped(file: Path) -> bytes:
    """The file's bytes, refused before reading when it is over ``GRAPEVINE_MAX_BYTES``."""
    limit = settings.GRAPEVINE_MAX_BYTES
    try:
        size = file.stat().st_size
        if size > limit:
            raise CommandError(
                f"{file}: the file is {size} bytes; the limit is {limit} bytes; "
                "nothing was imported"
            )
        return file.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {file}: {error.strerror}") from None
