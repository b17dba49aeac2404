"""A start form is rendered once for what it offers (combat/templatetags/start_forms.py), and
what is kept is always what a fresh rendering shows: a trait spent, a challenge started, the
people it may target render anew; a page's form carries its request's token, a push's none."""

from __future__ import annotations

import re

import pytest

from characters.models import Character
from characters.services import ledger_spend
from combat import fragments
from combat import services as scenes
from combat.models import Scene
from combat.templatetags import start_forms

pytestmark = pytest.mark.django_db


def _forms(html: str) -> list[str]:
    return re.findall(r'<details class="cc-start".*?</form>\s*</details>', html, flags=re.S)


def _phone_form(t, user) -> str:
    (form,) = _forms(fragments.private_state(Scene.objects.get(pk=t.scene.pk), user))
    return form


def _fresh(render):
    start_forms.clear()
    return render()


def test_a_start_form_is_rendered_once_and_equals_a_fresh_rendering(classic):
    t = classic
    first = _phone_form(t, t.a_user)
    hits = start_forms.stats["hits"]
    again = _phone_form(t, t.a_user)
    assert start_forms.stats["hits"] == hits + 1
    assert first == again == _fresh(lambda: _phone_form(t, t.a_user))
    assert "Strong (2)" in first and "csrfmiddlewaretoken" not in first
    # the other player's form is their own
    assert _phone_form(t, t.d_user) != first


def test_a_trait_spent_shows_in_the_form_at_once(classic):
    t = classic
    kept = _phone_form(t, t.a_user)
    character = Character.objects.get(pk=t.a.character_id)
    ledger_spend(
        character=character, kind="trait_lost", subject="Strong", category="physical",
        amount=1, by=t.st, reason="test",
    )  # fmt: skip
    spent = _phone_form(t, t.a_user)
    assert "Strong (1)" in spent and "Strong (2)" not in spent
    assert spent == _fresh(lambda: _phone_form(t, t.a_user)) != kept


def test_a_challenge_started_gives_the_form_its_new_key(classic):
    t = classic
    kept = _phone_form(t, t.a_user)
    ch = t.start(category="physical", bid="Strong")
    started = _phone_form(t, t.a_user)
    assert f"start-{t.scene.pk}-{t.a.pk}-{ch.pk}" in started and started != kept
    assert started == _fresh(lambda: _phone_form(t, t.a_user))


def test_the_boards_npc_form_lists_who_is_in_the_scene_now(classic):
    t = classic
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Bouncer", pools={"physical": 5})

    def npc_form() -> str:
        scene = Scene.objects.get(pk=t.scene.pk)
        forms = _forms(fragments.board_regions(scene, ["challenges"]))
        (form,) = [f for f in forms if "Bouncer" in f]
        return form

    assert "Sophia" in npc_form()
    scenes.scene_remove(scene=t.refresh().scene, by=t.st, participant=t.d)
    gone = npc_form()
    assert "Sophia" not in gone and f'value="{npc.pk}"' in gone
    assert gone == _fresh(npc_form)


def _tokens(html: str) -> set[str]:
    return set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html))


def test_a_pages_form_carries_its_own_token_and_a_push_none(classic):
    t = classic
    pushed = _phone_form(t, t.a_user)
    pages = [t.phone(t.a_user), t.phone(t.a_user)]
    hits = start_forms.stats["hits"]
    pages.append(t.phone(t.a_user))
    assert start_forms.stats["hits"] > hits  # the kept form, with this request's token
    forms = [_forms(p)[0] for p in pages]
    assert [len(_tokens(f)) for f in forms] == [1, 1, 1]
    assert len(set.union(*(_tokens(f) for f in forms))) == 3
    assert _phone_form(t, t.a_user) == pushed  # no page's token reaches a push
