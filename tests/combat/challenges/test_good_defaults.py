"""Issue 19, good defaults: the answer form comes with what the defender most likely uses
already picked (the weapon it carries for a physical challenge, the attribute of the
challenge's category, the ability the attacker's bid named), so one tap answers."""

from __future__ import annotations

import re

import pytest

from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db


def _answer_form(html: str) -> str:
    return re.search(r'<form [^>]*class="cc-answer".*?</form>', html, re.S).group(0)


def _selected(form: str, name: str) -> str:
    """The option a select starts on: the one marked selected, else its first."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', form, re.S).group(1)
    chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select)
    return chosen.group(1) if chosen else re.search(r'<option value="([^"]*)"', select).group(1)


def _weapon(t, participant, name: str) -> str:
    from characters.models import Equipment

    return str(Equipment.objects.get(character_id=participant.character_id, name=name).pk)


def test_bns_the_answer_starts_on_the_category_the_named_skill_and_the_carried_weapon():
    """B1: Melvin attacks with Physical + Melee; Delilah's answer starts on Physical, Melee
    and her first weapon (it started on Mental, no skill, no weapon)."""
    t = make_table("met_bns", ("Melvin", "Delilah"))
    ch = t.start(attribute="Physical", skill="Melee", attack=True)
    assert t.ch(ch).category == "physical"
    form = _answer_form(t.phone(t.d_user))
    assert _selected(form, "attribute") == "Physical"
    assert _selected(form, "skill") == "Melee"
    assert _selected(form, "weapon") == _weapon(t, t.d, "Baseball bat")


def test_werewolf_a_physical_answer_starts_on_the_weapon_a_social_one_on_none():
    t = make_table("met_werewolf", ("Cody", "Janet"))
    ch = t.start(category="physical", bid="Brawny")
    assert _selected(_answer_form(t.phone(t.d_user)), "weapon") == _weapon(t, t.d, "Sword")
    t.do("answer", ch, t.d_user, side="defender", answer="relent")
    t.start(category="social", bid="Impressive")
    assert _selected(_answer_form(t.phone(t.d_user)), "weapon") == ""


def test_classic_the_answer_starts_on_no_ability_the_defender_lacks(classic):
    """C8: Marcus names Brawl; Sophia has no Brawl: her ability starts on none."""
    t = classic
    t.start(category="physical", bid="Strong", ability="Brawl")
    assert _selected(_answer_form(t.phone(t.d_user)), "ability") == ""
