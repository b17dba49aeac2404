"""The engine's refusals as players read them: names for participant ids, nothing else."""

from __future__ import annotations

from combat.rounds.errors import UNSEEN_CHARACTER, refusal_of
from combat.rules.errors import RuleError, named
from combat.rules.wod_initiative import Combatant
from combat.rules.wod_round import WodRound


def test_only_the_named_characters_are_worded_never_a_number_that_looks_like_an_id(cast):
    jane, frank = cast.p["Jane"], cast.p["Frank"]
    error = RuleError(
        "D14", f"With Wits {frank.pk} {named(jane.pk)} splits into at most {jane.pk}."
    )

    worded = str(refusal_of(error))

    assert worded == f"With Wits {frank.pk} Jane splits into at most {jane.pk}. (D14)"


def test_a_hidden_npc_stays_unseen_in_a_refusal(cast):
    lurker, jane = cast.p["Lurker"], cast.p["Jane"]
    error = RuleError("D16", f"{named(lurker.pk)}'s attack was declared before {named(jane.pk)}'s.")

    worded = str(refusal_of(error))

    assert "Lurker" not in worded
    assert worded == f"{UNSEEN_CHARACTER}'s attack was declared before Jane's. (D16)"


def test_the_engine_marks_the_characters_its_refusals_name():
    fighters = [
        Combatant(name="1", roll=3, dexterity=2, wits=2),
        Combatant(name="2", roll=5, dexterity=2, wits=2),
    ]
    try:
        WodRound.start(fighters, lost_main=["12"])
    except RuleError as error:
        assert error.names == ["12"]
        assert str(error) == "12 is not in this combat. (G5)"
        assert error.worded({"12": "Frank"}.get) == "Frank is not in this combat. (G5)"
    else:
        raise AssertionError("an unknown character must be refused (G5)")
