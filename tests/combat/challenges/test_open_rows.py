"""An open challenge's row, with its token and engine, is made once per step
(``finished.open_rows``): a shared scene's change shows every open challenge of the scene and
moves one. What a change reads is always the row at its current step, each caller's its own."""

from __future__ import annotations

import pytest

from combat import render_cache
from combat.challenges import finished, reads
from combat.challenges.reads import engine_of, step_token
from combat.models import Challenge
from tests.combat.challenges.test_phone_rows import _npcs

pytestmark = pytest.mark.django_db


def _rows(t) -> list[Challenge]:
    with render_cache.RenderCache().active():
        return reads.phone_rows(t.refresh().scene)


def test_an_open_row_is_made_once_per_step_and_never_served_stale(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    finished.open_rows.clear()
    before = dict(finished.open_rows.stats)
    (first,) = _rows(t)
    (again,) = _rows(t)
    assert finished.open_rows.stats["misses"] == before["misses"] + 1
    assert finished.open_rows.stats["hits"] == before["hits"] + 1
    assert first is not again and first.status == again.status == "answer"
    assert first.token == again.token == step_token(Challenge.objects.get(pk=ch.pk))
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    (answered,) = _rows(t)
    stored = Challenge.objects.get(pk=ch.pk)
    assert answered.step == stored.step != first.step
    assert answered.status == "live" and answered.state == stored.state
    assert answered.token == step_token(stored) != first.token
    t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    (thrown,) = _rows(t)
    assert thrown.sealed == Challenge.objects.get(pk=ch.pk).sealed
    assert "attacker" in thrown.sealed["throw"]


def test_its_engine_is_built_once_per_step_and_the_kept_row_stays_as_read(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    (one,) = _rows(t)
    (two,) = _rows(t)
    assert engine_of(one) is engine_of(two)  # the same state: the same (immutable) engine
    _, kept = finished.open_rows.find((one.pk, one.step))
    assert kept._state.fields_cache == {}  # no scene, no sides attached
    assert one.scene is not None and one.attacker.pk == t.a.pk
    t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    (three,) = _rows(t)
    assert engine_of(three) is not engine_of(one)


def test_a_row_that_changed_at_the_same_step_is_made_again(classic):
    """A row is kept for its step only while the listing reads the same values: a write that
    moves no step (or one rolled back, whose step the next write takes again) is never
    hidden behind the row kept before it."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    (first,) = _rows(t)
    stored = Challenge.objects.get(pk=ch.pk)
    Challenge.objects.filter(pk=ch.pk).update(options={**stored.options, "surprise": True})
    (again,) = _rows(t)
    assert again.step == first.step and again.options["surprise"] is True
    assert not first.options.get("surprise")


def test_a_shared_scenes_other_open_rows_are_compared_as_listed_not_converted(classic, monkeypatch):
    """An open row kept at its step is compared with its listing as the database gave it (its
    JSON as text): a change of a shared scene converts the fields of the row it moved alone."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ghoul, thrall = _npcs(t)
    other = t.start(attacker=ghoul, defender=thrall, by=t.st, category="physical", bid="Physical")
    _rows(t)
    finished_rows = []
    real = reads._lists.finish
    monkeypatch.setattr(
        reads._lists, "finish", lambda item: finished_rows.append(item[0]) or real(item)
    )
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    rows = {row.pk: row for row in _rows(t)}
    assert finished_rows == [ch.pk]
    assert rows[ch.pk].status == "live" and rows[other.pk].status == "answer"
    assert rows[other.pk].options == Challenge.objects.get(pk=other.pk).options
