"""Combat round models (issue 11): filled in by that feature."""

__all__: list[str] = []
