"""Template tags of the challenge regions: each hands its include the challenges as the
scene's selectors read them before the render (:mod:`combat.regions`), so the scene's own
selectors need not know about challenges and no query runs in a render."""

from __future__ import annotations

import html
from functools import cache
from typing import Any

from django import template
from django.template.defaulttags import CsrfTokenNode
from django.utils.functional import Promise
from django.utils.safestring import SafeString, mark_safe

from combat import regions
from combat.offers import Offers
from combat.replies import MARK, MARKED_INPUT

register = template.Library()


def escaped(value: Any) -> str:
    """What Django's ``conditional_escape(value)`` writes, as text: an int as it is, a safe
    string (one with ``__html__``) as it says, anything else through ``html.escape`` as
    Django's ``escape`` does. Without its lazy-string wrapper: a card's forms escape some
    fifty values and are rendered for every audience on every change (issue 21)."""
    if type(value) is int:
        return str(value)
    if isinstance(value, Promise):
        value = str(value)
    if hasattr(value, "__html__"):
        return value.__html__()
    return html.escape(str(value))


def _read(context: template.Context, name: str, scene: Any) -> Any:
    return context[name] if name in context else regions.read_one(name, scene, context.flatten())


@register.simple_tag(takes_context=True)
def challenge_prompts(context: template.Context, scene: Any, player: Any) -> dict[str, Any]:
    """This player's challenge cards and start form (the phone's private part)."""
    if scene is None or player is None or not getattr(player, "is_authenticated", False):
        return {"cards": [], "starts": []}
    return _read(context, "challenge_prompts", scene)


@register.simple_tag(takes_context=True)
def challenge_board(context: template.Context, scene: Any) -> dict[str, Any]:
    """Every challenge of the scene as the storyteller's board shows it."""
    return _read(context, "challenge_board", scene) if scene is not None else {"cards": []}


@register.simple_tag(takes_context=True)
def challenge_public(context: template.Context, scene: Any) -> list[dict[str, Any]]:
    """The public line of each challenge (no bid, throw or total)."""
    return _read(context, "challenge_public", scene) if scene is not None else []


@register.filter
def side_label(side: str) -> str:
    return {"attacker": "Attacker", "defender": "Defender"}.get(side, side)


@register.filter
def get_side(names: dict[str, str], side: str) -> str:
    return names.get(side, "")


HISTORY_SHOWN = 12  # lines of a challenge's history a card shows; the log keeps them all


@register.filter
def history_tail(history: list[dict[str, Any]]) -> dict[str, Any]:
    """The last lines of a challenge's history and how many earlier ones are not shown, so
    what a phone receives stays bounded however long the challenge runs."""
    history = history or []
    lines = [Offers(h) for h in history[-HISTORY_SHOWN:]]  # most have no "times"
    return {"lines": lines, "earlier": max(len(history) - HISTORY_SHOWN, 0)}


_CSRF = CsrfTokenNode()
_FROM_PHONE = '<input type="hidden" name="from" value="phone">'
_MARKED_INPUT = MARKED_INPUT


@register.filter
def move_key(ch: Any, side: str) -> str:
    """What every move key of ``side``'s part of a card starts with: the challenge and its
    step (a tap sent twice is answered once, a tap on an older card is refused)."""
    return f"c{ch.pk}-{ch.step}-{side}"


@register.filter
def board_key(ch: Any) -> str:
    """What every move key of the storyteller's calls on a challenge starts with."""
    return f"st{ch.pk}-{ch.step}"


THROWS = ("rock", "paper", "scissors", "random")


@register.filter
@cache
def throw_buttons(chosen: str) -> tuple[tuple[str, str, str], ...]:
    """A side's throw buttons as (throw, label, classes), the one it has ``chosen`` marked: the
    same four on every card, worked out once rather than per button per render."""
    return tuple(
        (
            t,
            t.capitalize(),
            f"throw throw-{t}{' chosen' * (t == chosen)}{' primary' * (t != 'random')}",
        )
        for t in THROWS
    )


@register.filter
def trait_options(pairs: list[tuple[str, Any]], selected: Any = None) -> SafeString:
    """``<option>`` "name (rating)" for each (name, rating) pair of a card's select, the one
    named ``selected`` selected: a card lists a side's traits and abilities, a dozen or more,
    in its selects, and is rendered for every audience on every change (issue 21)."""
    return mark_safe("".join(_option(name, rating, name == selected) for name, rating in pairs))


def _option(name: str, rating: Any, selected: bool) -> str:
    n = escaped(name)
    mark = " selected" if selected else ""
    return f'<option value="{n}"{mark}>{n} ({escaped(rating)})</option>'


@register.simple_tag(takes_context=True)
def hidden_fields(context: template.Context, *key_parts: Any, **fields: Any) -> SafeString:
    """A card form's hidden inputs: the request's CSRF token (as ``{% csrf_token %}``, none in
    a push), ``from=phone`` on a phone, then ``fields`` in the order given; ``key``'s value is
    joined with ``key_parts`` by "-" (``{% hidden_fields "throw" t key=kp %}``: ``kp-throw-t``).

    One tag instead of the eight nodes a form repeated: a card holds up to a dozen forms and is
    rendered for every audience on every change (issue 21)."""
    return mark_safe(_hidden(context, key_parts, fields))


def _hidden(context: template.Context, key_parts: tuple[Any, ...], fields: dict[str, Any]) -> str:
    if "key" in fields and key_parts:
        fields["key"] = "-".join(str(p) for p in (fields["key"], *key_parts))
    token = context.get("csrf_token")
    # a push's mark (combat.replies) gives the same input every time: not formatted again
    out = [(_MARKED_INPUT if token == MARK else _CSRF.render(context)) if token else ""]
    if context.get("from_phone"):
        out.append(_FROM_PHONE)
    out.extend(
        f'<input type="hidden" name="{name}" value="{escaped(value)}">'
        for name, value in fields.items()
    )
    return "".join(out)


@register.simple_tag(takes_context=True)
def throw_forms(
    context: template.Context, chosen: str, url: Any, target: Any, side: Any, token: Any, kp: Any
) -> SafeString:
    """A side's four throw forms (``_card.html``), each as ``{% hidden_fields "throw" t
    action="throw" side=side token=token key=kp throw=t %}`` in its form: written out here, as
    the template's loop wrote them, for they are the bulk of an open card, and a side's open
    card is rendered on every step of its challenge (issue 21)."""
    url, target, t_side = escaped(url), escaped(target), side
    out = []
    for t, label, classes in throw_buttons(chosen):
        hidden = _hidden(
            context,
            ("throw", t),
            {"action": "throw", "side": t_side, "token": token, "key": kp, "throw": t},
        )
        out.append(
            f'\n    <form method="post" action="{url}" hx-post="{url}" hx-target="{target}"'
            f' hx-swap="outerHTML">\n      {hidden}\n      <button type="submit"'
            f' class="{escaped(classes)}" name="throw" value="{escaped(t)}">'
            f"{escaped(label)}</button>\n    </form>\n    "
        )
    return mark_safe("".join(out))
