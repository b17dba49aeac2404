"""A template's dict whose absent key reads as None (issue 21).

A template asks a card, a round's prompt, its region about names a state lacks (a move a side
does not have, a stage's field before its stage), and Django answers a missing name with four
exceptions (a key miss, an attribute miss, ``dir()``, an int parse) costing more than the rest
of the lookup. Read from an :class:`Offers`, the same question costs a dict miss and renders
the same (an absent name is None to a template).
"""

from __future__ import annotations


class Offers(dict):
    """A dict that reads an absent key as None. Empty, it is still falsy; ``in``, ``get``
    and ``==`` are a dict's."""

    def __missing__(self, key: str) -> None:
        return None
