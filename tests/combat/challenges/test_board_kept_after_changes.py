"""The board's kept parts (its runs of settled challenges, people list, test form) after
the changes that move no challenge's step, and the storyteller's calls: always what a fresh
rendering shows (combat/templatetags/board_runs.py, board_kept.py)."""

from __future__ import annotations

import re
import zoneinfo

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from characters.services import game_night_open, ledger_spend
from combat import fragments
from combat import services as scenes
from combat.challenges.refusals import ChallengeError
from combat.models import Participant, Presence
from tests.conftest import forget_kept_renderings

pytestmark = pytest.mark.django_db
WHOLE = ("people", "challenges")


def _board(t) -> str:
    return fragments.board_regions(t.refresh().scene, WHOLE)


def _fresh(t) -> str:
    forget_kept_renderings()
    return _board(t)


def _same(t):
    kept = _board(t)
    fresh = _fresh(t)
    assert kept == fresh
    return kept


def test_changes_beside_the_rows_are_never_served_stale(classic):
    t = classic
    t.finished()
    live = t.start(category="physical", bid="Strong")
    assert t.ch(live).is_open
    _same(t)
    _board(t)
    # connection appears
    Presence.objects.create(scene=t.scene, user=t.a_user, channel_name="x1")
    assert "connected now" in _same(t)
    Presence.objects.filter(channel_name="x1").delete()
    _same(t)
    # player's name
    get_user_model().objects.filter(pk=t.a_user.pk).update(first_name="Zed", last_name="Q")
    assert "Zed Q" in _same(t)
    # damage on the defender (surprise) and attacker
    ledger_spend(character=t.a.character, kind="health_damage", by=t.st, amount=2)
    _same(t)
    ledger_spend(character=t.d.character, kind="health_damage", by=t.st, amount=3)
    assert "is surprised" in _same(t)
    # a new night
    game_night_open(chronicle=t.scene.chronicle, by=t.st)
    _same(t)
    # the time zone (no timer here: nothing in the key moves)
    with timezone.override(zoneinfo.ZoneInfo("Asia/Tokyo")):
        _same(t)
    # an npc, remove a participant
    scenes.scene_add_npc(scene=t.scene, by=t.st, name="Guard", pools={"physical": 6})
    _same(t)
    Participant.objects.filter(pk=t.a.pk).update(hidden=True)
    _same(t)
    scenes.scene_close(scene=t.scene, by=t.st)
    _same(t)


def _norm(page: str) -> str:
    """A page without its request's token (in its forms and its htmx headers)."""
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "TOKEN", page)
    return re.sub(r'Token": "[^"]+"', "TOKEN", page)


def test_pages_first_then_a_push_carry_their_own_tokens(classic):
    t = classic
    t.finished()
    t.start(category="physical", bid="Strong")
    p1 = t.board()
    p2 = t.board()
    pushed = _board(t)
    assert "csrfmiddlewaretoken" not in pushed
    assert _norm(p1) == _norm(p2)
    _fresh(t)
    p3 = t.board()
    assert _norm(p3) == _norm(p1)
    tok = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', p2))
    assert len(tok) == 1


def test_the_storytellers_calls_a_refused_step_and_a_ruleset_change(classic):
    t = classic
    done = t.finished()
    live = t.start(category="physical", bid="Strong")
    other = t.start(attacker=t.d, defender=t.a, by=t.d_user, category="physical", bid="Tough")
    _same(t)
    t.do("st", live, t.st, action="time", seconds=30)
    _same(t)
    with timezone.override(zoneinfo.ZoneInfo("Asia/Tokyo")):
        _board(t)
        _same(t)
    _board(t)
    t.do("st", live, t.st, action="surprise", side="yes")
    assert "is surprised" in _same(t)
    t.do("st", other, t.st, action="pause")
    _same(t)
    t.do("st", live, t.st, action="force")
    _same(t)
    with pytest.raises(ChallengeError):
        t.do("st", live, t.st, action="winner", side="attacker")
    _same(t)
    t.do("answer", other, t.a_user, side="defender", answer="bid", bid="Strong")
    _same(t)
    t.do("st", other, t.st, action="winner", side="attacker")
    _same(t)
    t.do("st", done, t.st, action="void", text="oops")
    _same(t)
    scenes.scene_set_ruleset(scene=t.refresh().scene, by=t.st, ruleset="wod_dice")
    _same(t)
    scenes.scene_set_ruleset(scene=t.refresh().scene, by=t.st, ruleset="met_werewolf")
    _same(t)
