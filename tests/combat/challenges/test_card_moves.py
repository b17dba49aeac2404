"""A side's moves block written in Python (combat/templatetags/card_moves.py) is the bytes its
template body renders, for every card state. Every test under tests/combat renders through
the comparison (``side_moves_checked``, tests/combat/conftest.py: each written block is
compared with the body's rendering, all rulesets' flows, retests, bids, W8 choices, mobs,
voids, hidden NPCs, both sides and the storyteller's board); here, that the comparison sees
each branch the tag writes, and that it fails when one of them is broken."""

from __future__ import annotations

import pytest

from combat.challenges.reads import engine_of
from combat.templatetags import card_moves

pytestmark = pytest.mark.django_db

# Each branch the tag writes, by a text only that branch writes.
BRANCHES = {
    "my throw": "Your throw: <b>",
    "blood": "Spend blood</button>",
    "throws": 'class="cc-throws"',
    "confirm by hand": "Confirm by hand:",
    "by hand": "We threw by hand",
    "negative": "Name a negative trait",
    "retests": 'class="cc-retests"',
    "a retest's abilities": '<select name="ability" aria-label="Ability">',
    "accept": "Take the result</button>",
    "relent": "Relent</button>",
    "odds": "See the odds",
    "call": "Call the storyteller</button>",
}


def _play(t) -> None:
    """A classic challenge through the states a side's moves take: waiting on the answer
    (the attacker may relent), the throws (blood, a negative trait, by hand, a confirmation
    by hand), the retests of the side behind, taking the result."""
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.do("throw", ch, t.a_user, side="attacker", throw="rock")
    ch = t.do("by_hand", ch, t.a_user, side="attacker", result="attacker")
    ch = t.do("by_hand", ch, t.d_user, side="defender", result="attacker")
    assert engine_of(t.ch(ch)).leader.value == "attacker"
    t.do("accept", ch, t.d_user, side="defender")


def test_the_comparison_sees_every_branch_the_tag_writes(classic, side_moves_checked):
    written: list[str] = []
    real = card_moves.moves_html

    def kept(*args, **kwargs):
        html = real(*args, **kwargs)
        written.append(html)
        return html

    card_moves.moves_html = kept
    try:
        _play(classic)
    finally:
        card_moves.moves_html = real
    assert len(side_moves_checked) == len(written) > 0
    viewers = {c["viewer"] for c in side_moves_checked}
    assert viewers == {"attacker", "defender"}
    missing = [name for name, text in BRANCHES.items() if not any(text in h for h in written)]
    assert missing == []


@pytest.mark.parametrize("branch", sorted(BRANCHES))
def test_a_broken_branch_fails_the_comparison(classic, branch, monkeypatch):
    text = BRANCHES[branch]
    real = card_moves.moves_html
    monkeypatch.setattr(
        card_moves, "moves_html", lambda *a, **k: real(*a, **k).replace(text, text + " ")
    )
    with pytest.raises(AssertionError):
        _play(classic)


def test_a_hidden_npc_attacking_a_side_is_written_as_the_template_writes_it(
    classic, side_moves_checked
):
    t = classic
    t.lost_to_a_hidden_npc()
    defenders = [c for c in side_moves_checked if c["viewer"] == "defender"]
    assert defenders and all(c["names"]["attacker"] != "Lurker" for c in defenders)
