"""An open challenge's card on the board (and its public card) is rendered once per step, not
on every change of its scene (combat/templatetags/finished_cards.py, ``_open_parts``): a
shared scene's board holds every pair's open card, and one tap changes one of them. What is
kept is always what a fresh rendering shows, and each part of the key is proved here: drop
one and its test fails."""

from __future__ import annotations

import re
import zoneinfo

import pytest
from django.template import Context
from django.utils import timezone

from combat import fragments
from combat.challenges import selectors
from combat.models import Participant
from combat.templatetags import board_runs, finished_cards
from combat.templatetags.finished_cards import card_key

pytestmark = pytest.mark.django_db


def _board_card(t, ch) -> dict:
    (card,) = [c for c in selectors.board_card_list(t.refresh().scene) if c["ch"].pk == ch.pk]
    return card


def _key(t, ch, label: str = "board", **extra) -> object:
    return card_key(Context({"c": _board_card(t, ch), "scene": t.scene, **extra}), label)


def _board(t) -> str:
    return fragments.board_regions(t.refresh().scene, ("challenges",))


def _fresh_board(t) -> str:
    finished_cards.clear()
    return _board(t)


def test_an_open_board_card_is_rendered_once_a_step_and_equals_a_fresh_rendering(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")  # waits on the answer, with its timer
    assert t.ch(ch).is_open and t.ch(ch).deadline is not None
    first = _fresh_board(t)
    hits = board_runs.stats["runs"]["hits"]
    again = _board(t)
    assert board_runs.stats["runs"]["hits"] == hits + 1  # the board's item, kept whole
    assert again == first == _fresh_board(t)
    # every step moves the row's step: the board shows it, as a fresh rendering does
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    stepped = _board(t)
    assert stepped != first and stepped == _fresh_board(t)
    t.do("throw", ch, t.a_user, side="attacker", throw="rock")  # a lock-in, sealed
    locked = _board(t)
    assert "locked in" in locked and locked == _fresh_board(t)


def test_a_sides_open_card_is_never_kept(classic):
    """A side's card reads its sheet for its moves, and shows its own sealed throw: even
    one with no move left (the leader waiting on the loser to take the result)."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    leader = selectors.card(t.ch(ch), "attacker")
    assert t.ch(ch).is_open and not leader["moves"]
    for viewer in ("attacker", "defender"):
        c = selectors.card(t.ch(ch), viewer)
        assert card_key(Context({"c": c, "scene": t.scene}), "prompt") is None
        assert card_key(Context({"c": c, "scene": t.scene}), "") is None


def test_an_open_card_the_storyteller_plays_a_side_of_is_never_kept(classic):
    t = classic
    from combat import services as scenes

    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Guard", pools={"physical": 6})
    ch = t.start(attacker=npc, defender=t.a, by=t.st, category="physical", bid="Physical")
    assert _board_card(t, ch)["st_sides"]
    assert _key(t, ch) is None
    assert _key(t, ch, label="") is not None  # its own card, inside, is the row's


def test_the_key_holds_the_step(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    before = _key(t, ch)
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert _key(t, ch) != before


def test_the_key_holds_the_sides_as_players_read_them(classic):
    """A reveal changes no ``names`` the storyteller's card shows, but the words an announced
    retest or a result by hand are said in (``reads.name_of``: a hidden NPC unseen)."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    before = _key(t, ch)
    Participant.objects.filter(pk=t.d.pk).update(hidden=True)
    assert _key(t, ch) != before
    Participant.objects.filter(pk=t.d.pk).update(hidden=False, name="Sophia the Bold")
    renamed = _key(t, ch)
    assert renamed != before
    assert "Sophia the Bold" in _board(t) and _board(t) == _fresh_board(t)


def test_the_key_holds_the_storytellers_calls(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    card = _board_card(t, ch)
    key = card_key(Context({"c": card, "scene": t.scene}), "board")
    for call, other in (("st_force", not card["st_force"]), ("st_surprised", "other")):
        changed = {**card, call: other}
        assert card_key(Context({"c": changed, "scene": t.scene}), "board") != key


def test_the_key_holds_the_zone_a_timer_is_written_in(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    here = _key(t, ch, label="")
    with timezone.override(zoneinfo.ZoneInfo("Asia/Tokyo")):
        assert _key(t, ch, label="") != here
        tokyo = _board(t)
        assert tokyo == _fresh_board(t)
    assert _board(t) != tokyo


def test_the_key_holds_where_a_form_came_from(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    assert _key(t, ch, from_phone=True) != _key(t, ch)


def test_a_shared_boards_pushes_equal_a_fresh_rendering_with_the_memo_warm(classic):
    t = classic
    from combat import services as scenes

    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6})
    t.start(attacker=npc, defender=t.a, by=t.st, category="physical", bid="Physical")
    users = [t.a_user.pk, t.d_user.pk]
    warm = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    again = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    finished_cards.clear()
    cold = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert warm == again == cold


def test_an_open_board_items_forms_carry_each_pages_token_and_a_push_none(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    pushed = _fresh_board(t)
    assert f"st{ch.pk}-" in pushed and "csrfmiddlewaretoken" not in pushed
    pages = [t.board(), t.board()]
    assert _board(t) == pushed  # kept with the pages' renderings: still no token
    tokens = [set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', p)) for p in pages]
    assert all(len(found) == 1 for found in tokens) and tokens[0] != tokens[1]
    calls = rf'<form[^>]*action="[^"]*/challenges/{ch.pk}/st/"[^>]*>.*?</form>'
    for page, (token,) in zip(pages, tokens, strict=True):
        forms = re.findall(calls, page, flags=re.S)
        assert len(forms) > 2 and all(f'value="{token}"' in form for form in forms)
