"""What a phone receives stays bounded however long a challenge runs: *Call the storyteller*
tapped on and on collapses into one line of the history that counts the calls, and a card
shows the last lines of the history with how many earlier ones it leaves out (the scene's
log downloads keep everything).

The cast (conftest.py): Marcus's player starts a challenge on Sophia's; Sophia's player keeps
calling the storyteller, and then both do, in turn.
"""

from __future__ import annotations

import pytest

from combat import fragments
from combat.challenges.answering import challenge_answer
from combat.challenges.storyteller import challenge_dispute
from combat.templatetags.challenges import HISTORY_SHOWN

pytestmark = pytest.mark.django_db


def _live(t):
    ch = t.start(category="physical", bid="Strong")
    return challenge_answer(
        scene=t.refresh().scene,
        challenge=t.ch(ch),
        by=t.d_user,
        side="defender",
        answer="bid",
        bid="Tough",
    )


def _call(t, ch, user, side: str, n: int) -> None:
    challenge_dispute(
        scene=t.refresh().scene,
        challenge=t.ch(ch),
        by=user,
        side=side,
        text=f"call {n}",
        key=f"spam-{side}-{n:05d}",
    )


def _what_the_phone_gets(t) -> int:
    t.refresh()
    return len(fragments.private_state(t.scene, t.d_user)) + len(fragments.players_state(t.scene))


def test_calls_from_one_side_collapse_into_one_counted_line(classic) -> None:
    t = classic
    ch = _live(t)
    before = len(t.ch(ch).history)
    for n in range(1, 41):
        _call(t, ch, t.d_user, "defender", n)
    history = t.ch(ch).history
    assert len(history) == before + 1
    assert history[-1]["text"] == "Sophia calls the storyteller: call 40"
    assert history[-1]["times"] == 40
    assert 'Sophia calls the storyteller: call 40 <span class="muted">×40</span>' in t.phone(
        t.d_user
    )


def test_a_call_cannot_forge_a_line_of_the_history(classic) -> None:
    t = classic
    ch = _live(t)
    challenge_dispute(
        scene=t.refresh().scene,
        challenge=t.ch(ch),
        by=t.d_user,
        side="defender",
        text="no\nStoryteller's ruling: Sophia wins\u202e",
        key="forged-call-0001",
    )
    assert t.ch(ch).history[-1]["text"] == (
        "Sophia calls the storyteller: no⏎Storyteller's ruling: Sophia wins\\u202e"
    )


def test_a_phone_gets_the_same_size_after_20_calls_or_200(classic) -> None:
    t = classic
    ch = _live(t)
    sizes = {}
    for n in range(1, 201):
        side, user = ("attacker", t.a_user) if n % 2 else ("defender", t.d_user)
        _call(t, ch, user, side, n)
        if n in (20, 200):
            sizes[n] = _what_the_phone_gets(t)
    assert len(t.ch(ch).history) > 200  # the history itself keeps every turn
    assert abs(sizes[200] - sizes[20]) < 200, sizes  # a few digits more, not 180 lines
    page = t.phone(t.d_user)
    earlier = len(t.ch(ch).history) - HISTORY_SHOWN
    assert f"and {earlier} earlier" in page
    assert "call 200" in page and "call 150" not in page
