"""A finished challenge's card is rendered once, not on every tap of the night.

A phone keeps its player's finished cards (up to ``KEPT``) and the board every one of the
night, and each change re-rendered them all: the bulk of a tap's rendering once a night is
under way. A finished card offers no move (no form, no token, no timer), so its html is a
function of what it shows: the challenge's row (its pk and ``step``, which every write
moves), the sides' names as this viewer reads them, the viewer and the include's arguments.
``{% finished_card %}…{% endfinished_card %}`` (around ``_card.html``'s body) keys the
rendering by exactly these and keeps it in a small process-local LRU; a card that is open,
waits on a choice (W8), has a mob (C16: its members' names and bids), a timer, or any move
renders every time. Any write to a challenge
moves its ``step`` (and so the key), a rename changes the names: nothing stale is served, in
any process.

``{% finished_card "prompt" %}`` (a phone's finished item: its fold and its "put away" form)
and ``{% finished_card "board" %}`` (the board's: its fold and its void form) keep what is
around the card the same way, under their label: their forms take the row's step and the
scene's URLs and nothing else, but a form rendered for a request (a page, an answer) carries
that request's CSRF token. Such a rendering is kept with a mark of this process's own in the
token's place (under a key of its own), and each request gets its copy with its own token put
in: no token is ever kept, none crosses to another request or to a push.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable
from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from combat.challenges.finished import Memo

register = template.Library()

SIZE = 4096  # cards (about 1.5 KB each)
# What a kept form holds in its CSRF token's place: this process's own, never in any text.
_CSRF_MARK = f"csrf{secrets.token_hex(16)}"
_memo: Memo[SafeString] = Memo(SIZE)
stats = _memo.stats


def clear() -> None:
    _memo.clear()


def card_key(context: template.Context, label: str = "") -> Hashable | None:
    """What a finished card's html (``label``: what is around it) is a function of, or None:
    render it every time."""
    c = context.get("c")
    ch = c.get("ch") if isinstance(c, dict) else None
    if ch is None or ch.is_open or ch.deadline is not None or c.get("moves"):
        return None
    options = ch.options or {}
    if options.get("choose") or options.get("mob") or options.get("mob_dropped"):
        return None
    if c.get("viewer") not in ("attacker", "defender", "st", "public"):
        return None  # a mob member's card, a step-in offer
    scene = context.get("scene")
    return (
        label,
        _row(ch),
        c.get("viewer"),
        tuple(sorted((c.get("names") or {}).items())),
        *(repr(context.get(name)) for name in ("side", "url", "target", "st_url")),
        getattr(scene, "pk", None),
        bool(label and context.get("csrf_token")),  # with _CSRF_MARK in the token's place
    )


def _row(ch: Any) -> tuple[int, int]:
    """The challenge's row, as its pk and ``step``: every write to a challenge moves its
    ``step`` (:func:`combat.challenges.recording.save`) but a player leaving it
    (``options["left"]``, which no card shows), so a finished row is a function of these
    two (as its data is, :mod:`combat.challenges.finished`). Spelling out every field of the
    row (its engine's state, its history) cost more than the rendering it spared."""
    return ch.pk, ch.step


def render_kept(
    memo: Memo[SafeString],
    key: Hashable | None,
    nodelist: template.NodeList,
    context: template.Context,
    *,
    forms: bool,
) -> str:
    """``nodelist`` rendered once per ``key`` (None: every time). ``forms``: it holds forms,
    kept with :data:`_CSRF_MARK` in the token's place and given this request's token."""
    if key is None:
        return nodelist.render(context)
    token = context.get("csrf_token") if forms else None
    if not token:
        return memo.get(key, lambda: nodelist.render(context))
    if token == "NOTPROVIDED":  # the csrf_token tag renders nothing for it
        return nodelist.render(context)

    def render() -> SafeString:
        with context.push(csrf_token=_CSRF_MARK):
            return nodelist.render(context)

    return mark_safe(memo.get(key, render).replace(_CSRF_MARK, escape(str(token))))


class FinishedCardNode(template.Node):
    def __init__(self, nodelist: template.NodeList, label: str = "") -> None:
        self.nodelist = nodelist
        self.label = label

    def render(self, context: template.Context) -> str:
        key = card_key(context, self.label)
        return render_kept(_memo, key, self.nodelist, context, forms=bool(self.label))


@register.tag("finished_card")
def finished_card(parser: Any, token: Any) -> FinishedCardNode:
    """``{% finished_card ["label"] %}…{% endfinished_card %}``: see the module."""
    bits = token.split_contents()
    if len(bits) > 2 or (len(bits) == 2 and bits[1][:1] not in "\"'"):
        raise template.TemplateSyntaxError("finished_card takes one quoted label at most")
    label = bits[1][1:-1] if len(bits) == 2 else ""
    nodelist = parser.parse(("endfinished_card",))
    parser.delete_first_token()
    return FinishedCardNode(nodelist, label)
