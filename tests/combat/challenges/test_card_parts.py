"""A card's parts that read nothing of its viewer (its sides' line, last reveal and history:
combat/templatetags/card_parts.py) are rendered once for the two sides' phones and the board:
what is kept is always what a fresh rendering shows, a hidden NPC's name kept for the board
never reaches a phone, and each part of a key is proved here."""

from __future__ import annotations

import pytest
from django.template import Context

from combat import fragments, services
from combat.challenges import selectors
from combat.models import Participant
from combat.templatetags import card_parts, finished_cards
from combat.templatetags.card_parts import history_key, reveal_key, sides_key

pytestmark = pytest.mark.django_db


def _pieces(t) -> dict[str, str]:
    scene = t.refresh().scene
    return {u.username: fragments.private_pieces(scene, u) for u in (t.a_user, t.d_user)}


def _fresh(t) -> dict[str, str]:
    card_parts.clear()
    finished_cards.clear()
    return _pieces(t)


def _context(c: dict, **extra) -> Context:
    return Context({"c": c, "ch": c["ch"], **extra})


def test_each_step_of_a_challenge_on_both_phones_equals_a_fresh_rendering(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    steps = [
        lambda ch: t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough"),
        lambda ch: t.do("throw", ch, t.a_user, side="attacker", throw="rock"),  # a lock-in
        lambda ch: t.do("throw", ch, t.d_user, side="defender", throw="scissors"),  # a reveal
        lambda ch: t.do("accept", ch, t.d_user, side="defender"),  # over
    ]
    seen = []
    for step in [None, *steps]:
        ch = step(ch) if step else ch
        hits = card_parts.stats["hits"]
        kept = _pieces(t)
        if t.ch(ch).is_open:  # a finished card is kept whole (finished_cards): no part read
            assert card_parts.stats["hits"] > hits  # the second side took the first one's
        assert kept == _fresh(t)
        seen.append(kept[t.a_user.username])
    assert "locked in" in seen[2] and 'class="cc-reveal"' in seen[3]
    assert len(set(seen)) == len(seen)


def test_a_hidden_npcs_name_kept_for_the_board_never_reaches_a_phone(classic):
    t = classic
    lurker = services.scene_add_npc(
        scene=t.scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    ch = t.start(
        attacker=lurker, defender=t.a, by=t.st, category="physical", bid="Physical", effect="x"
    )
    ch = t.do("answer", ch, t.a_user, side="defender", answer="bid", bid="Strong")
    scene = t.refresh().scene
    board = fragments.board_regions(scene, ("challenges",))  # the storyteller's card first
    assert "Lurker" in board
    phone = fragments.private_pieces(scene, t.a_user)
    assert "Lurker" not in phone and phone == _fresh(t)[t.a_user.username]
    st_card = selectors.card(t.ch(ch), "st")
    side_card = selectors.card(t.ch(ch), "defender")
    assert sides_key(_context(st_card)) != sides_key(_context(side_card))


def test_every_value_a_part_shows_is_in_its_key(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    c = selectors.card(t.ch(ch), "attacker")
    base = sides_key(_context(c))
    changed = [
        {"names": {**c["names"], "attacker": "Someone else"}},
        {"bids": {**c["bids"], "defender": "Quick"}},
        {"blood": {"attacker": 1}},
        {"blood": {"attacker": True}},  # prints apart from 1: "True blood trait"
        {"locked": {**c["locked"], "attacker": True}},
        {"declared": {**c["declared"], "defender": True}},
        {"phase": "declarations"},
        {"must_drop": ["Marcus"]},
    ]
    keys = {sides_key(_context({**c, **change})) for change in changed}
    assert base not in keys and len(keys) == len(changed)
    row = t.ch(ch)
    row.attacker_effect = "another effect"
    assert sides_key(_context({**c, "ch": row})) != base
    row = t.ch(ch)
    row.status = "over"  # no longer open: no "to throw"
    assert sides_key(_context({**c, "ch": row})) != base
    # the history: its lines, their counts, how many earlier, whether it is open
    row = t.ch(ch)
    first = history_key(_context(c))
    row.history = [*row.history, {"text": "a new line"}]
    assert history_key(_context({**c, "ch": row})) != first
    row.history = [*row.history[:-1], {"text": "a new line", "times": 2}]
    assert len({first, history_key(_context({**c, "ch": row}))}) == 2
    row.history = [{"text": f"line {n}"} for n in range(20)]
    longer = history_key(_context({**c, "ch": row}))
    row.history = [{"text": "older"}, *row.history]
    assert history_key(_context({**c, "ch": row})) != longer  # "and 9 earlier", not 8
    # the reveal: its lines
    row = t.ch(ch)
    row.history = [*row.history, {"text": "Throws: rock vs rock"}]
    assert reveal_key(_context({**c, "ch": row})) != reveal_key(_context(c))


def test_a_rename_shows_on_the_next_rendering(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    before = _pieces(t)
    Participant.objects.filter(pk=t.d.pk).update(name="Sophie")
    after = _pieces(t)
    assert after != before and after == _fresh(t)
