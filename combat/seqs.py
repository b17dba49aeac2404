"""The sequence numbers a fragment carries: the scene's ``data-seq`` on its first root and the
sheets' ``data-sheet-seq`` on a player's private part (what a socket was last shown)."""

from __future__ import annotations

import re

SEQ = re.compile(r'data-seq="(\d+)"')
SHEET_SEQ = re.compile(r'data-sheet-seq="([\d.]+)"')


def seq_of(html: str) -> int | None:
    """The ``data-seq`` of a fragment (its first root's), or None."""
    match = SEQ.search(html, 0, 600)
    return int(match.group(1)) if match else None


def sheet_seq_of(html: str) -> str | None:
    """The ``data-sheet-seq`` of a player's private part in ``html``, or None."""
    at = html.find('id="scene-private"')
    match = SHEET_SEQ.search(html, at, at + 600) if at >= 0 else None
    return match.group(1) if match else None
