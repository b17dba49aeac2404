"""D4 rounds one step at a time: declarations, resolutions, haste, aborts, book keeping."""

from __future__ import annotations

import pytest

from combat.rules.errors import RuleError
from combat.rules.wod_initiative import Combatant
from combat.rules.wod_round import Declaration, Step, TimedEffect, WodRound

CAST = [
    Combatant("Jane", roll=7, wits=5, dexterity=5),
    Combatant("Frank", roll=3, wits=3, dexterity=3),
    Combatant("Teddy", roll=5, wits=3, dexterity=3),
    Combatant("Paulo", roll=9, wits=5, dexterity=5),
]


def _declared_main() -> WodRound:
    round_ = WodRound.start(CAST, haste={"Frank": 1})
    for name in ("Frank", "Teddy", "Jane", "Paulo"):
        round_ = round_.declare(Declaration(name, "attack", target="Teddy"))
    return round_


@pytest.mark.rules("D4")
def test_it_calls_declarations_low_to_high_and_resolutions_high_to_low() -> None:
    round_ = WodRound.start(CAST, haste={"Frank": 1})
    assert round_.up == ("Frank",)
    with pytest.raises(RuleError) as refused:
        round_.declare(Declaration("Paulo", "attack", target="Jane"))
    assert refused.value.rule == "D4"
    round_ = _declared_main()
    assert round_.step is Step.RESOLVE and round_.up == ("Paulo",)
    for name in ("Paulo", "Jane", "Teddy", "Frank"):
        round_ = round_.resolve(name)
    assert round_.phase.name == "haste 1" and round_.up == ("Frank",)


@pytest.mark.rules("D4", "D3")
def test_it_keeps_declarations_private_until_resolved() -> None:
    round_ = _declared_main().resolve("Paulo")
    seen = {d.who for d in round_.view_for("Frank")}
    assert seen == {"Frank", "Paulo"}


@pytest.mark.rules("D5", "D14")
def test_it_refuses_committed_or_split_actions_in_a_haste_phase() -> None:
    round_ = _declared_main()
    for name in ("Paulo", "Jane", "Teddy", "Frank"):
        round_ = round_.resolve(name)
    with pytest.raises(RuleError) as refused:
        round_.declare(Declaration("Frank", "attack", target="Teddy", maneuver="committed"))
    assert refused.value.rule == "D5"
    with pytest.raises(RuleError) as split:
        round_.declare(Declaration("Frank", "attack", target="Teddy", actions=2))
    assert split.value.rule == "D14"


@pytest.mark.rules("D16")
def test_it_lets_a_successful_abort_declare_anew() -> None:
    round_ = _declared_main()
    failed = round_.abort("Teddy", successes=0)
    with pytest.raises(RuleError) as second:
        failed.abort("Teddy", successes=2)
    assert second.value.rule == "D16"
    aborted = round_.abort("Teddy", successes=1).redeclare(Declaration("Teddy", "dodge"))
    assert aborted.declaration("Teddy").action == "dodge"
    with pytest.raises(RuleError):
        round_.redeclare(Declaration("Jane", "dodge"))


@pytest.mark.rules("D17")
def test_it_expires_effects_at_book_keeping() -> None:
    round_ = WodRound.start(CAST[:1])
    round_ = round_.declare(Declaration("Jane", "move")).resolve("Jane")
    assert round_.step is Step.BOOK_KEEPING
    done, running = round_.book_keeping(
        [TimedEffect("Blinded", "Paulo", 1), TimedEffect("Haste", "Frank", 3)]
    )
    assert done.step is Step.OVER and done.expired == ("Blinded",)
    assert running == (TimedEffect("Haste", "Frank", 2),)
    with pytest.raises(RuleError) as early:
        WodRound.start(CAST).book_keeping([])
    assert early.value.rule == "D17"


def test_it_round_trips_through_json() -> None:
    round_ = _declared_main().resolve("Paulo")
    assert WodRound.from_dict(round_.to_dict()) == round_
