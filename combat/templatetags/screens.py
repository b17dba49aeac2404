"""Template filters of the phone's "now" area: which card asks this player to act right now.

A card that waits on this player carries ``data-now="<key>"`` (static/js/phone.js brings it
into view and buzzes once per key); the key changes with each step that asks again, never with
another side's move."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()

# The moves that wait on this side: nothing goes on until it makes one (retests are a choice
# beside "Take the result", which waits on it).
_WAITING_MOVES = ("answer", "choose", "drop_out", "declare", "accept")


@register.filter
def now_key(c: dict[str, Any]) -> str:
    """The "now" key of a challenge card (``selectors.card`` or a mob member's), or ""."""
    ch = c["ch"]
    # The key names the point of the challenge the question is about (its answer, or which
    # throw: reads.round_of), never its step: the other side's lock-in or sealed total
    # moves the step, and would make the same question new (and buzz).
    at = c.get("throw_at") or "answer"
    if c.get("viewer") == "member":
        member = c.get("member")
        if member is not None and c.get("mob_bids"):
            return f"mob-{ch.pk}-{member.pk}:bid"  # another member's bid asks nothing new
        if member is not None and c.get("drop_out"):
            return f"mob-{ch.pk}-{member.pk}:{at}"
        return ""
    moves = c.get("moves")
    if not moves:  # a finished card, a side waiting on the other: a phone's most (issue 21)
        return ""
    waiting = any(moves.get(m) for m in _WAITING_MOVES)
    if moves.get("throw") and not c.get("my_throw"):
        waiting = True
    return f"c{ch.pk}-{c.get('viewer')}:{at}" if waiting else ""


@register.filter
def now_first(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cards waiting on this player first, then the open ones, then the finished ones
    (each group in its own order)."""

    def rank(c: dict[str, Any]) -> int:
        if now_key(c):
            return 0
        return 1 if c["ch"].is_open else 2

    return sorted(cards, key=rank)


@register.filter
def any_now(cards: list[dict[str, Any]]) -> bool:
    """Whether any of the cards waits on this player (the others then fold to their line)."""
    return any(now_key(c) for c in cards)


@register.filter
def reveal(ch: Any) -> list[str]:
    """The lines of the challenge's last reveal, in order: both throws, the totals when they
    decided (C4), who won and what each side lost; [] before anything was thrown."""
    lines = [h.get("text", "") for h in (ch.history or [])]
    for start in range(len(lines) - 1, -1, -1):
        if lines[start].startswith(("Throws:", "By hand")):
            return lines[start:][:5]
    return []
