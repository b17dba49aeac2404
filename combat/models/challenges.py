"""Challenge models (issue 10): filled in by that feature."""

__all__: list[str] = []
