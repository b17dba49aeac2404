"""A challenge's pushes name their regions: a step re-renders the storyteller's challenge
board (with the clock, the log and the people, who say whom it waits on), never the fights or
the chases; a sheet that
changes is announced with the regions that show sheets. Every push equals a fresh render."""

from __future__ import annotations

import re

import pytest

from combat import fragments, live
from combat.models import Presence, Scene

pytestmark = pytest.mark.django_db

ROOTS = {
    "challenges": 'id="challenge-board"',
    "combat": 'id="combat"',
    "chase": 'id="chase"',
    "people": 'id="people-panel"',
    "clock": 'id="clock-panel"',
    "log": 'id="log-panel"',
}


@pytest.fixture
def sent(monkeypatch, request):
    # the storyteller's tablet is open: a board is pushed only to be seen
    for name in ("classic", "werewolf"):
        if name in request.fixturenames:
            t = request.getfixturevalue(name)
            Presence.objects.create(scene=t.scene, user=t.st, channel_name=f"tablet.{name}")
    out: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: out.append((group, html)))
    return out


def _regions(html: str) -> set[str]:
    return {name for name, root in ROOTS.items() if root in html}


def _board_pushes(t, sent) -> list[str]:
    return [html for group, html in sent if group == live.storytellers_group(t.scene.pk)]


def test_a_throw_locked_in_pushes_the_challenge_board_clock_log_and_people_only(
    classic, sent, django_capture_on_commit_callbacks
):
    t = classic
    with django_capture_on_commit_callbacks(execute=True):
        ch = t.start(category="physical", bid="Strong")
        ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    (board,) = _board_pushes(t, sent)
    assert _regions(board) == {"challenges", "clock", "log", "people"}
    scene = Scene.objects.get(pk=t.scene.pk)
    assert board == fragments.board_regions(scene, ("challenges", "clock", "log"))
    assert "Marcus is locked in" in board
    # the people panel: the fight waits on Sophia's throw, no more on Marcus's (issue 19)
    people = board[board.index('id="people-panel"') :]
    waiting = re.search(r'class="waiting-on".*?</p>', people, re.S).group(0)
    assert "Sophia" in waiting and "to throw" in waiting and "Marcus" not in waiting
    # both sides' phones and the public part go too
    groups = {group for group, _html in sent}
    assert live.player_group(t.scene.pk, t.a_user.pk) in groups
    assert live.player_group(t.scene.pk, t.d_user.pk) in groups
    assert live.players_group(t.scene.pk) in groups


def test_a_loss_on_the_sheet_is_announced_with_the_sheet_regions(
    classic, sent, django_capture_on_commit_callbacks
):
    t = classic
    with django_capture_on_commit_callbacks(execute=True):
        ch = t.start(category="physical", bid="Strong")
        ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
        ch = t.throw(ch, "rock", "scissors")
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        t.do("accept", ch, t.d_user, side="defender")
    pushes = [_regions(html) for html in _board_pushes(t, sent)]
    assert {"challenges", "clock", "log", "people"} in pushes  # the step
    # Sophia's Tough crossed off (the ledger): the regions that show sheets, a fight's and a
    # chase's not (the scene has none)
    assert {"people", "challenges"} in pushes
    assert not any({"combat", "chase"} & r and "clock" in r for r in pushes)
    scene = Scene.objects.get(pk=t.scene.pk)
    last_board = [h for h in _board_pushes(t, sent) if "log-panel" in h][-1]
    assert last_board == fragments.board_regions(scene, ("challenges", "clock", "log"))
    assert re.search(r"Outcome of Marcus vs Sophia: Marcus wins", last_board)


def test_a_regain_pushes_no_board_region_but_the_clock_and_the_log(
    werewolf, sent, django_capture_on_commit_callbacks
):
    t = werewolf  # W0: regaining traits (W7) is met_werewolf's
    with django_capture_on_commit_callbacks(execute=True):
        ch = t.start(category="physical", bid="Quick")
        ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
        ch = t.throw(ch, "rock", "scissors")
        t.do("accept", ch, t.d_user, side="defender")
    sent.clear()
    from combat.challenges.spending import challenge_regain

    with django_capture_on_commit_callbacks(execute=True):
        t.refresh()
        challenge_regain(scene=t.scene, by=t.d_user, participant=t.d, category="physical")
    pushes = [_regions(html) for html in _board_pushes(t, sent)]
    assert {"clock", "log"} in pushes
    assert {"people", "challenges"} in pushes  # the sheet, from the ledger
    assert t.now(t.d)["traits"]["physical"]["Tough"] == 2
