"""Game time as people read it (the clock panel, the log)."""

from __future__ import annotations


def format_game_time(seconds: int) -> str:
    """``1h 05m 30s`` style, for the clock and the log."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"
