"""A side's moves on its open card, written out in Python: ``{% side_moves %}…{% endside_moves %}``.

A side's open card can be kept by nothing (it reads the side's sheet: blood left, traits to
bid, and every write moves its ``step``), so each side's card is rendered on every step of
its challenge, and the moves block (its forms: blood, throws, a result by hand, a negative
trait, retests, take the result, relent, the odds, calling the storyteller) was half of it:
a hundred template nodes, most of them resolving a variable. The tag writes the same html
from the same card data, byte for byte (``tests/combat/challenges/test_card_moves.py``
renders every card state the challenge tests reach both ways and compares); its body, the
template's own block, still renders the moves it does not write (:data:`ELSEWHERE`: the
defender's answer, a W8 choice, a mob's drop out, a cancel, a declaration) and anything
that is not a side's card.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import template
from django.template.base import render_value_in_context

from combat.templatetags.challenges import _hidden, escaped, move_key, throw_forms, trait_options
from combat.templatetags.kept_urls import kept_url

register = template.Library()

# The moves the body (the template) renders: written out here they would be code no tap of
# most challenges runs (a mob, W8, Werewolf's cancel, declarations, the answer form).
ELSEWHERE = ("answer", "choose", "drop_out", "cancel", "declare")
#: Set in tests: called with (written, the body's rendering, the card) on each written block.
check: Callable[[str, str, dict[str, Any]], None] | None = None


def _at(data: Any, name: str) -> Any:
    """``data.name`` as a template reads it from card data (a dict, an ``Offers``): a key
    missing from a plain dict is the empty string (``string_if_invalid``)."""
    try:
        return data[name]
    except (KeyError, TypeError):
        return ""


def _none_if_missing(data: Any, name: str) -> Any:
    """``data.name`` as ``{% if data.name is not None %}`` reads it: a missing one is None."""
    try:
        return data[name]
    except (KeyError, TypeError):
        return None


class SideMovesNode(template.Node):
    def __init__(self, nodelist: template.NodeList) -> None:
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        side = context.get("side")
        if not side:
            return ""
        c = context.get("c")
        m = c.get("moves") if isinstance(c, dict) else None
        ch = context.get("ch")
        if not isinstance(m, dict) or ch is None or any(m.get(name) for name in ELSEWHERE):
            return self.nodelist.render(context)
        html = moves_html(context, c, ch, m, side)
        if check is not None:
            check(html, self.nodelist.render(context), c)
        return html


def _show(value: Any, context: template.Context) -> str:
    if type(value) is str:
        return escaped(value)
    return render_value_in_context(value, context)


def moves_html(context: template.Context, c: dict[str, Any], ch: Any, m: Any, side: Any) -> str:
    """What the body renders for a side's card whose moves are none of :data:`ELSEWHERE`."""
    kp = move_key(ch, side)
    url, target, st_url = context.get("url"), context.get("target"), context.get("st_url")
    u, t = _show(url, context), _show(target, context)
    token = getattr(ch, "token", "")
    form = f'<form method="post" action="{u}" hx-post="{u}" hx-target="{t}" hx-swap="outerHTML"'

    def hidden(*parts: Any, **fields: Any) -> str:
        return _hidden(context, parts, fields)

    out = ["\n  "]
    my_throw = _at(c, "my_throw")
    if my_throw:
        out.append(
            f'<p class="cc-mine">Your throw: <b>{_show(my_throw, context)}</b>'
            " (you may change it until the other side locks in)</p>"
        )
    out.append("\n  ")
    my_total = _none_if_missing(c, "my_total")
    if my_total is not None:
        out.append(
            f'<p class="cc-mine">Your declared total: <b>{_show(my_total, context)}</b>'
            " (sealed)</p>"
        )
    out.append("\n  \n  \n  \n  ")  # the answer, a W8 choice, a drop out: none (ELSEWHERE)
    blood = m.get("blood")
    if blood:
        kept = _at(blood, "kept")
        lasting = f", {_show(kept, context)} still lasting" if kept else ""
        out.append(
            f'\n  {form} class="row cc-blood">\n'
            f"    {hidden('blood', action='blood', side=side, token=token, key=kp)}\n"
            f"    <label>Blood for physical traits (C5: {_show(_at(blood, 'spent'), context)} of"
            f" {_show(_at(blood, 'cap'), context)} this challenge{lasting},"
            f" {_show(_at(blood, 'left'), context)} blood left)"
            ' <input type="number" name="amount" min="1"'
            f' max="{_show(_at(blood, "most"), context)}"'
            ' value="1" inputmode="numeric"></label>\n'
            '    <button type="submit">Spend blood</button>\n  </form>\n  '
        )
    out.append("\n  ")
    if m.get("throw"):
        by_hand = _at(c, "by_hand")
        out.append(
            '\n  <div class="cc-throws" role="group" aria-label="Throw">\n    '
            f"{throw_forms(context, my_throw, url, target, side, _at(c, 'round'), kp)}"
            "\n  </div>\n  "
        )
        if by_hand and _at(by_hand, "side") != side:
            fields = hidden(
                "hand-ok",
                action="by_hand",
                side=side,
                token=token,
                key=kp,
                result=_at(by_hand, "result"),
            )
            out.append(
                f'\n  {form} class="row cc-byhand-confirm">\n'
                f"    {fields}\n"
                '    <button type="submit" class="primary">Confirm by hand:'
                f" {_show(_at(by_hand, 'words'), context)}</button>\n  </form>\n  "
            )
        names = _at(c, "names")
        out.append(
            '\n  <details class="cc-byhand"><summary>We threw by hand</summary>\n'
            f'    {form} class="row">\n'
            f"      {hidden('hand', action='by_hand', side=side, token=token, key=kp)}\n"
            '      <select name="result" aria-label="Result by hand"><option value="attacker">'
            f"{_show(_at(names, 'attacker'), context)} won</option>"
            f'<option value="defender">{_show(_at(names, "defender"), context)} won</option>'
            '<option value="draw">Draw</option></select>\n'
            '      <button type="submit">Record</button>\n    </form>\n  </details>\n  '
        )
    out.append("\n  ")
    if m.get("negative"):
        out.append(
            '\n  <details class="cc-negative"><summary>Name a negative trait of theirs (C5, W8)'
            f'</summary>\n    {form} class="row">\n'
            f"      {hidden('negative', action='negative', side=side, token=token, key=kp)}\n"
            '      <input name="trait" maxlength="80" placeholder="Clumsy" aria-label="Negative'
            ' trait" autocomplete="off"><button type="submit">Name it</button>\n'
            "    </form>\n  </details>\n  "
        )
    out.append("\n  \n  \n  ")  # a cancel, a declaration: none (ELSEWHERE)
    retests = m.get("retests")
    if retests:
        out.append('\n  <div class="cc-retests">\n    ')
        for r in retests:
            out.append(_retest(context, r, form, side, token, kp))
        out.append("\n  </div>\n  ")
    out.append("\n  ")
    if m.get("accept"):
        out.append(
            f'\n  {form} class="row cc-accept">\n'
            f"    {hidden('accept', action='accept', side=side, token=token, key=kp)}\n"
            '    <button type="submit" class="primary">Take the result</button>\n  </form>\n  '
        )
    out.append("\n  ")
    if m.get("relent"):
        out.append(
            f'\n  {form} class="row">\n'
            f"    {hidden('relent', action='relent', side=side, token=token, key=kp)}\n"
            '    <button type="submit" class="quiet danger" data-confirm="Tap again to relent">'
            "Relent</button>\n  </form>\n  "
        )
    out.append("\n  ")
    if ch.is_open and ch.status == "live" and _at(c, "phase") != "over":
        odds = escaped(kept_url("challenge_odds", ch.scene_id, ch.pk))
        s, pk = _show(side, context), _show(ch.pk, context)
        out.append(
            f'\n  <a class="small odds-link" hx-get="{odds}?side={s}" hx-target="#odds-{pk}-{s}"'
            f' href="#">See the odds</a> <span id="odds-{pk}-{s}" class="small"></span>\n  '
        )
    out.append("\n  ")
    if ch.is_open and url != st_url:
        out.append(
            '\n  \n  <details class="cc-call-box"><summary>Call the storyteller</summary>\n'
            f'  {form} class="row cc-call">\n'
            f"    {hidden('call', action='dispute', side=side, key=kp)}\n"
            '    <input name="text" maxlength="200" placeholder="Why (optional)" aria-label="Why'
            ' you call the storyteller"><button type="submit" class="quiet">Call the storyteller'
            "</button>\n  </form>\n  </details>\n  "
        )
    out.append("\n  ")
    return "".join(out)


def _retest(context: template.Context, r: Any, form: str, side: Any, token: Any, kp: str) -> str:
    kind = _at(r, "kind")
    k = _show(kind, context)
    abilities, powers, traits = _at(r, "abilities"), _at(r, "powers"), _at(r, "traits")
    most = _none_if_missing(r, "most")
    hidden = _hidden(
        context,
        ("retest", kind),
        {"action": "retest", "side": side, "token": token, "kind": kind, "key": kp},
    )
    out = [f'\n    {form} class="row cc-retest retest-{k}">\n      {hidden}\n      ']
    if abilities:
        options = trait_options(abilities, _none_if_missing(r, "default"))
        out.append(f'<select name="ability" aria-label="Ability">{options}</select>')
    out.append("\n      ")
    if powers:
        options = "".join(f"<option>{_show(p, context)}</option>" for p in powers)
        out.append(f'<select name="power" aria-label="Power">{options}</select>')
    out.append("\n      ")
    if most is not None:
        n = _show(most, context)
        out.append(
            f'<input type="number" name="declared" min="0" max="{n}" value="{n}"'
            ' aria-label="Announced total (hidden from the other side)">'
        )
    out.append("\n      ")
    if traits:
        out.append(
            '<label>Trait to risk (W11) <select name="trait">'
            f"{trait_options(traits)}</select></label>"
        )
    out.append(
        f'\n      <button type="submit">{_show(_at(r, "label"), context)}</button>'
        f' <span class="small muted">{_show(_at(r, "cost"), context)} ·'
        f" {_show(_at(r, 'rule'), context)}</span>\n    </form>\n    "
    )
    return "".join(out)


@register.tag("side_moves")
def side_moves(parser: Any, token: Any) -> SideMovesNode:
    """``{% side_moves %}…{% endside_moves %}`` around ``_card.html``'s moves block: see the
    module."""
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("side_moves takes no argument")
    nodelist = parser.parse(("endside_moves",))
    parser.delete_first_token()
    return SideMovesNode(nodelist)
