"""A step's answer from what the pushes of its commit rendered: each part rendered once.

A tap commits, its pushes render the changed parts for every audience (on commit, in the
same request: :func:`combat.render_cache.one_request`), then the tap is answered with the
actor's screen: the storyteller's whole board (``#scene-board``), a feature's region of it
(``#challenge-board``), a player's own part (``#scene-private``) or their challenge prompts
(``#challenge-prompts``). Each of these is, or is made of, what a push of the same ``seq``
rendered for the same viewer, so the answer takes it from the change's
:class:`~combat.render_cache.RenderCache` instead of rendering it again:

- the board: the template's own frame (``#board``'s nodes that are no region: its root tag,
  the stage's section) around the regions pushed at this seq (all of them for a round's
  step; those a change did not push are rendered for the answer, once, the same way);
- a region, a player's own part: as pushed, its root without ``hx-swap-oob``; when a
  change pushed only its pieces (its prompts and log), the part's frame around them (its
  other nodes, the sheets, rendered for the answer);
- a player's challenge prompts: as the own part (or its pieces) pushed at this seq included
  them, kept whole by its ``{% kept_include %}`` (:mod:`combat.templatetags.kept`).

A push carries no CSRF token (it has no request); an answer's forms carry the request's.
The pushes render with :data:`MARK` in the token's place and keep that rendering
(``("marked", …)`` keys): the push sends it with each marked token input taken out (exactly
what a render without a token gives: ``{% if csrf_token %}{% csrf_token %}{% endif %}``),
the answer with the request's own token put in (:func:`for_request`). The mark is this
process's own, never in any text; no token is ever kept.

Nothing is taken when the answer carries a sentence (a refusal: nothing was pushed) or when
the part was not pushed at this seq (another process's change since, a write of the request
after the push, a board nobody watched): the answer is rendered as before, from the same
cache's reads. Every answer shows what a fresh render of its ``seq`` shows (tests compare).
"""

from __future__ import annotations

import secrets
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.template import Context
from django.template.base import Node
from django.template.loader import get_template
from django.template.loader_tags import IncludeNode
from django.utils.html import escape, format_html

from combat import render_cache

MARK = f"csrf{secrets.token_hex(16)}"
#: What a push's context holds in the CSRF token's place.
MARKED: dict[str, str] = {"csrf_token": MARK}
_INPUT = format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', MARK)
#: What ``{% csrf_token %}`` renders for :data:`MARK`.
MARKED_INPUT = _INPUT
_OOB = ' hx-swap-oob="true"'


def keep(key: tuple[Any, ...], marked: str) -> str:
    """Keep a push's marked rendering under ``("marked", *key)`` in the active cache; the
    push's own html (no token) back."""
    render_cache.cached(("marked", *key), lambda: marked)
    return unmarked(marked)


def unmarked(marked: str) -> str:
    """A push's own html from its marked rendering: each marked token input taken out."""
    return marked.replace(_INPUT, "")


def kept(key: tuple[Any, ...]) -> str | None:
    """A marked rendering of this seq's pushes (None: none in the active cache)."""
    return render_cache.known(("marked", *key))


def keep_include(template: str, user_id: int, marked: str, token: Any) -> None:
    """Keep what a push's ``{% kept_include %}`` of ``template`` rendered in a player's own
    part (:func:`included`): only a marked rendering (``token``, the context's, is the mark;
    a page's lazy token is never evaluated here)."""
    if type(token) is str and token == MARK:
        render_cache.cached(("marked", "include", template, user_id), lambda: marked)


def for_request(html: str, request: HttpRequest) -> str:
    """A marked rendering with the request's own CSRF token in the mark's place."""
    if MARK not in html:
        return html
    return html.replace(MARK, escape(get_token(request)))


def not_oob(html: str) -> str | None:
    """A pushed root as a page has it: without ``hx-swap-oob`` on its root tag."""
    first = html.find(">")
    at = html.find(_OOB, 0, first)
    return None if at < 0 else html[:at] + html[at + len(_OOB) :]


def screen(request: HttpRequest, scene: Any, tablet: bool) -> HttpResponse | None:
    """The screen a post came from (the whole board, or the player's own part) as this seq's
    pushes rendered it, or None."""
    from combat.fragments import REGION_TEMPLATES  # fragments renders with this module

    if tablet:
        html = board(request, scene, REGION_TEMPLATES)
    else:
        html = private(request, request.user.pk)
        html = own_part(request, scene) if html is None else html
    return None if html is None else HttpResponse(html)


# The board -----------------------------------------------------------------------------


def board(request: HttpRequest, scene: Any, regions: dict[str, str]) -> str | None:
    """The whole board (``TABLET#board``, not oob) from this seq's pushed regions, the ones
    not pushed rendered now (and kept), or None when none was pushed (render it whole).
    ``regions``: region -> its template (``fragments.REGION_TEMPLATES``)."""
    frame = _frame("combat/scene_tablet.html#board", regions)
    pushed = {r: kept(("board", r, True)) for r in regions}
    missing = [r for r, html in pushed.items() if html is None]
    if frame is None or len(missing) == len(pushed):
        return None
    if missing:  # with the people panel, as the board reads them (kept already: not again)
        from combat.fragments import board_regions

        board_regions(scene, [*missing, "people"])
        pushed = {r: kept(("board", r, True)) for r in regions}
        if any(html is None for html in pushed.values()):
            return None
    context = Context({"scene": scene, "oob": False})
    html = "".join(pushed[n] if isinstance(n, str) else n.render(context) for n in frame)
    return for_request(html, request)


def _frame(template: str, regions: dict[str, str]) -> list[Node | str] | None:
    """A partial's top nodes, each region's node as the region's name; None unless every
    region is one of them (a template changed: render it whole)."""
    names = {}
    for region, source in regions.items():
        path, _, partial = source.partition("#")
        names[partial or path] = region
    frame: list[Node | str] = []
    for node in get_template(template).template.nodelist:
        name = getattr(node, "partial_name", None)
        if isinstance(node, IncludeNode):
            name = getattr(node.template, "var", None)
        frame.append(names.get(name, node) if isinstance(name, str) else node)
    found = [n for n in frame if isinstance(n, str)]
    return frame if sorted(found) == sorted(regions) else None


def region(request: HttpRequest, name: str) -> str | None:
    """One board region as pushed at this seq (with the board's people: the board's
    rendering), for the request; None when it was not."""
    html = kept(("board", name, True))
    return None if html is None else for_request(html, request)


# A player's own part -------------------------------------------------------------------


def private(request: HttpRequest, user_id: int) -> str | None:
    """A player's own part (``PHONE#private``, not oob) as pushed whole at this seq."""
    html = kept(("private", user_id))
    html = None if html is None else not_oob(html)
    return None if html is None else for_request(html, request)


def own_part(request: HttpRequest, scene: Any) -> str | None:
    """A player's own part (``PHONE#private``, not oob) from the pieces pushed at this seq
    (its prompts and log, ``fragments.PRIVATE_PIECES``) in the part's frame, rendered now
    with the sheets (the part's nodes that are no piece); None when they were not pushed."""
    from combat.fragments import PHONE, PRIVATE_PIECES  # fragments renders with this module
    from combat.selectors import sheets_state

    pushed = {n: kept(("piece", n, request.user.pk)) for n in PRIVATE_PIECES}
    pieces = {n: None if html is None else not_oob(html) for n, html in pushed.items()}
    frame = _frame(f"{PHONE}#private", {n: f"{PHONE}#{n}" for n in PRIVATE_PIECES})
    if frame is None or any(html is None for html in pieces.values()):
        return None
    part = get_template(f"{PHONE}#private").template
    context = Context({**sheets_state(scene, request.user), "oob": False, **MARKED})
    with context.render_context.push_state(part), context.bind_template(part):
        html = "".join(pieces[n] if isinstance(n, str) else n.render(context) for n in frame)
    return for_request(html, request)


def included(request: HttpRequest, user_id: int, template: str) -> str | None:
    """A region of a player's own part (``template``, standalone: the challenge prompts) as
    their own part or its pieces pushed at this seq included it (``{% kept_include %}``)."""
    html = kept(("include", template, user_id))
    return None if html is None else for_request(html, request)
