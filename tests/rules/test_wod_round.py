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


def _main(declarations: list[Declaration], lost_main: tuple[str, ...] = ()) -> WodRound:
    round_ = WodRound.start(CAST, lost_main=lost_main)
    for declaration in declarations:
        round_ = round_.declare(declaration)
    return round_


@pytest.mark.rules("D5")
def test_it_makes_a_committed_attacks_target_answer_it() -> None:
    round_ = _main(
        [
            Declaration("Frank", "move"),
            Declaration("Teddy", "attack", target="Jane"),
            Declaration("Jane", "attack", target="Teddy"),
            Declaration("Paulo", "attack", target="Jane", maneuver="committed"),
        ]
    )
    with pytest.raises(RuleError) as unanswered:
        round_.resolve("Paulo")
    assert unanswered.value.rule == "D5"
    accepted = round_.answer_committed("Jane", "Paulo", "accept")
    assert accepted.resolve("Paulo").resolved == ("Paulo",)
    assert accepted.difficulty_modifier("Jane") == 0
    harder = round_.answer_committed("Jane", "Paulo", "harder")
    assert harder.difficulty_modifier("Jane") == 2
    with pytest.raises(RuleError):
        harder.answer_committed("Jane", "Paulo", "accept")
    aborted = round_.answer_committed("Jane", "Paulo", "abort")  # no Willpower roll
    with pytest.raises(RuleError) as not_a_defense:
        aborted.redeclare(Declaration("Jane", "attack", target="Paulo"))
    assert not_a_defense.value.rule == "D16"
    dodging = aborted.redeclare(Declaration("Jane", "dodge"))
    assert dodging.declaration("Jane").action == "dodge"
    assert dodging.split_penalty("Jane", wits=5) == 0
    with pytest.raises(RuleError) as no_defense:
        round_.abort("Paulo", successes=3, reason="later_attack", attacker="Jane")
    assert no_defense.value.rule in {"D5", "D16"}
    assert round_.defense_dice("Paulo", pool=6, attack_number=1) == 0
    assert WodRound.from_dict(dodging.to_dict()) == dodging


@pytest.mark.rules("D13")
def test_it_lets_further_attacks_land_once_a_defender_is_at_zero_dice() -> None:
    round_ = _main(
        [
            Declaration("Frank", "dodge"),
            Declaration("Teddy", "attack", target="Frank"),
            Declaration("Jane", "attack", target="Frank"),
            Declaration("Paulo", "attack", target="Teddy"),
        ]
    )
    assert [round_.defense_dice("Teddy", 5, n) for n in (1, 2, 3, 4)] == [5, 3, 1, 0]
    assert [round_.defense_dice("Frank", 2, n) for n in (1, 2, 3, 4)] == [2, 1, 0, 0]


@pytest.mark.rules("D16", "D14")
def test_it_counts_a_void_abort_as_an_action_and_a_defensive_one_not_at_all() -> None:
    round_ = _main(
        [
            Declaration("Frank", "attack", target="Paulo"),
            Declaration("Teddy", "attack", target="Jane"),
            Declaration("Jane", "move"),
            Declaration("Paulo", "attack", target="Frank"),
        ]
    )
    void = round_.abort("Teddy", successes=1).redeclare(
        Declaration("Teddy", "attack", target="Frank")
    )
    assert void.split_penalty("Teddy", wits=3) == -3
    twice = void.abort("Teddy", successes=2).redeclare(Declaration("Teddy", "move"))
    assert twice.split_penalty("Teddy", wits=3) == -4
    with pytest.raises(RuleError) as earlier:
        round_.abort("Paulo", successes=1, reason="later_attack", attacker="Frank")
    assert earlier.value.rule == "D16"  # Frank declared before Paulo: not a later attack
    answered = round_.abort("Frank", successes=1, reason="later_attack", attacker="Paulo")
    with pytest.raises(RuleError):
        answered.redeclare(Declaration("Frank", "attack", target="Jane"))
    blocking = answered.redeclare(Declaration("Frank", "block"))
    assert blocking.split_penalty("Frank", wits=3) == 0
    failed = round_.abort("Frank", successes=0, reason="later_attack", attacker="Paulo")
    with pytest.raises(RuleError) as second:
        failed.abort("Frank", successes=1, reason="later_attack", attacker="Paulo")
    assert second.value.rule == "D16"
    with pytest.raises(RuleError):
        round_.resolve("Paulo").resolve("Jane").abort("Jane", successes=1)


@pytest.mark.rules("G5")
def test_it_takes_the_main_phase_action_of_a_victim_released_from_a_pin() -> None:
    round_ = WodRound.start(CAST, haste={"Teddy": 1}, lost_main=("Teddy",))
    with pytest.raises(RuleError) as refused:
        round_.declare(Declaration("Teddy", "attack", target="Jane"))
    assert refused.value.rule in {"G5", "D4"}
    assert round_.up == ("Frank",)
    for name in ("Frank", "Jane", "Paulo"):
        assert "Teddy" not in round_.up
        round_ = round_.declare(Declaration(name, "move"))
    for name in ("Paulo", "Jane", "Frank"):
        round_ = round_.resolve(name)
    assert round_.phase.name == "haste 1" and round_.up == ("Teddy",)
    round_ = round_.declare(Declaration("Teddy", "attack", target="Jane"))
    assert WodRound.from_dict(round_.to_dict()) == round_


@pytest.mark.rules("G5")
def test_it_negates_both_grapplers_actions_when_a_third_party_breaks_it_up() -> None:
    round_ = _main(
        [
            Declaration("Frank", "attack", target="Jane"),
            Declaration("Teddy", "grapple", target="Jane"),
            Declaration("Jane", "resist"),
            Declaration("Paulo", "attack", target="Teddy"),
        ]
    )
    broken = round_.negate("Teddy", "Jane")
    assert broken.negated == ("Teddy", "Jane")
    with pytest.raises(RuleError):
        round_.resolve("Paulo").resolve("Jane").negate("Jane")


@pytest.mark.rules("D3", "D2")
@pytest.mark.parametrize(
    "bad",
    [
        Combatant("Jane", roll=11, wits=5, dexterity=5),
        Combatant("Jane", roll=0, wits=5, dexterity=5),
        Combatant("Jane", roll=7, wits=5, dexterity=5, wound_penalty=-1),
    ],
)
def test_it_refuses_an_impossible_initiative_roll(bad: Combatant) -> None:
    with pytest.raises(RuleError) as refused:
        WodRound.start([bad])
    assert refused.value.rule == "D3"


@pytest.mark.rules("G5", "D16")
def test_it_gives_a_victim_released_from_a_pin_nothing_to_abort() -> None:
    round_ = WodRound.start(CAST, lost_main=("Teddy",))
    with pytest.raises(RuleError) as refused:
        round_.abort("Teddy", successes=2)
    assert refused.value.rule == "G5"


@pytest.mark.rules("D14", "D5", "D16")
def test_a_split_names_its_further_actions_and_keeps_them_through_json() -> None:
    import json

    round_ = WodRound.start(CAST)
    split = Declaration(
        "Frank", "attack", target="Teddy", actions=3, extra=(("attack", "Jane"), ("dodge", None))
    )
    assert split.attack_targets() == ("Teddy", "Jane") and split.split_defense() == "dodge"
    for bad, rule in (
        (
            Declaration("Frank", "attack", target="Teddy", actions=2, extra=(("attack", "Teddy"),)),
            "D14",
        ),
        (
            Declaration("Frank", "attack", target="Teddy", actions=1, extra=(("dodge", None),)),
            "D14",
        ),
        (Declaration("Frank", "attack", target="Teddy", actions=2, extra=(("move", None),)), "D14"),
        (
            Declaration(
                "Frank", "attack", "Teddy", "committed", actions=2, extra=(("block", None),)
            ),
            "D5",
        ),
    ):
        with pytest.raises(RuleError) as refused:
            round_.declare(bad)
        assert refused.value.rule == rule
    round_ = round_.declare(split)
    again = WodRound.from_dict(json.loads(json.dumps(round_.to_dict())))
    assert again == round_
    # D16: an attack split off Paulo's dodge is a later attack on Jane she may abort against.
    round_ = round_.declare(Declaration("Teddy", "dodge"))
    round_ = round_.declare(Declaration("Jane", "attack", target="Frank"))
    round_ = round_.declare(Declaration("Paulo", "dodge", actions=2, extra=(("attack", "Jane"),)))
    round_ = round_.abort("Jane", successes=1, reason="later_attack", attacker="Paulo")
    assert round_.declaration("Jane").action == "pending"


@pytest.mark.rules("D4", "D13", "D5")
def test_main_phase_defenses_hold_through_the_haste_phases() -> None:
    """D13: Teddy dodged in the Main Phase; Frank's haste attack meets that dodge (a defense
    holds all round, one die fewer per further attack). A committed attacker stays without a
    defense (D5). Only the haste declarations are per phase."""
    round_ = WodRound.start(CAST, haste={"Frank": 1})
    round_ = round_.declare(Declaration("Frank", "attack", target="Teddy"))
    round_ = round_.declare(Declaration("Teddy", "dodge"))
    round_ = round_.declare(Declaration("Jane", "attack", target="Paulo", maneuver="committed"))
    round_ = round_.declare(Declaration("Paulo", "dodge"))
    round_ = round_.answer_committed("Paulo", "Jane", "accept")
    for name in ("Paulo", "Jane", "Teddy", "Frank"):
        round_ = round_.resolve(name)
    assert round_.phase.name == "haste 1"
    round_ = round_.declare(Declaration("Frank", "attack", target="Teddy"))
    assert round_.declaration("Teddy") is None  # nothing declared in this phase
    assert round_.standing("Teddy").action == "dodge"
    assert round_.defense_dice("Teddy", 6, attack_number=2) == 5  # D13: a defender, −1
    assert round_.defense_dice("Jane", 6, attack_number=1) == 0  # D5: committed all round
    assert round_.standing("Frank").action == "attack" and round_.standing("Frank").target
    assert WodRound.from_dict(round_.to_dict()) == round_


@pytest.mark.rules("D5", "D4")
def test_an_edited_declaration_passes_the_checks_of_a_fresh_one() -> None:
    round_ = WodRound.start(CAST, haste={"Frank": 1})
    for name in ("Frank", "Teddy", "Jane", "Paulo"):
        round_ = round_.declare(Declaration(name, "dodge"))
    for name in ("Paulo", "Jane", "Teddy", "Frank"):
        round_ = round_.resolve(name)
    round_ = round_.declare(Declaration("Frank", "attack", target="Teddy"))
    with pytest.raises(RuleError) as refused:
        round_.change(Declaration("Frank", "attack", target="Teddy", maneuver="committed"))
    assert refused.value.rule == "D5"
    changed = round_.change(Declaration("Frank", "attack", target="Jane"))
    assert changed.declaration("Frank").target == "Jane"
