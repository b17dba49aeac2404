"""A start form is rendered once for what it offers (combat/templatetags/start_forms.py), and
what is kept is always what a fresh rendering shows: a trait spent, a challenge started, the
people it may target render anew; a page's form carries its request's token, a push's none."""

from __future__ import annotations

import re
from functools import partial

import pytest

from characters.models import Character
from characters.services import game_night_open, ledger_damage, ledger_spend
from combat import fragments
from combat import services as scenes
from combat.challenges import sheets, start_form
from combat.models import Scene
from combat.templatetags import start_forms
from tests.factories import PowerFactory

pytestmark = pytest.mark.django_db


def _forms(html: str) -> list[str]:
    forms = r'<details class="cc-start".*?</form>\s*</details>|<p class="cc-start .*?</p>'
    return re.findall(forms, html, flags=re.S)


def _phone_form(t, user) -> str:
    # the scene's row as a change's renderings read it (with its chronicle)
    (form,) = _forms(fragments.private_state(fragments.load(t.scene.pk), user))
    return form


def _fresh(render):
    start_forms.clear()
    start_form.clear()
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


def test_what_a_form_offers_is_read_once_while_the_sheet_stays(classic, monkeypatch):
    t = classic
    first = _phone_form(t, t.a_user)
    offers = []
    real = start_form._offer
    monkeypatch.setattr(start_form, "_offer", lambda p, s: offers.append(p.pk) or real(p, s))
    assert _phone_form(t, t.a_user) == first  # another change's rendering: the sheet as it was
    assert offers == []
    character = Character.objects.get(pk=t.a.character_id)
    ledger_spend(character=character, kind="willpower_spent", by=t.st, reason="test")
    assert _phone_form(t, t.a_user) == _fresh(lambda: _phone_form(t, t.a_user))
    assert offers == [t.a.pk, t.a.pk]  # its sheet's new version: offered anew (and afresh)


def test_each_write_of_the_sheet_shows_in_the_form_at_once(werewolf):
    """What a form offers is kept under the sheet's version: a trait lost (W7's regain), a
    row of the sheet (a power), a new night, a full track (C7: no form) each show at once, as
    a fresh rendering shows them."""
    t = werewolf
    character = Character.objects.get(pk=t.a.character_id)
    lose = partial(ledger_spend, character=character, kind="trait_lost", by=t.st, reason="test")
    (category, name), *_ = [(c, n) for c, traits in t.now(t.a)["traits"].items() for n in traits]
    writes = [
        lambda: lose(subject=name, category=category),
        lambda: PowerFactory(character=character, name="Celerity"),
        lambda: game_night_open(chronicle=t.scene.chronicle, by=t.st),
        lambda: ledger_damage(
            character=character, by=t.st, damage_type="aggravated", amount=99, empty_boxes=left()
        ),
    ]

    def left() -> int:
        now = t.now(t.a)
        return now["health"]["boxes"] - now["damage"]

    shown = [_phone_form(t, t.a_user)]
    for write in writes:
        write()
        shown.append(_phone_form(t, t.a_user))
        assert shown[-1] != shown[-2]
        assert shown[-1] == _fresh(lambda: _phone_form(t, t.a_user))


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


def test_a_change_whose_forms_are_kept_copies_no_sheet_for_them(classic, monkeypatch):
    """Two players' prompts rendered for one change: their sheets are read in one batch for
    their start forms, unless what the forms offer is kept at their sheets' keys."""
    t = classic
    users = [t.a_user.pk, t.d_user.pk]

    def pieces() -> list[str]:
        parts = fragments.scene_change_parts(
            t.scene.pk, private_user_ids=users, players=False, board=False, own_parts=False
        )
        return [html for _, _, html in parts]

    first = pieces()
    read = []
    real = sheets.sheets_now

    def sheets_now(ids):
        ids = list(ids)
        read.extend(ids)
        return real(ids)

    monkeypatch.setattr(sheets, "sheets_now", sheets_now)
    assert pieces() == first
    assert read == []
    assert _fresh(pieces) == first
    assert read[:2] == [t.a.character_id, t.d.character_id]  # read afresh: in one batch


def test_a_kept_offers_form_is_keyed_by_the_offers_key_not_its_values(classic, monkeypatch):
    """A form for an offer kept at its sheet's key is kept under that key: its bids, abilities
    and the rest are not spelt out on every change (a fresh offer's are)."""
    t = classic
    first = _phone_form(t, t.a_user)
    spelt = []
    real = start_forms._OFFERED
    monkeypatch.setattr(start_forms, "_OFFERED", _Spied(real, spelt))
    assert _phone_form(t, t.a_user) == first
    assert spelt == []  # the kept offer's key, not its values
    start_form.clear()  # no offer kept: offered afresh, its form keyed by its values
    monkeypatch.setattr(start_form, "_offer_key", lambda p, s: None)
    assert _phone_form(t, t.a_user) == first
    assert spelt


class _Spied(tuple):
    """The names of the values a form's key spells, noting each time they are spelt."""

    def __new__(cls, names, seen):
        made = super().__new__(cls, names)
        made.seen = seen
        return made

    def __iter__(self):
        self.seen.append(True)
        return super().__iter__()
