"""What a card's forms post (templates/combat/challenges/_card.html, its hidden inputs built by
``{% hidden_fields %}``): the request's CSRF token on a page and none in a push, ``from=phone``
on a phone, then the move's own fields and its key, each side only its own; and what one side
threw stays off the other side's card until the reveal."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string

from combat import replies
from combat.challenges import selectors
from tests.combat.challenges.conftest import rendered_row, token_for

pytestmark = pytest.mark.django_db

THROWS = ("rock", "paper", "scissors", "random")
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def _card(t, ch, viewer: str, **extra) -> str:
    """``viewer``'s card as its phone shows it (``extra``: a page's csrf_token, from_phone),
    from the row as a rendering reads it (with the token its forms post)."""
    scene, row = rendered_row(t, ch)
    context = {"c": selectors.card(row, viewer), "scene": scene, **extra}
    return render_to_string("combat/challenges/_prompt_card.html", context)


def _forms(html: str) -> list[list[tuple[str, str]]]:
    """The hidden inputs of each form of a card, in order."""
    return [HIDDEN.findall(f) for f in re.findall(r"<form .*?</form>", html, re.S)]


def _throwing(t):
    ch = t.start(category="physical", bid="Strong")
    return t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")


def test_it_gives_each_throw_form_its_sides_fields_and_key(classic):
    t = classic
    ch = t.ch(_throwing(t))
    token = token_for(ch, "throw")
    for side in ("attacker", "defender"):
        page = _forms(_card(t, ch, side, csrf_token="tok&<", from_phone=True))
        throws = [f for f in page if ("action", "throw") in f]
        assert throws == [
            [
                ("csrfmiddlewaretoken", "tok&amp;&lt;"),
                ("from", "phone"),
                ("action", "throw"),
                ("side", side),
                ("token", token),
                ("key", f"c{ch.pk}-{ch.step}-{side}-throw-{throw}"),
                ("throw", throw),
            ]
            for throw in THROWS
        ]
        # a push carries no token of a request, and no form of another side
        pushed = _forms(_card(t, ch, side))
        assert all(f[0][0] != "csrfmiddlewaretoken" for f in pushed)
        assert [f for f in pushed if ("action", "throw") in f] == [f[2:] for f in throws]
        assert all(("side", side) in f for f in pushed if ("action", "throw") in f)
        hand = [f for f in pushed if ("key", f"c{ch.pk}-{ch.step}-{side}-hand") in f]
        assert hand == [
            [("action", "by_hand"), ("side", side), ("token", token_for(ch)), hand[0][3]]
        ]


def test_it_keeps_a_throw_off_the_other_sides_card_until_the_reveal(classic):
    t = classic
    ch = t.do("throw", _throwing(t), t.a_user, side="attacker", throw="paper")
    mine = _card(t, ch, "attacker")
    theirs = _card(t, ch, "defender")
    board = render_to_string(
        "combat/challenges/_card.html", {"c": selectors.card(t.ch(ch), "st"), "target": "#b"}
    )
    assert "Your throw: <b>paper</b>" in mine and "throw-paper chosen" in mine
    for other in (theirs, board):
        assert "Your throw" not in other and " chosen" not in other
        assert "paper" not in re.sub(r'<form .*?</form>|class="[^"]*"', "", other, flags=re.S)
    assert "locked in" in theirs


def test_it_escapes_what_it_puts_in_a_field():
    html = Template('{% load challenges %}{% hidden_fields "x" v key="k" name=name %}').render(
        Context({"v": "<b>", "name": '"><script>'})
    )
    assert html == (
        '<input type="hidden" name="key" value="k-x-&lt;b&gt;">'
        '<input type="hidden" name="name" value="&quot;&gt;&lt;script&gt;">'
    )


def test_it_keys_the_storytellers_calls_on_the_board(classic):
    t = classic
    ch = t.ch(_throwing(t))
    board = [f for f in _forms(t.board()) if f and f[0][0] == "csrfmiddlewaretoken"]
    calls = {dict(f).get("action"): f[1:] for f in board if f"st{ch.pk}-" in dict(f).get("key", "")}
    assert calls["pause"] == [
        ("action", "pause"),
        ("token", token_for(ch)),
        ("key", f"st{ch.pk}-{ch.step}-pause"),
    ]
    assert calls["void"] == [("action", "void"), ("key", f"st{ch.pk}-{ch.step}-void")]
    assert all(("from", "phone") not in f for f in board)


# The loop of _card.html's throw forms before {% throw_forms %} wrote them (issue 21).
THROW_LOOP = Template(
    "{% load challenges %}{% for t, label, classes in chosen|throw_buttons %}\n"
    '    <form method="post" action="{{ url }}" hx-post="{{ url }}" hx-target="{{ target }}"'
    ' hx-swap="outerHTML">\n'
    '      {% hidden_fields "throw" t action="throw" side=side token=token key=kp throw=t %}\n'
    '      <button type="submit" class="{{ classes }}" name="throw" value="{{ t }}">'
    "{{ label }}</button>\n    </form>\n    {% endfor %}"
)
THROW_TAG = Template("{% load challenges %}{% throw_forms chosen url target side token kp %}")


@pytest.mark.parametrize("chosen", ["", "rock", "random"])
@pytest.mark.parametrize(
    "extra",
    [{}, {"csrf_token": "tok&<", "from_phone": True}, {"csrf_token": replies.MARK}],
    ids=["push", "page", "marked push"],
)
def test_the_throw_forms_are_what_the_templates_loop_drew(chosen, extra):
    context = {
        "chosen": chosen,
        "url": "/scenes/1/challenges/2/act/?a=<b>&c",
        "target": '#challenge-prompts"',
        "side": "defender",
        "token": 17,
        "kp": "c2-5-defender",
        **extra,
    }
    drawn = THROW_TAG.render(Context(context))
    assert drawn == THROW_LOOP.render(Context(context))
    assert drawn.count("<form ") == 4 and "&lt;b&gt;&amp;c" in drawn
