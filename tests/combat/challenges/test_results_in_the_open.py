"""Issue 19, results in the open: the card itself shows the last reveal (both throws, the
totals when they decided, who won and what each side lost), and each side's progress ("locked
in", "has declared") to the other side and the storyteller, never what was thrown or declared."""

from __future__ import annotations

import re
from html import unescape

import pytest

from combat.challenges.reads import step_token
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _card(html: str, pk: int, side: str = "") -> str:
    """The challenge's card in a page (the phone's side card, else the board's)."""
    anchor = f'id="challenge-{pk}{"-" + side if side else ""}"'
    start = html.index(anchor)
    return html[start : html.index("</article>", start)]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_it_shows_who_is_locked_in_but_never_the_throw(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    theirs = _text(_card(t.phone(t.d_user), ch.pk, "defender"))
    board = _text(_card(t.board(), ch.pk))
    for seen in (theirs, board):
        assert "Marcus" in seen and "locked in" in seen
        assert "Throws:" not in seen and "Your throw" not in seen
    assert "rock" not in board.lower()  # the board has no throw buttons: nothing says it


def test_it_shows_both_throws_the_winner_and_what_was_lost_on_the_card(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    t.do("accept", ch, t.d_user, side="defender")
    for html in (t.phone(t.a_user), t.phone(t.d_user), t.board()):
        reveal = re.search(r'<ol class="cc-reveal"[^>]*>(.*?)</ol>', html, re.S)
        assert reveal, "no reveal on the card"
        said = _text(reveal.group(1))
        assert "Marcus rock" in said and "Sophia scissors" in said
        assert "Marcus wins" in said and "Sophia loses Tough" in said


def test_it_shows_who_has_declared_a_total_but_never_the_total(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")  # C4: a draw, totals are declared
    t.do("declare", ch, t.a_user, side="attacker", total=3)
    theirs = _text(_card(t.phone(t.d_user), ch.pk, "defender"))
    board = _text(_card(t.board(), ch.pk))
    for seen in (theirs, board):
        assert "has declared" in seen, seen
        assert "declared total: 3" not in seen.lower()


def test_bug6_no_cancel_window_for_a_side_without_the_means_to_cancel(classic):
    """C8: Marcus retests with Prowess; Sophia has no Prowess, so nobody waits on her cancel
    ("Sophia may cancel — in 28 s" was shown to a side with no cancel)."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "paper")  # Marcus loses
    ch = t.do("retest", ch, t.a_user, side="attacker", kind="power", power="Potence: Prowess")
    assert "may cancel" not in t.ch(ch).timer_label
    assert "may cancel" not in t.phone(t.d_user)


def test_bug6_a_voided_card_says_neither_to_throw_nor_storyteller_called(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("dispute", ch, t.a_user, side="attacker", text="wrong target")
    ch = t.do("st", ch, t.st, action="void", text="wrong target", token=step_token(t.ch(ch)))
    card = _text(_card(t.board(), ch.pk))
    assert "Voided: wrong target" in card
    assert "to throw" not in card and "Storyteller called" not in card


def test_every_finished_challenge_of_the_night_stays_on_the_board_one_line_each(classic):
    """Issue 19: the board kept only the last three finished challenges (older ones could not
    be voided); each now folds to one line and keeps its void form."""
    t = classic
    done = []
    for _ in range(4):
        ch = t.start(category="physical", bid="Strong")
        done.append(t.do("answer", ch, t.d_user, side="defender", answer="relent"))
    board = t.board()
    for ch in done:
        assert f'id="cc-done-{ch.pk}"' in board
    assert board.count('class="row cc-void-form"') == 4


def _head(card: str) -> str:
    """The card's head line (mode · category · where it stands · who you are)."""
    head = re.search(r'<header class="cc-head">(.*?)</header>', card, re.S).group(1)
    return unescape(_text(head))


def test_bug6_a_static_test_says_it_waits_on_the_players_bid_not_the_defender(classic):
    """C11: the storyteller calls a static test of Marcus; Marcus must bid. The card said
    "Waiting for the defender's answer" (there is no defender to wait on)."""
    t = classic
    ch = t.start(by=t.st, defender=None, mode="static", category="mental", difficulty=4)
    assert t.ch(ch).options["awaiting"] == "attacker"
    for page, side in ((t.phone(t.a_user), "attacker"), (t.board(), "")):
        head = _head(_card(page, ch.pk, side))
        assert "defender" not in head.replace("you are the attacker", ""), head
        assert "Waiting for Marcus's bid" in head, head


def test_a_forming_mob_says_it_waits_on_the_mob_then_on_the_defender(classic):
    """C16: while the mob forms the defender is not asked yet (the card said it was)."""
    from tests.combat.challenges.test_mob import _brute, _mob_post

    t = classic
    brute_user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    head = _head(_card(t.phone(t.d_user), ch.pk, "defender"))
    assert "Waiting for the mob to bid (C16)" in head, head
    _mob_post(client_for(brute_user), t, ch, brute, bid="Burly", key="mob-bid-0001")
    head = _head(_card(t.phone(t.d_user), ch.pk, "defender"))
    assert "Waiting for the defender's answer" in head, head
