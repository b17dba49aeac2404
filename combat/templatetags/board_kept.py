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
"""

from __future__ import annotations

from collections.abc import Hashable

from django import template
from django.utils.safestring import SafeString

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
