"""A finished card's data is built once per process (combat/challenges/finished.py), and what
is kept is always what a fresh build gives: a write after the end (a void), a rename, another
viewer builds anew; nothing a viewer's card holds reaches another viewer; an open card is never
kept."""

from __future__ import annotations

from typing import Any

import pytest

from combat import fragments
from combat.challenges import finished, selectors
from combat.challenges.storyteller import challenge_st
from combat.models import Participant
from combat.templatetags import finished_cards

pytestmark = pytest.mark.django_db


def _forget() -> None:
    finished.cards.clear()
    finished_cards.clear()


def _data(card: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in card.items() if k != "ch"}


def _fresh(t, ch, viewer: str) -> dict[str, Any]:
    _forget()
    return _data(selectors.card(t.ch(ch), viewer))


def test_a_finished_card_is_built_once_per_viewer_and_equals_a_fresh_build(classic):
    t = classic
    ch = t.finished()
    _forget()
    before = dict(finished.cards.stats)
    row = t.ch(ch)
    first = selectors.card(row, "attacker")
    again = selectors.card(t.ch(ch), "attacker")
    assert finished.cards.stats["misses"] == before["misses"] + 1
    assert finished.cards.stats["hits"] == before["hits"] + 1
    assert first["ch"] is row and again["ch"] is not row  # each caller's own row
    assert _data(first) == _data(again) == _fresh(t, ch, "attacker")
    for viewer in ("defender", "st", "public"):
        assert selectors.card(t.ch(ch), viewer)["viewer"] == viewer


def test_a_void_after_the_end_is_built_anew(classic):
    """A write after the end moves the step: the kept card is not served (the key's step)."""
    t = classic
    ch = t.finished()
    users = [t.a_user.pk, t.d_user.pk]
    kept = selectors.card(t.ch(ch), "defender")
    assert kept["status"] == "Over"
    fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)  # warm
    challenge_st(scene=t.refresh().scene, challenge=t.ch(ch), by=t.st, action="void", text="oops")
    voided = selectors.card(t.ch(ch), "defender")
    assert voided["status"] == "Voided"
    assert _data(voided) == _fresh(t, ch, "defender")
    pushed = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    for html in (*pushed.private.values(), pushed.storytellers):
        assert "Voided: oops" in html and "· voided</span>" in html
    _forget()
    assert pushed == fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert "Voided: oops" in t.phone(t.d_user) and "Voided: oops" in t.board()


def test_a_rename_is_built_anew(classic):
    t = classic
    ch = t.finished()
    selectors.card(t.ch(ch), "defender")
    Participant.objects.filter(pk=t.a.pk).update(name="Marcus the Bold")
    renamed = selectors.card(t.ch(ch), "defender")
    assert renamed["names"]["attacker"] == "Marcus the Bold"
    assert _data(renamed) == _fresh(t, ch, "defender")


def test_a_hidden_npcs_name_never_crosses_from_the_board_to_a_phone(classic):
    t = classic
    ch = t.lost_to_a_hidden_npc()
    _forget()
    assert selectors.card(t.ch(ch), "st")["names"]["attacker"] == "Lurker"  # the board first
    mine = selectors.card(t.ch(ch), "defender")
    assert mine["names"]["attacker"] == "An unseen attacker"
    assert "Lurker" not in repr(_data(mine))
    out = fragments.scene_change_fragments(
        t.refresh().scene.pk, private_user_ids=[t.a_user.pk, t.d_user.pk]
    )
    assert "Lurker" in out.storytellers
    assert "Lurker" not in out.players and "An unseen attacker" in out.private[t.a_user.pk]
    assert not [html for html in out.private.values() if "Lurker" in html]


def test_a_sides_card_never_goes_to_the_other_side_or_the_public_part(classic):
    t = classic
    ch = t.finished()
    _forget()
    users = [t.a_user.pk, t.d_user.pk]
    warm = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    assert "you are the attacker" in warm.private[t.a_user.pk]
    assert "you are the defender" in warm.private[t.d_user.pk]
    assert "you are the attacker" not in warm.private[t.d_user.pk]
    assert "you are the defender" not in warm.private[t.a_user.pk]
    assert "you are the" not in warm.players and "you are the" not in warm.storytellers
    again = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert finished.cards.stats["hits"] > 0
    _forget()
    cold = fragments.scene_change_fragments(t.scene.pk, private_user_ids=users)
    assert warm == again == cold
    assert selectors.card(t.ch(ch), "attacker")["viewer"] == "attacker"


def test_an_open_card_is_never_kept(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    before = dict(finished.cards.stats)
    for viewer in ("attacker", "defender", "st", "public"):
        selectors.card(t.ch(ch), viewer)
    assert finished.cards.stats == before
    assert finished.key(t.ch(ch), "attacker") is None
