"""Numbers from a form or a URL, parsed with bounds: a 30-digit id or a digit Python's
``int()`` refuses (``"²"`` is a digit to ``str.isdigit``) is a bad request, never a 500."""

from __future__ import annotations

import re

# The largest primary key either database stores (a signed 64-bit integer).
MAX_ID = 2**63 - 1

_ID = re.compile(r"[0-9]{1,19}")


def parse_id(text: object) -> int | None:
    """The id ``text`` spells in ASCII digits, from 1 to ``MAX_ID``; None for anything else."""
    if not isinstance(text, str) or not _ID.fullmatch(text):
        return None
    value = int(text)
    return value if 1 <= value <= MAX_ID else None


def parse_small(text: str, low: int, high: int) -> int | None:
    """A small number typed in (a die, a count) from ``low`` to ``high``; None for anything
    else, including digits other than ASCII ones and numbers too long to parse."""
    if not re.fullmatch(r"[0-9]{1,6}", text):
        return None
    value = int(text)
    return value if low <= value <= high else None
