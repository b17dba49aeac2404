"""Screenshots of the main moments, kept as test artifacts to be looked at (issue 19).

They go to ``$SCREENSHOTS_DIR``, else ``var/screenshots/`` (git-ignored)."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings


def shots_dir() -> Path:
    where = os.environ.get("SCREENSHOTS_DIR") or Path(settings.BASE_DIR) / "var" / "screenshots"
    path = Path(where)
    path.mkdir(parents=True, exist_ok=True)
    return path


def shot(page, name: str) -> None:
    """What the screen shows now (the viewport, as a person sees it)."""
    page.screenshot(path=str(shots_dir() / f"{name}.png"), full_page=False)
