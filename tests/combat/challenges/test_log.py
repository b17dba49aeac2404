"""The outcome of a challenge is in the scene log, as lines of its own: who won and the
effect in words for everyone (never naming a hidden NPC), what the sheets lose for the
players concerned."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat.challenges.storyteller import challenge_st
from combat.models import SceneLogEntry
from combat.selectors import log_for_player, log_for_storyteller
from tests.combat.challenges.test_mob import _brute
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _outcome(t) -> list[SceneLogEntry]:
    return [e for e in log_for_storyteller(t.scene) if e.data.get("outcome")]


@pytest.mark.rules("C3")
def test_the_outcome_is_a_public_line_and_the_losses_a_line_for_the_players_concerned(classic):
    t = classic
    other_user, _brute_part = _brute(t)  # a third player in the scene
    ch = t.start(category="physical", bid="Strong", effect="I shove her aside")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("accept", ch, t.d_user, side="defender")
    public, private = _outcome(t)
    assert public.text == "Outcome of Marcus vs Sophia: Marcus wins — I shove her aside"
    assert public.public
    assert private.text == "Outcome, for the players concerned: Sophia loses Tough"
    assert not private.public
    both = {t.a.character_id, t.d.character_id}
    assert set(private.characters.values_list("pk", flat=True)) == both
    assert public.seq == private.seq == t.refresh().scene.seq  # the step's own change
    # the step's line comes first, then the outcome's
    step = [e for e in log_for_storyteller(t.scene) if e.seq == public.seq]
    assert step[0].text.startswith("Sophia takes the result")
    # who reads what: the sides both lines, another player the public one only
    for user in (t.a_user, t.d_user):
        texts = [e.text for e in log_for_player(t.scene, user)]
        assert public.text in texts and private.text in texts
    texts = [e.text for e in log_for_player(t.scene, other_user)]
    assert public.text in texts and private.text not in texts
    # the phones' public part says who won and the effect, not what was lost
    phone = client_for(other_user).get(reverse("scene_phone", args=[t.scene.pk]))
    page = phone.content.decode()
    assert "Marcus wins — I shove her aside" in page
    assert "loses Tough" not in page
    board = client_for(t.st).get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    assert public.text in board and private.text in board


@pytest.mark.rules("B3")
def test_damage_is_in_the_outcome_for_the_players_concerned(bns):
    t = bns
    ch = t.start(attribute="Physical", skill="Melee", attack=True, effect="a bat to the ribs")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", attribute="Physical", skill="Dodge")
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("accept", ch, t.d_user, side="defender")
    public, private = _outcome(t)
    assert public.public and "Delilah wins — a bat to the ribs" in public.text
    assert private.text == "Outcome, for the players concerned: Melvin takes 1 damage (B3)"
    assert not private.public


def test_an_outcome_that_would_name_a_hidden_npc_is_not_public(classic):
    t = classic
    t.lost_to_a_hidden_npc()
    lines = _outcome(t)
    # Marcus reads what befell him, from an unseen attacker: never the hidden NPC's name
    assert lines and "An unseen attacker wins — a stab" in lines[0].text
    assert not any(e.public for e in lines)
    mine = [e.text for e in log_for_player(t.scene, t.a_user)]
    assert lines[0].text in mine and not [line for line in mine if "Lurker" in line]


def test_a_relent_and_a_storytellers_winner_are_in_the_log_too(classic):
    t = classic
    ch = t.start(category="social", bid="Intimidating", effect="she leaves")
    t.do("answer", ch, t.d_user, side="defender", answer="relent")
    (public,) = _outcome(t)  # nobody loses a trait: no line for the sheets
    assert public.text == "Outcome of Marcus vs Sophia: Marcus wins by relent — she leaves"
    ch = t.start(category="physical", bid="Strong")
    t.refresh()
    challenge_st(scene=t.scene, challenge=t.ch(ch), by=t.st, action="winner", side="defender")
    public, private = _outcome(t)[1:]
    assert public.text == "Outcome of Marcus vs Sophia: Sophia wins by storyteller"
    assert private.text == "Outcome, for the players concerned: Marcus loses Strong"
