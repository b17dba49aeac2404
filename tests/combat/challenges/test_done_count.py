"""The board's fold reads the scene row, not the night's rows (combat/challenges/board_reads.py):
how many challenges are finished (``Scene.challenges_done``) and the ``seq`` of the last change
to a finished one (``challenges_done_seq``) are kept by the steps that save a challenge
(combat.challenges.recording), always what counting the rows says, whichever way one ends; and
the fold's version moves with everything its rows show (a void, a rename)."""

from __future__ import annotations

import pytest

from combat.challenges import board_reads
from combat.models import Challenge, Participant
from tests.combat.challenges.test_choice_and_blood import _lost_to_a_named_negative

pytestmark = pytest.mark.django_db


def _counted(t) -> int:
    """The scene's finished challenges counted from its rows (as the board counted them)."""
    return Challenge.objects.filter(scene=t.scene).exclude(board_reads.still_open_q()).count()


def _kept(t) -> int:
    return t.refresh().scene.challenges_done


def _version(t) -> str:
    return board_reads.board_rows(t.refresh().scene).version


def test_it_counts_a_finish_once_and_a_void_of_an_open_one(classic):
    t = classic
    assert _kept(t) == _counted(t) == 0
    first = t.finished()
    assert _kept(t) == _counted(t) == 1
    moved = _version(t)
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    assert _kept(t) == 1 and _version(t) == moved  # an open one's steps: the fold as it was
    t.do("st", ch, t.st, action="void", text="wrong target")
    assert _kept(t) == _counted(t) == 2
    voided = _version(t)
    assert voided != moved
    t.do("st", first, t.st, action="void", text="oops")  # a finished one voided: no new one
    assert _kept(t) == _counted(t) == 2
    assert _version(t) != voided


def test_a_loser_s_choice_counts_when_it_is_made_w8(werewolf):
    t = werewolf
    ch = _lost_to_a_named_negative(t)
    assert "choose" in ch.options and _kept(t) == _counted(t) == 0  # over, waiting (W8)
    ch = t.do("choose_trait", ch, t.d_user, side="defender", trait="Dignified")
    assert _kept(t) == _counted(t) == 1
    chosen = _version(t)
    t.do("st", ch, t.st, action="void", text="wrong target")
    assert _kept(t) == _counted(t) == 1 and _version(t) != chosen


def test_a_rename_of_a_side_moves_the_fold_s_version(classic):
    """A loaded fold is put back while its version stays (static/js/tablet.js): the names its
    rows show are part of it."""
    t = classic
    t.finished()
    before = _version(t)
    assert _version(t) == before
    Participant.objects.filter(pk=t.d.pk).update(name="Sophie")
    assert _version(t) != before
    revealed = _version(t)
    Participant.objects.filter(pk=t.d.pk).update(hidden=True)
    assert _version(t) != revealed


def test_the_recount_equals_what_the_steps_kept(classic):
    t = classic
    t.finished()
    ch = t.start(category="physical", bid="Strong")
    t.do("st", ch, t.st, action="void", text="wrong target")
    kept = _kept(t)
    board_reads.recount(t.scene.pk)
    assert _kept(t) == kept == 2
