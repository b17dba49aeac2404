"""Parts of the storyteller's board kept whole, rendered once per what they show, not on every
change of the scene (issue 21): a shared scene's board is pushed with every tap of every pair.

- ``{% people_list %}…{% endpeople_list %}`` around the people panel's rows: each row is kept
  already (``{% person_row %}``, :mod:`combat.templatetags.people`), and the list is a
  function of the rows' keys in order (:func:`combat.templatetags.people.row_key`, which say
  everything a row shows), so the list is kept under them: a change that moves nobody's row
  finds it in one look rather than thirty.
- ``{% test_form %}…{% endtest_form %}`` around the challenge region's form that tests a
  player's character: a function of the scene (its pk: the form's URL), its ``test_key``
  (which moves when any challenge starts), the players' characters it lists (pk and name),
  the ruleset's kinds and whether it has werewolf tests.

Both hold forms: kept with a mark in the CSRF token's place, each rendering given its own
token (:func:`combat.templatetags.finished_cards.render_kept`).

- ``{% seq_kept "clock" %}…{% endseq_kept %}`` around a region of the board whose every
  rendering carries the scene's ``seq`` (its root's ``data-seq``; the clock's buttons' keys)
  and the board's token (``scene_token``, which moves with it): kept with marks in their
  places, under everything else it shows (:func:`clock_key`), and given this rendering's seq
  and token. Every change moves the seq and pushes the clock panel; most change nothing else
  in it. (The people panel is not kept so: the changes that push it, a challenge's step, a
  connection, a sheet, change what it shows, and its rows are kept already.)
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable, Hashable
from typing import Any

from django import template
from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe

from combat.challenges.finished import Memo
from combat.templatetags.finished_cards import kept_block
from combat.templatetags.people import row_key

register = template.Library()

SIZE = 512  # lists and forms (a few KB to a few tens of KB each)
_memo: Memo[SafeString] = Memo(SIZE)
stats = _memo.stats


def clear() -> None:
    _memo.clear()


def list_key(context: template.Context) -> Hashable | None:
    """The people panel's rows' keys in order (None when any row is not kept)."""
    scene, rows = context.get("scene"), context.get("rows")
    if scene is None or not isinstance(rows, list):
        return None
    token = context.get("csrf_token")
    keys = []
    for row in rows:
        key = row_key({"row": row, "scene": scene, "csrf_token": token})
        if key is None:
            return None
        keys.append(key)
    return ("people", scene.pk, scene.is_open, bool(token), tuple(keys))


def form_key(context: template.Context) -> Hashable | None:
    """What the test form shows (see the module), or None."""
    scene, board = context.get("scene"), context.get("board")
    if scene is None or not isinstance(board, dict):
        return None
    return (
        "test",
        scene.pk,
        board.get("test_key"),
        tuple((p.pk, p.name) for p in board.get("pcs") or ()),
        tuple(board.get("modes") or ()),
        bool(board.get("werewolf_tests")),
        bool(context.get("csrf_token")),
    )


kept_block(register, "people_list", list_key, _memo)
kept_block(register, "test_form", form_key, _memo)


# In a kept region's place of the seq, the board's token and a form's CSRF token: never in
# any text.
_SEQ = f"seq{secrets.token_hex(16)}"
_TOKEN = f"tok{secrets.token_hex(16)}"
_CSRF = f"csrf{secrets.token_hex(16)}"


def clock_key(context: template.Context) -> Hashable | None:
    """What the clock panel shows but the seq and the board's token (None: not kept)."""
    scene = context.get("scene")
    steps = context.get("clock_steps")
    if scene is None or steps is None:
        return None
    return (
        "clock",
        scene.pk,
        scene.is_open,
        scene.situation,
        scene.ruleset,
        context.get("clock"),
        tuple(steps),
        context.get("error"),
    )


_SEQ_KEYS: dict[str, Callable[[template.Context], Hashable | None]] = {
    "clock": clock_key,
}


class SeqKeptNode(template.Node):
    """A region kept with marks in the seq's, the board token's and the CSRF token's places
    (see the module)."""

    def __init__(self, nodelist: template.NodeList, key: Callable[..., Hashable | None]) -> None:
        self.nodelist, self.key = nodelist, key

    def render(self, context: template.Context) -> str:
        scene, token = context.get("scene"), context.get("csrf_token")
        key = self.key(context)
        if key is None or token == "NOTPROVIDED":  # the csrf_token tag renders nothing for it
            return self.nodelist.render(context)
        board_token = context.get("scene_token")
        key = (*key, bool(token), board_token is not None)

        def render() -> SafeString:
            shown = copy.copy(scene)  # the row as it is, but its seq
            shown.seq = _SEQ
            marks: dict[str, Any] = {"scene": shown}
            if board_token is not None:
                marks["scene_token"] = _TOKEN
            if token:
                marks["csrf_token"] = _CSRF
            with context.push(**marks):
                return mark_safe(self.nodelist.render(context))

        html = _memo.get(key, render).replace(_SEQ, str(scene.seq))
        if board_token is not None:
            html = html.replace(_TOKEN, str(conditional_escape(board_token)))
        if token:
            html = html.replace(_CSRF, escape(str(token)))
        return mark_safe(html)


@register.tag("seq_kept")
def seq_kept(parser: Any, token: Any) -> SeqKeptNode:
    """``{% seq_kept "clock" %}…{% endseq_kept %}``: see the module."""
    bits = token.split_contents()
    if len(bits) != 2 or bits[1].strip("\"'") not in _SEQ_KEYS:
        raise template.TemplateSyntaxError(f"seq_kept takes one of {sorted(_SEQ_KEYS)}")
    nodelist = parser.parse(("endseq_kept",))
    parser.delete_first_token()
    return SeqKeptNode(nodelist, _SEQ_KEYS[bits[1].strip("\"'")])
