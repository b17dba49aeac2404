"""Challenges read sheets through the per-process sheet cache (``characters.sheet_cache``):
after a whole challenge, its pushes and its pages, what the cache holds is what a fresh read
gives (no reader changed a cached row or value), and every cost shows on the next read."""

from __future__ import annotations

from typing import Any

from characters import sheet_cache
from combat.challenges.sheets import load_many


def _plain(value: Any) -> Any:
    """Values and rows as plain data (a row: its model and its fields)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "_meta"):
        return (
            type(value).__name__,
            {f.attname: getattr(value, f.attname) for f in value._meta.fields},
        )
    return value


def _held(character_id: int) -> Any:
    entry = sheet_cache._entries[character_id]
    rows = {name: _plain(list(qs)) for name, qs in entry.prefetched.items()}
    return entry.key, rows, _plain(entry.now)


def _fresh(character_id: int) -> Any:
    (entry,) = sheet_cache._read(sheet_cache._rows([character_id])).values()
    rows = {name: _plain(list(qs)) for name, qs in entry.prefetched.items()}
    return entry.key, rows, _plain(entry.now)


def test_after_a_challenge_the_cache_holds_what_a_fresh_read_gives(classic) -> None:
    t = classic
    ch = t.start(category="physical", bid="Strong", effect="I shove her aside")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    ch = t.do("accept", ch, t.d_user, side="defender")
    assert ch.status == "over"
    t.phone(t.a_user), t.phone(t.d_user), t.board()
    sheets = load_many([t.a, t.d])  # read now: the last writes' versions
    assert sheets[1].now["traits"]["physical"]["Tough"] == 1  # the loser's bid is gone
    for participant in (t.a, t.d):
        assert _held(participant.character_id) == _fresh(participant.character_id)


def test_a_steps_sheets_read_again_unchanged_are_one_query(
    classic, django_assert_num_queries
) -> None:
    t = classic
    sheet_cache.clear()
    with django_assert_num_queries(9):  # the rows, 7 kinds of sheet rows, the ledger
        load_many([t.a, t.d])
    with django_assert_num_queries(1):
        sheets = load_many([t.a, t.d])
    with django_assert_num_queries(0):  # what a challenge reads of them comes with them
        assert sheets[0].abilities() and sheets[0].powers() and sheets[1].weapons() == []
        sheets[1].negatives("physical"), sheets[1].stamina_flags(), sheets[0].health()
