"""A step's sheet change goes to the board with the step's own change (live.one_commit): one
board rendering and one message for the commit, holding the regions that show sheets; a scene
whose sheets alone changed gets them on their own once the commit's pushes are out."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat import fragments, live
from combat import services as scenes
from combat.models import Challenge, Presence
from tests.combat.challenges.conftest import token_for
from tests.combat.challenges.test_regions import ROOTS
from tests.conftest import client_for

HX = {"HTTP_HX_REQUEST": "true"}
STEP = {"challenges", "clock", "log", "people"}  # a challenge step's own regions
# where a sheet shows on a board with no fight and no chase (fragments.sheet_regions)
SHEETS = {"people", "challenges"}


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: out.append((group, html)))
    return out


def _regions(html: str) -> set[str]:
    return {name for name, root in ROOTS.items() if root in html}


def _to_the_loss(t) -> Challenge:
    """Marcus's Strong against Sophia's Tough, thrown: Sophia lost and is to take it."""
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    return t.throw(ch, "rock", "scissors")


def _accept(t, ch: Challenge):
    data = {"action": "accept", "side": "defender", "token": token_for(ch, "accept")}
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    return client_for(t.d_user).post(url, data, **HX)


@pytest.mark.django_db(transaction=True)
def test_a_cost_goes_to_the_board_with_its_step_once(classic, sent):
    t = classic
    Presence.objects.create(scene=t.scene, user=t.st, channel_name="tablet.1")
    ch = _to_the_loss(t)
    before = t.now(t.d)["traits"]["physical"]["Tough"]
    sent.clear()
    assert _accept(t, ch).status_code == 200
    assert t.now(t.d)["traits"]["physical"]["Tough"] == before - 1  # the sheet changed
    boards = [html for group, html in sent if group == live.storytellers_group(t.scene.pk)]
    assert len(boards) == 1, "one board message for the commit"
    (board,) = boards
    scene = fragments.load(t.scene.pk)
    assert set(fragments.sheet_regions(scene)) == SHEETS
    assert _regions(board) == STEP | SHEETS
    assert board == fragments.board_regions(scene, STEP | SHEETS)
    # the loser's phone gets its whole part, once: the sheet's push
    mine = [html for group, html in sent if group == live.player_group(t.scene.pk, t.d_user.pk)]
    assert len(mine) == 1 and 'id="scene-private"' in mine[0]


@pytest.mark.django_db(transaction=True)
def test_a_scene_whose_sheets_alone_changed_gets_them_after_the_commit(classic, sent):
    t = classic
    other = scenes.scene_open(chronicle=t.scene.chronicle, by=t.st, name="Elsewhere")
    scenes.scene_join(code=other.join_code, user=t.d_user, character=t.d.character)
    for scene in (t.scene, other):
        Presence.objects.create(scene=scene, user=t.st, channel_name=f"tablet.{scene.pk}")
    ch = _to_the_loss(t)
    sent.clear()
    assert _accept(t, ch).status_code == 200
    groups = [group for group, _ in sent]
    theirs = [html for group, html in sent if group == live.storytellers_group(other.pk)]
    assert len(theirs) == 1
    assert _regions(theirs[0]) == SHEETS
    assert theirs[0] == fragments.board_regions(fragments.load(other.pk), SHEETS)
    # after every push of the step's own scene
    last_own = max(i for i, g in enumerate(groups) if g.startswith(f"scene.{t.scene.pk}."))
    assert groups.index(live.storytellers_group(other.pk)) > last_own
    # that scene's phone got Sophia's sheet as it is now
    assert live.player_group(other.pk, t.d_user.pk) in groups
