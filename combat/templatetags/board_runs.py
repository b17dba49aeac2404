"""``{% board_card %}…{% endboard_card %}``: the board's challenges whose section is a
function of their row rendered once per process, not built and rendered on every change.

The storyteller's board holds the open challenges and the newest finished ones (the rest of
the night behind its fold, fetched on demand: :mod:`combat.challenges.board_reads`), and each
change of the scene (every tap of a shared scene's sixteen pairs) built every card's data and
went through the loop's body for each, though one of them changed: finished cards were kept
(:mod:`combat.templatetags.finished_cards`), but finding each again cost about as much as the
rest of the board. A challenge on which the storyteller has no call beyond its row (finished,
or live between two players' characters: :func:`combat.challenges.selectors.settled_key`)
comes in the board's read as part of a run of such challenges one after the other
(:func:`combat.challenges.selectors.board_cards`), each with its key. The tag renders a run
whole from a process-local LRU keyed by the scene (its pk: the forms' URLs), whether the
forms carry a CSRF token, and the run's keys in order; a run not kept is made of each
challenge's section, kept under its own key, the missing ones built
(:func:`~combat.challenges.selectors.board_card`) and rendered by the tag's body, the same
body any other card renders by. A key changes with anything the section shows (its row's
``step``, the sides' names, a timer's zone), so nothing stale is served, in any process. As
:func:`~combat.templatetags.finished_cards.render_kept`, a form's token is kept as a mark of
this process's own and each rendering gets its own token put in.

A run not kept whole is made of pieces (``CHUNK``): its sections cut after each challenge
whose pk is a multiple of ``CHUNK``, each piece kept under its sections' keys. A tap moves
one challenge's ``step``, so one piece misses and the others are found in one look each,
rather than every section of the night looked up again; the cuts follow the pks, not the
positions, so a challenge that finishes (and moves among the finished ones) leaves every
piece it is not in as it was.
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

SIZE = 4096  # sections (about 1.5 KB each)
RUNS = 32  # runs (a run of a night's sections: up to a few hundred KB)
CHUNK = 8  # a piece of a run ends after a challenge whose pk is a multiple of it
PIECES = 1024  # pieces of runs (up to CHUNK sections each, on average)
_MARK = f"csrf{secrets.token_hex(16)}"  # in a kept form's token place: never in any text
_sections: Memo[SafeString] = Memo(SIZE)
_runs: Memo[SafeString] = Memo(RUNS)
_pieces: Memo[str] = Memo(PIECES)
stats = {"sections": _sections.stats, "runs": _runs.stats, "pieces": _pieces.stats}


def clear() -> None:
    _sections.clear()
    _runs.clear()
    _pieces.clear()


def pieces(run: list[tuple[Hashable, Any]]) -> list[list[tuple[Hashable, Any]]]:
    """The run cut after each challenge whose pk is a multiple of ``CHUNK`` (see the module)."""
    out: list[list[tuple[Hashable, Any]]] = [[]]
    for entry in run:
        out[-1].append(entry)
        if entry[1].pk % CHUNK == 0:
            out.append([])
    return [p for p in out if p]


class BoardCardNode(template.Node):
    def __init__(self, nodelist: template.NodeList) -> None:
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        c = context.get("c")
        run = c.get("run") if isinstance(c, dict) else None
        if run is None:
            return self.nodelist.render(context)
        token = context.get("csrf_token")
        scene = context.get("scene")
        if token == "NOTPROVIDED" or scene is None:  # the csrf_token tag renders nothing
            return mark_safe("".join(self._section(context, ch, None) for _, ch in run))
        marked = bool(token)
        # a form's hidden fields say whether it came from a phone (none on a board, but keyed)
        marked_as = (marked, bool(context.get("from_phone")))
        key = ("run", scene.pk, marked_as, tuple(k for k, _ in run))
        html = _runs.get(key, lambda: mark_safe(self._pieces(context, scene, run, marked_as)))
        return mark_safe(html.replace(_MARK, escape(str(token)))) if marked else html

    def _pieces(
        self,
        context: template.Context,
        scene: Any,
        run: list[tuple[Hashable, Any]],
        marked_as: tuple[bool, bool],
    ) -> str:
        return "".join(
            _pieces.get(
                ("piece", scene.pk, marked_as, tuple(k for k, _ in piece)),
                lambda piece=piece: "".join(
                    self._kept(context, scene, k, ch, marked_as) for k, ch in piece
                ),
            )
            for piece in pieces(run)
        )

    def _kept(
        self,
        context: template.Context,
        scene: Any,
        key: Hashable,
        ch: Any,
        marked_as: tuple[bool, bool],
    ) -> SafeString:
        mark = _MARK if marked_as[0] else None
        return _sections.get(
            ("section", scene.pk, marked_as, key), lambda: self._section(context, ch, mark)
        )

    def _section(self, context: template.Context, ch: Any, mark: str | None) -> SafeString:
        from combat.challenges.selectors import board_card  # they read this module's regions

        extra = {} if mark is None else {"csrf_token": mark}
        with context.push(c=board_card(ch), **extra):
            return mark_safe(self.nodelist.render(context))


@register.tag("board_card")
def board_card(parser: Any, token: Any) -> BoardCardNode:
    """``{% board_card %}…{% endboard_card %}`` around the board loop's body: see the module."""
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("board_card takes no argument")
    nodelist = parser.parse(("endboard_card",))
    parser.delete_first_token()
    return BoardCardNode(nodelist)
