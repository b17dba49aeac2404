"""A row of the board's people panel is rendered once per what it shows
(combat/templatetags/people.py): what is kept is always what a fresh rendering shows, and each
part of its key is proved here (drop one and its test fails)."""

from __future__ import annotations

import re

import pytest
from django.template import Context

from combat import board, fragments
from combat import services as scenes
from combat.models import Participant, Presence, Scene
from combat.templatetags import board_kept, people
from combat.templatetags.people import row_key

pytestmark = pytest.mark.django_db


def _panel(t) -> str:
    return fragments.board_regions(t.refresh().scene, ("people",))


def _fresh_panel(t) -> str:
    people.clear()
    return _panel(t)


def _rows(t) -> dict[int, dict]:
    return {r["participant"].pk: r for r in board.people_state(t.refresh().scene)["rows"]}


def _key(t, row: dict, **extra) -> object:
    return row_key(Context({"row": row, "scene": t.scene, **extra}))


def test_the_rows_are_rendered_once_and_equal_a_fresh_rendering(classic):
    t = classic
    t.start(category="physical", bid="Strong")  # both in the fight: health and waiting
    first = _fresh_panel(t)
    hits = board_kept.stats["hits"]
    assert _panel(t) == first == _fresh_panel(t)
    assert board_kept.stats["hits"] > hits  # the rows kept, and their list whole
    board_kept.clear()
    hits = people.stats["hits"]
    assert _panel(t) == first
    assert people.stats["hits"] > hits  # the list made again of the kept rows
    assert "health-boxes" in first and "waited-on" in first


def test_what_changes_a_row_is_shown_as_a_fresh_rendering_shows_it(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    before = _panel(t)
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")  # the wait moves
    Participant.objects.filter(pk=t.a.pk).update(name="Marcus the Bold")
    Presence.objects.create(scene=t.scene, user=t.d_user, channel_name="phone.1")
    after = _panel(t)
    assert after != before and after == _fresh_panel(t)
    assert "Marcus the Bold" in after


def test_a_pushs_rows_carry_no_token_and_a_pages_its_own(classic):
    t = classic
    pushed = _fresh_panel(t)
    assert "csrfmiddlewaretoken" not in pushed
    pages = [t.board(), t.board()]
    again = _panel(t)
    assert again == pushed  # warm with the pages' rows: still no token
    tokens = [set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', p)) for p in pages]
    assert all(len(found) == 1 for found in tokens) and tokens[0] != tokens[1]


@pytest.mark.parametrize(
    "part", ["name", "hidden", "npc", "pools", "player", "connected", "fight", "scene", "closed"]
)
def test_the_key_holds_each_part_a_row_shows(classic, part):
    t = classic
    npc = scenes.scene_add_npc(scene=t.scene, by=t.st, name="Guard", pools={"physical": 6})
    t.start(category="physical", bid="Strong")
    rows = _rows(t)
    row = rows[npc.pk if part in ("npc", "pools") else t.a.pk]
    before = _key(t, row)
    p = row["participant"]
    changed = {**row}
    scene = t.scene
    if part == "name":
        p.name = "Someone else"
    elif part == "hidden":
        p.hidden = not p.hidden
    elif part == "npc":
        p.npc = False
    elif part == "pools":
        p.quick_pools = {"physical": 7}
    elif part == "player":
        p.character.player.first_name = "Renamed"
    elif part == "connected":
        changed["connected"] = not row["connected"]
    elif part == "fight":
        changed["fight"] = {**row["fight"], "waiting": "something else"}
    elif part == "scene":
        scene = Scene(pk=scene.pk + 1000, closed_at=scene.closed_at)
    elif part == "closed":
        scene = Scene(pk=scene.pk, closed_at=scene.opened_at)
    assert row_key(Context({"row": changed, "scene": scene})) != before


def test_the_key_holds_whether_the_form_carries_a_token(classic):
    t = classic
    row = _rows(t)[t.a.pk]
    assert _key(t, row, csrf_token="a token") != _key(t, row)
