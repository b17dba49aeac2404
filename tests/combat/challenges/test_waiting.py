"""The tablet's "Waiting on" for a scene's open challenges (issue 19): the mob's members to bid
(C16), the defender to answer (C1), both sides to throw (C2), to declare a total (C4), and the
losing side to retest or take the result (C8). Never what a side threw or declared."""

from __future__ import annotations

import pytest

from combat.challenges import waiting
from combat.challenges.reads import round_token
from combat.models import Scene
from tests.combat.challenges.test_mob import _brute

pytestmark = pytest.mark.django_db


def _waits(t) -> dict[int, str]:
    return waiting.waiting_on(Scene.objects.get(pk=t.scene.pk))


def test_a_mob_challenge_waits_on_each_step_in_turn(classic):
    t = classic
    brute_user, brute = _brute(t)
    ch = t.start(category="physical", bid="Strong", mob=[brute])
    assert _waits(t) == {brute.pk: waiting.TO_BID}  # C16: Sophia is asked once it formed
    ch = t.do("mob_bid", ch, brute_user, member=brute, bid="Burly")
    assert _waits(t) == {t.d.pk: waiting.TO_ANSWER}
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert _waits(t) == {t.a.pk: waiting.TO_THROW, t.d.pk: waiting.TO_THROW}
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    assert _waits(t) == {t.d.pk: waiting.TO_THROW}  # Marcus is locked in: never what
    ch = t.do("throw", ch, t.d_user, side="defender", throw="paper")
    # C8: Sophia is winning; Marcus (the mob's thrower) retests or takes the result
    assert _waits(t) == {t.a.pk: waiting.TO_RETEST}
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert _waits(t) == {}


def test_a_draw_waits_on_the_totals_then_on_the_loser(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "rock")
    assert _waits(t) == {t.a.pk: waiting.TO_DECLARE, t.d.pk: waiting.TO_DECLARE}
    r = round_token(t.ch(ch))
    ch = t.do("declare", ch, t.a_user, side="attacker", total=10, token=r)
    assert _waits(t) == {t.d.pk: waiting.TO_DECLARE}
    ch = t.do("declare", ch, t.d_user, side="defender", total=8, token=r)
    assert _waits(t) == {t.d.pk: waiting.TO_RETEST}  # Marcus leads on totals (C4)
