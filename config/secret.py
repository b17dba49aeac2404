"""The secret key of a machine that runs the night: made once, kept in a file only its owner
reads."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def read_or_make_secret_key(path: Path) -> str:
    """The key in ``path``; on first use a new random one is written there with mode 600.

    Two processes starting at once both end up with the first key written (a hard link is
    made only when the name is free). A key file others may read is refused, not used.
    """
    path = Path(path)
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            spare = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50) + "\n")
            try:
                os.link(spare, path)
            except FileExistsError:
                pass  # another process made it first: use theirs
            finally:
                spare.unlink()
        except OSError as error:
            raise ImproperlyConfigured(
                f"SECRET_KEY is not set and the key file {path} cannot be made "
                f"({error.strerror}): set SECRET_KEY or SECRET_KEY_FILE."
            ) from None
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ImproperlyConfigured(
            f"The key file {path} may be read by others: chmod 600 {path}, or delete it to "
            "make a new one (everyone logs in again)."
        )
    key = path.read_text().strip()
    if len(key) < 50:
        raise ImproperlyConfigured(f"The key file {path} holds no usable key: delete it.")
    return key
