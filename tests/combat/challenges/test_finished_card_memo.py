"""A finished card is rendered once (combat/templatetags/finished_cards.py), and what is kept is
always what a fresh rendering shows: a write to the challenge, a rename, another viewer or
include renders anew; an open card is never kept."""

from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string

from combat import fragments
from combat.challenges import selectors
from combat.challenges.storyteller import challenge_st
from combat.models import Participant
from combat.templatetags import finished_cards

pytestmark = pytest.mark.django_db


def _card(t, ch, viewer: str, **extra) -> str:
    context = {"c": selectors.card(t.ch(ch), viewer), "scene": t.refresh().scene, **extra}
    return render_to_string("combat/challenges/_prompt_card.html", context)


def _fresh(t, ch, viewer: str, **extra) -> str:
    finished_cards.clear()
    return _card(t, ch, viewer, **extra)


def test_a_finished_card_is_rendered_once_and_equals_a_fresh_rendering(classic):
    t = classic
    ch = t.finished()
    finished_cards.clear()
    before = dict(finished_cards.stats)
    first = _card(t, ch, "attacker")
    again = _card(t, ch, "attacker")
    assert finished_cards.stats["misses"] == before["misses"] + 1
    assert finished_cards.stats["hits"] == before["hits"] + 1
    assert first == again == _fresh(t, ch, "attacker")
    assert "you are the attacker" in first
    # another viewer, another include's arguments: another rendering
    assert _card(t, ch, "defender") == _fresh(t, ch, "defender") != first
    board = render_to_string(
        "combat/challenges/_card.html",
        {"c": selectors.card(t.ch(ch), "st"), "url": "", "target": "#challenge-board", "side": ""},
    )
    assert "you are the" not in board


def test_a_write_or_a_rename_is_never_served_stale(classic):
    t = classic
    ch = t.finished()
    kept = _card(t, ch, "defender")
    Participant.objects.filter(pk=t.a.pk).update(name="Marcus the Bold")
    renamed = _card(t, ch, "defender")
    assert "Marcus the Bold" in renamed and renamed == _fresh(t, ch, "defender") != kept
    challenge_st(scene=t.refresh().scene, challenge=t.ch(ch), by=t.st, action="void", text="oops")
    voided = _card(t, ch, "defender")
    assert "Voided: oops" in voided and voided == _fresh(t, ch, "defender")


def test_an_open_card_is_never_kept(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    before = dict(finished_cards.stats)
    _card(t, ch, "defender")
    _card(t, ch, "attacker", csrf_token="x")
    assert finished_cards.stats == before


def test_the_pushes_equal_a_fresh_rendering_with_the_memo_warm(classic):
    t = classic
    t.finished()
    t.finished(loser="attacker")
    users = [t.a_user.pk, t.d_user.pk]
    warm = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    assert finished_cards.stats["hits"] > 0
    finished_cards.clear()
    cold = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert warm == cold


def _leave_forms(html: str) -> list[str]:
    return re.findall(r'<form[^>]*class="row cc-leave".*?</form>', html, flags=re.S)


def _tokens(html: str) -> set[str]:
    return set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html))


def test_a_finished_items_forms_are_kept_for_the_pushes_and_never_cross_a_request(classic):
    """Around a finished card, the phone's "put away" form (and the board's void form) is
    kept: a push's carries no CSRF token, a page's or an answer's its request's own."""
    t = classic
    ch = t.finished()
    users = [t.a_user.pk, t.d_user.pk]
    finished_cards.clear()
    pushed = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    again = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert again == pushed and finished_cards.stats["hits"] > 0
    (kept,) = _leave_forms(pushed.private[t.d_user.pk])
    assert f"leave-{ch.pk}" in kept and "csrfmiddlewaretoken" not in kept
    (page,) = _leave_forms(t.phone(t.d_user))  # after the pushes warmed the memo
    assert "csrfmiddlewaretoken" in page
    board = t.board()
    assert re.search(
        r'class="row cc-void-form">\s*<input type="hidden" name="csrfmiddlewaretoken"', board
    )
    later = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert later == pushed  # and the pages' tokens never reach a push
    # each page's forms, the kept ones too, carry that request's token and no other
    pages = [t.phone(t.d_user)]
    hits = finished_cards.stats["hits"]
    pages += [t.phone(t.d_user), t.phone(t.a_user), t.board()]
    assert finished_cards.stats["hits"] > hits  # the kept forms, each with its own token
    assert all(len(_leave_forms(p)) == 1 for p in pages[:3])
    assert [len(_tokens(p)) for p in pages] == [1, 1, 1, 1]
    assert len(set.union(*(_tokens(p) for p in pages))) == 4
