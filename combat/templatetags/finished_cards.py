"""A finished challenge's card is rendered once, not on every tap of the night.

A phone keeps its player's finished cards (up to ``KEPT``) and the board every one of the
night, and each change re-rendered them all: the bulk of a tap's rendering once a night is
under way. A finished card offers no move (no form, no token, no timer), so its html is a
function of what it shows: the challenge's row (its pk and ``step``, which every write
moves), the sides' names as this viewer reads them, the viewer and the include's arguments.
``{% finished_card %}…{% endfinished_card %}`` (around ``_card.html``'s body) keys the
rendering by exactly these and keeps it in a small process-local LRU; a card that waits on a
choice (W8), has a mob (C16: its members' names and bids) or any move renders every time, and
so does a side's open card (it reads its sheet). The storyteller's open card is kept the same
way (:func:`_open_parts`): a shared scene's board holds every pair's, and a tap changes one.
Any write to a challenge moves its ``step`` (and so the key), a rename changes the names:
nothing stale is served, in any process.

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
from collections.abc import Callable, Hashable
from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import get_current_timezone

from combat.challenges import finished
from combat.challenges.finished import VIEWERS, Memo

register = template.Library()

SIZE = 4096  # cards (about 1.5 KB each)
# What a kept form holds in its CSRF token's place: this process's own, never in any text.
_CSRF_MARK = f"csrf{secrets.token_hex(16)}"
_memo: Memo[SafeString] = Memo(SIZE)
stats = _memo.stats


def clear() -> None:
    """Forget every kept card, and the board's kept parts made of them (a fresh rendering,
    in tests)."""
    from combat.templatetags import board_kept, board_runs

    _memo.clear()
    _runs.clear()
    board_runs.clear()
    board_kept.clear()


def card_key(context: template.Context, label: str = "") -> Hashable | None:
    """What a finished card's html (``label``: what is around it) is a function of, or None:
    render it every time. An open card is kept too where no one can act on it but by the
    row (:func:`_open_parts`), its timer with it."""
    c = context.get("c")
    ch = c.get("ch") if isinstance(c, dict) else None
    if ch is None or c.get("moves") or (ch.deadline is not None and not ch.is_open):
        return None
    options = ch.options or {}
    if options.get("choose") or options.get("mob") or options.get("mob_dropped"):
        return None
    if c.get("viewer") not in ("attacker", "defender", "st", "public"):
        return None  # a mob member's card, a step-in offer
    opened = _open_parts(c, ch, label) if ch.is_open else ()
    if opened is None:
        return None
    return _card_key(c, label, _around(context, label), opened)


def _around(context: template.Context, label: str) -> tuple[Any, ...]:
    """What a card's key reads of the context around it, the same for every card of a run."""
    scene = context.get("scene")
    return (
        *(repr(context.get(name)) for name in ("side", "url", "target", "st_url")),
        getattr(scene, "pk", None),
        bool(label and context.get("csrf_token")),  # with _CSRF_MARK in the token's place
        bool(context.get("from_phone")),  # a form's hidden fields say where it came from
    )


def _card_key(
    c: dict[str, Any], label: str, around: tuple[Any, ...], opened: tuple[Any, ...]
) -> tuple[Any, ...]:
    return (
        label,
        _row(c["ch"]),
        c.get("viewer"),
        tuple(sorted((c.get("names") or {}).items())),
        *around,
        *opened,
    )


# The storyteller's calls on a board's open card that are read from beyond its row (the moves
# of a side it plays, a mob's members, a W8 choice for someone): such a card renders every time.
_BEYOND_ROW = ("st_sides", "npc_members", "st_choose", "st_drops", "st_keep_out")


def _open_parts(c: dict[str, Any], ch: Any, label: str) -> tuple[Any, ...] | None:
    """What an open card's html is a function of beyond a finished one's key, or None: render
    it every time. Only the storyteller's and the public card of an open challenge, with no
    side's moves (a side's card reads its sheet: blood left, traits to bid): the rest of the
    card is the row's (its engine's state, sealed locks, a result by hand, an announced retest,
    its timer: every write moves ``step``; a timer's time is written in the current zone),
    and the sides' names, which an announced retest or a result by hand words as players read
    them (``reads.name_of``: a hidden NPC unseen), whatever the viewer. On the board, the
    storyteller's calls: whether a forced step is offered and the ruling on surprise (C12,
    read from the defender's sheet) go into the key; a side it plays, a mob, a W8 choice
    render every time (:data:`_BEYOND_ROW`)."""
    if c.get("viewer") not in ("st", "public") or c.get("mob"):
        return None
    if label == "board":
        if any(c.get(name) for name in _BEYOND_ROW):
            return None
        calls: tuple[Any, ...] = (c.get("st_force"), c.get("st_surprised"))
    else:
        calls = ()
    zone = get_current_timezone() if ch.deadline is not None else None
    return (_who(ch.attacker), _who(ch.defender), zone, *calls)


def _who(participant: Any) -> tuple[Any, ...] | None:
    return None if participant is None else (participant.pk, participant.name, participant.hidden)


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


class FinishedRun(list):
    """Consecutive finished cards of a phone's prompts (:func:`finished_runs`), rendered as
    one item (:class:`FinishedRunNode`)."""


def _finished_alone(c: Any) -> bool:
    """A card whose "prompt" item :func:`card_key` keys by its row alone (see it): finished,
    offering no move, seen by a side (or the storyteller, the public)."""
    return (
        isinstance(c, dict)
        and not c.get("moves")
        and c.get("viewer") in VIEWERS
        and finished.is_finished(c["ch"])
    )


@register.filter
def finished_runs(cards: list[dict[str, Any]]) -> list[Any]:
    """The cards in their order, each run of two or more consecutive finished ones
    (:func:`_finished_alone`) as one :class:`FinishedRun`: a phone keeps up to ``KEPT``
    of its player's finished cards, the same from one change to the next."""
    out: list[Any] = []
    for c in cards:
        if not _finished_alone(c):
            out.append(c)
        elif out and isinstance(out[-1], FinishedRun):
            out[-1].append(c)
        elif out and _finished_alone(out[-1]):
            out[-1] = FinishedRun([out[-1], c])
        else:
            out.append(c)
    return out


RUNS = 512  # runs (a phone's up to KEPT finished cards, about 1.5 KB each): a night's phones
_runs: Memo[SafeString] = Memo(RUNS)
run_stats = _runs.stats


class _Each:
    """The body rendered for each card of a run (``c`` each in turn), joined. A body that is
    the card's "prompt" item alone (``item``: ``{% finished_card "prompt" %}``) takes a kept
    item's html as it is (``render_kept`` would give it back unchanged: kept as rendered, or
    with :data:`_CSRF_MARK`, the token a run is rendered with): a run made again for one more
    finished card renders that card alone, not the body of each kept one."""

    def __init__(
        self, nodelist: template.NodeList, run: FinishedRun, item: FinishedCardNode | None
    ) -> None:
        self.nodelist, self.run, self.item = nodelist, run, item

    def render(self, context: template.Context) -> str:
        token = context.get("csrf_token")
        around = _around(context, "prompt") if self.item is not None else None
        if token and token != _CSRF_MARK:  # rendered every time (render_kept): no shortcut
            around = None
        out = []
        for c in self.run:
            with context.push(c=c):
                if around is not None and self.item is not None and _keyed_closed(c):
                    key = _card_key(c, "prompt", around, ())
                    out.append(_memo.get(key, lambda: self.item.nodelist.render(context)))
                else:
                    out.append(self.nodelist.render(context))
        return "".join(out)


def _keyed_closed(c: Any) -> bool:
    """Whether :func:`card_key` keys this card as :func:`_card_key` does with nothing open
    (the same tests, in its order): a card no one can act on any more."""
    ch = c.get("ch") if isinstance(c, dict) else None
    if ch is None or c.get("moves") or ch.is_open or ch.deadline is not None:
        return False
    options = ch.options or {}
    if options.get("choose") or options.get("mob") or options.get("mob_dropped"):
        return False
    return c.get("viewer") in ("attacker", "defender", "st", "public")


class FinishedRunNode(template.Node):
    """``{% finished_run %}…{% endfinished_run %}`` around a phone's "prompt" item (its body:
    ``{% finished_card "prompt" %}…``): a :class:`FinishedRun` in ``c`` is rendered once for
    the keys of its cards' items (each :func:`card_key`, its label "prompt"), the body for
    each of them in turn, and kept as the items are (its forms with each request's own
    token); a card alone, the body as it is."""

    def __init__(self, nodelist: template.NodeList) -> None:
        self.nodelist = nodelist
        # the body is the card's "prompt" item alone: a run takes its kept items (_Each)
        alone = len(nodelist) == 1 and isinstance(nodelist[0], FinishedCardNode)
        self.item = nodelist[0] if alone and nodelist[0].label == "prompt" else None

    def render(self, context: template.Context) -> str:
        run = context.get("c")
        if not isinstance(run, FinishedRun):
            return self.nodelist.render(context)
        return render_kept(
            _runs, run_key(context, run), _Each(self.nodelist, run, self.item), context, forms=True
        )


def run_key(context: template.Context, run: FinishedRun) -> Hashable | None:
    """What a run's items are a function of: each card's "prompt" item key
    (:func:`card_key`), spelt once for the run. Every card of a run is finished alone
    (:func:`_finished_alone`), so its item's key is its row, its viewer and its names beside
    what the context gives every card of the run alike (read once here, not once a card: a
    phone's run holds up to ``KEPT`` cards and is keyed on every change)."""
    cards = []
    for c in run:
        if not _finished_alone(c):
            return None
        cards.append(
            (_row(c["ch"]), c.get("viewer"), tuple(sorted((c.get("names") or {}).items())))
        )
    scene = context.get("scene")
    common = (
        "prompt",
        *(repr(context.get(name)) for name in ("side", "url", "target", "st_url")),
        getattr(scene, "pk", None),
        bool(context.get("csrf_token")),  # with _CSRF_MARK in the token's place
        bool(context.get("from_phone")),
    )
    return ("run", common, tuple(cards))


@register.tag("finished_run")
def finished_run(parser: Any, token: Any) -> FinishedRunNode:
    """``{% finished_run %}…{% endfinished_run %}``: see :class:`FinishedRunNode`."""
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("finished_run takes no argument")
    nodelist = parser.parse(("endfinished_run",))
    parser.delete_first_token()
    return FinishedRunNode(nodelist)


class KeptBlockNode(template.Node):
    """A block rendered once per ``key(context)`` (:func:`render_kept`); ``forms``: its forms
    given each request's own token."""

    def __init__(
        self,
        nodelist: template.NodeList,
        key: Callable[[template.Context], Hashable | None],
        memo: Memo[SafeString],
        forms: bool,
    ) -> None:
        self.nodelist, self.key, self.memo, self.forms = nodelist, key, memo, forms

    def render(self, context: template.Context) -> str:
        return render_kept(self.memo, self.key(context), self.nodelist, context, forms=self.forms)


def kept_block(
    register: template.Library,
    name: str,
    key: Callable[[template.Context], Hashable | None],
    memo: Memo[SafeString],
    *,
    forms: bool = True,
) -> None:
    """Register ``{% <name> %}…{% end<name> %}`` in ``register``: its body kept in ``memo``
    under ``key(context)`` (:class:`KeptBlockNode`; ``forms``: it holds forms)."""

    def tag(parser: Any, token: Any) -> KeptBlockNode:
        if len(token.split_contents()) != 1:
            raise template.TemplateSyntaxError(f"{name} takes no argument")
        nodelist = parser.parse((f"end{name}",))
        parser.delete_first_token()
        return KeptBlockNode(nodelist, key, memo, forms)

    register.tag(name, tag)
