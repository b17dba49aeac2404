"""Coverage that means something: break a rule in the engine, and a case or a test must fail.

Each entry of :data:`MUTATIONS` names rule IDs, a change that breaks the function or branch
implementing them, and the cases (by id, in every case folder) and tests that must then go
red. The check applies the change in-process with ``monkeypatch``, runs them, and asserts
that at least one fails; the same cases and tests pass unmutated (``test_cases`` and their
own modules run them). A marker that cites a rule is not coverage; an entry here is.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import pytest

from combat.rules import bns_initiative, bns_round, exchange, grapple, wod_round
from combat.rules.errors import RuleError
from combat.rules.exchange import Action
from combat.rules.grapple import Effect, Grapple
from tests.rules import test_bns_round, test_casekit, test_exchange, test_grapple, test_wod_round
from tests.rules.casekit import load_cases
from tests.rules.test_cases import run_case

Patch = Callable[[pytest.MonkeyPatch], None]


@dataclass(frozen=True)
class Mutation:
    """Rules broken by ``patch``; ``cases`` (ids) and ``tests`` that must catch it."""

    rules: tuple[str, ...]
    what: str
    patch: Patch
    cases: tuple[str, ...] = ()
    tests: tuple[Callable[[], Any] | str, ...] = ()  # a test, or "module::function"
    met: bool = False  # needs the MET rules' branch (see MET_MERGED)


def _everywhere(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> None:
    """Replace a function in its module and in every rules module that imported it."""
    for module in (bns_initiative, bns_round, exchange, grapple, wod_round):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, value)


def _wrap(
    monkeypatch: pytest.MonkeyPatch, owner: type, name: str, make: Callable[[Any], Any]
) -> None:
    monkeypatch.setattr(owner, name, make(getattr(owner, name)))


# ----------------------------------------------------------------- the mutations


def _b6_wait_for_finish(mp: pytest.MonkeyPatch) -> None:
    def turn_for(self: bns_round.Combat, who: str) -> bns_round.Combat:
        self._require_turn_of(who)
        return self

    mp.setattr(bns_round.Combat, "_turn_for", turn_for)


def _b8_bonus_in_celerity(mp: pytest.MonkeyPatch) -> None:
    _everywhere(mp, "forgo_bonus_counts", lambda number: True)


def _d6_guard_as_defense(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(
        Action,
        "meets_as_attack",
        property(lambda self: self.is_attack or self is Action.ESCAPE),
    )


def _g3_effect_after_book_keeping(mp: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def end_round(self: Grapple) -> Grapple:
            ended = original(self)
            return replace(ended, may_perform_effect=self.may_perform_effect and not ended.over)

        return end_round

    _wrap(mp, Grapple, "end_round", make)


def _g6_throw_a_prone_victim(mp: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def effect(self: Grapple, effect: Effect, *, cost: int | None = None) -> Grapple:
            if effect is Effect.THROW:
                self = replace(self, victim_prone=False)
            return original(self, effect, cost=cost)

        return effect

    _wrap(mp, Grapple, "effect", make)


def _g7_forced_needs_won_roll(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(Effect, "forced", property(lambda self: False))


def _adapters_ignore_refused_start(mp: pytest.MonkeyPatch) -> None:
    import tests.rules.adapters.bns_rounds as bns_adapter
    import tests.rules.adapters.chases as chase_adapter
    import tests.rules.adapters.wod as wod_adapter

    for module in (wod_adapter, bns_adapter, chase_adapter):
        mp.setattr(module, "started", lambda case, begin: begin())


def _d5_committed_needs_no_answer(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(wod_round.WodRound, "_committed", lambda self, who: False)


def _d5_harder_costs_nothing(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(wod_round, "COMMITTED_DIFFICULTY", 0)


def _d13_pool_below_zero(mp: pytest.MonkeyPatch) -> None:
    def defense_dice(self: Any, defender: str, pool: int, attack_number: int) -> int:
        mine = self.declaration(defender)
        stance = (
            wod_round.Stance.ATTACKING
            if mine and mine.action in wod_round.ATTACKS
            else wod_round.Stance.DEFENDING
        )
        return pool + wod_round.piling_on(stance, attack_number)

    mp.setattr(wod_round.WodRound, "defense_dice", defense_dice)


def _d16_any_action_after_a_defensive_abort(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(wod_round, "DEFENSES", frozenset({"block", "dodge", "attack", "move"}))


def _d16_void_abort_not_counted(mp: pytest.MonkeyPatch) -> None:
    def split_penalty(self: Any, who: str, wits: int) -> int:
        return wod_round.split(self.declaration(who).actions, wits)

    mp.setattr(wod_round.WodRound, "split_penalty", split_penalty)


def _d16_second_abort_after_failure(mp: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def abort(self: Any, who: str, **kwargs: Any) -> Any:
            cleaned = replace(self, aborts=tuple(a for a in self.aborts if a[1]))
            return original(cleaned, who, **kwargs)

        return abort

    _wrap(mp, wod_round.WodRound, "abort", make)


def _g5_free_victim_may_abort(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(Grapple, "may_abort", lambda self, who: self.over is not None)


def _g5_released_pin_acts(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(wod_round.WodRound, "_skipped", lambda self, name: False)
    mp.setattr(Grapple, "loses_next_main_action", property(lambda self: None))


def _g5_break_up_any_time(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(Grapple, "break_up", lambda self: replace(self, over=grapple.Over.BROKEN_UP))


def _g7_block_without_split(mp: pytest.MonkeyPatch) -> None:
    _everywhere(mp, "split", lambda actions, wits: 0)


def _casekit_rows(test: Callable[..., Any], rows: Iterable[Any]) -> tuple[Callable[[], Any], ...]:
    return tuple((lambda row=row: test(row)) for row in rows)


MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        ("B6", "B9"),
        "the next in order waits for a 'finish' nobody says",
        _b6_wait_for_finish,
        cases=("b-31", "b-32", "b-35", "b-36"),
    ),
    Mutation(
        ("B8", "B5"),
        "the +5 for forgoing counts in Celerity rounds",
        _b8_bonus_in_celerity,
        cases=("b-33",),
        tests=(test_bns_round.test_it_orders_every_round_of_a_turn_as_the_turn_plan_does,),
    ),
    Mutation(
        ("D6", "D7"),
        "a guard subtracts like a block",
        _d6_guard_as_defense,
        cases=("d-60",),
        tests=(test_exchange.test_it_turns_a_guard_into_an_attack_on_the_first_attacker_only,),
    ),
    Mutation(
        ("G3", "G4"),
        "a won roll allows an effect after Book Keeping",
        _g3_effect_after_book_keeping,
        cases=("g-20",),
    ),
    Mutation(
        ("G6",),
        "Throw a Victim that is down",
        _g6_throw_a_prone_victim,
        cases=("g-22",),
        tests=(test_grapple.test_it_throws_a_dropped_victim_only_once_it_stands,),
    ),
    Mutation(
        ("G6", "G7"),
        "Shrug Off and Hostage Block need a won roll",
        _g7_forced_needs_won_roll,
        cases=("g-23", "g-25", "g-28"),
    ),
    Mutation(
        ("FORMAT",),
        "the adapters ignore refused_start",
        _adapters_ignore_refused_start,
        tests=_casekit_rows(
            test_casekit.test_it_fails_a_case_that_should_not_have_started,
            test_casekit.OWN_ROWS,
        ),
    ),
    Mutation(
        ("D5",),
        "a committed attack resolves unanswered and leaves its attacker a defense",
        _d5_committed_needs_no_answer,
        tests=(test_wod_round.test_it_makes_a_committed_attacks_target_answer_it,),
    ),
    Mutation(
        ("D5",),
        "the +2 difficulty answer costs nothing",
        _d5_harder_costs_nothing,
        tests=(test_wod_round.test_it_makes_a_committed_attacks_target_answer_it,),
    ),
    Mutation(
        ("D13",),
        "a defense pool goes below 0 instead of letting attacks land",
        _d13_pool_below_zero,
        tests=(test_wod_round.test_it_lets_further_attacks_land_once_a_defender_is_at_zero_dice,),
    ),
    Mutation(
        ("D16",),
        "an abort against a later attack may become an attack",
        _d16_any_action_after_a_defensive_abort,
        tests=(
            test_wod_round.test_it_counts_a_void_abort_as_an_action_and_a_defensive_one_not_at_all,
        ),
    ),
    Mutation(
        ("D16", "D14"),
        "a void abort is not counted as an action",
        _d16_void_abort_not_counted,
        tests=(
            test_wod_round.test_it_counts_a_void_abort_as_an_action_and_a_defensive_one_not_at_all,
        ),
    ),
    Mutation(
        ("D16",),
        "a second abort after a failed one",
        _d16_second_abort_after_failure,
        tests=(
            test_wod_round.test_it_lets_a_successful_abort_declare_anew,
            test_wod_round.test_it_counts_a_void_abort_as_an_action_and_a_defensive_one_not_at_all,
        ),
    ),
    Mutation(
        ("G5",),
        "a Victim who broke free may still abort",
        _g5_free_victim_may_abort,
        tests=(test_grapple.test_it_spends_the_action_of_a_victim_who_breaks_free,),
    ),
    Mutation(
        ("G5",),
        "a Victim released from a Pin acts in the next Main Phase",
        _g5_released_pin_acts,
        tests=(
            test_wod_round.test_it_takes_the_main_phase_action_of_a_victim_released_from_a_pin,
            test_grapple.test_it_takes_the_next_main_action_of_a_victim_released_from_a_pin,
        ),
    ),
    Mutation(
        ("G5",),
        "a grapple broken up after it was rolled",
        _g5_break_up_any_time,
        tests=(test_grapple.test_it_lets_a_third_party_break_a_grapple_up_before_either_side_acts,),
    ),
    Mutation(
        ("G7", "D14"),
        "a grappled Victim blocks without splitting",
        _g7_block_without_split,
        tests=(test_grapple.test_it_lets_a_grappled_victim_block_by_splitting_its_pool,),
    ),
)

# ----------------------------------------------------------------- MET rules (rules-met's code)
#
# These break the MET challenge engine where issue 7 fixed it. They name functions, cases
# (tests/rules/cases/met_more.json) and tests of the branch that fixed the MET rules; until that
# branch is merged (MET_MERGED false) they are skipped, and once it is, every one must run.


def _challenge() -> Any:
    import combat.rules.challenge as challenge

    return challenge


MET_MERGED = hasattr(_challenge().Contender, "holds_bid")


def _c1_any_bid(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Contender, "holds_bid", lambda self: True)


def _c5_guesses_cost_nothing(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "guess_penalty", lambda self, side: 0)


def _c6_static_draw_ignores_wounds(mp: pytest.MonkeyPatch) -> None:
    ch = _challenge()

    def make(original: Any) -> Any:
        def draw(self: Any) -> Any:
            if self.defender is None and self.attacker.health is ch.Health.WOUNDED:
                healthy = replace(self.attacker, health=ch.Health.HEALTHY)
                return original(replace(self, attacker=healthy))
            return original(self)

        return draw

    _wrap(mp, ch.Challenge, "_draw", make)


def _w1_temper_overbid_names_a_trait(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "_temper", property(lambda self: False))


def _w13_lost_throw_ends_at_once(mp: pytest.MonkeyPatch) -> None:
    ch = _challenge()

    def extended(self: Any, leader: Any) -> Any:
        if leader is ch.Side.DEFENDER:
            return self._score(ch.Side.DEFENDER) if self.race else self._end_extended()
        return self._score(ch.Side.ATTACKER)

    mp.setattr(ch.Challenge, "_extended", extended)


def _c15_alacrity_always_first(mp: pytest.MonkeyPatch) -> None:
    import combat.rules.celerity as celerity

    mp.setattr(celerity, "alacrity_first", lambda who, levels, targets=None: levels.get(who, 0) > 0)


def _c10_no_fended_off_lock(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "fended_off", lambda self: False)


def _c10_willpower_keeps_the_action(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "dropped_action", lambda self, side: False)


def _w9_no_five_minute_lock(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "initiator_lost", lambda self: False)


def _c12_any_bid_when_surprised(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "_check_stamina", lambda self, contender: None)


def _c14_unarmed_counterattack(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "_check_ranged", lambda self: None)


def _c14_any_retest_against_ranged(mp: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def check_retest(self: Any, side: Any, kind: Any, **kwargs: Any) -> Any:
            return original(replace(self, ranged=False), side, kind, **kwargs)

        return check_retest

    _wrap(mp, _challenge().Challenge, "_check_retest", make)


def _c16_nobody_drops_out(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "must_drop_out", lambda self: [])


def _c16_mob_keeps_its_bids(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "mob_lost", lambda self: {})


def _w14_bid_never_required(mp: pytest.MonkeyPatch) -> None:
    ch = _challenge()
    original = ch.Challenge.start

    def start(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "bid_required": False})

    mp.setattr(ch.Challenge, "start", staticmethod(start))


def _w12_one_power_retest_a_person(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(_challenge().Challenge, "_source", lambda self, kind, by, power: None)


STEPS = "tests.rules.test_challenge_steps"
CHALLENGE = "tests.rules.test_challenge"
CELERITY = "tests.rules.test_celerity_mob_night"

MET_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        ("C1",),
        "a bid of a trait the side lacks",
        _c1_any_bid,
        cases=("m-c1-01", "m-c1-02", "m-c1-03"),
        met=True,
    ),
    Mutation(
        ("C5",),
        "negative traits named cost nothing",
        _c5_guesses_cost_nothing,
        cases=("m-c5-01", "m-c5-02", "m-c5-03"),
        tests=(
            f"{CHALLENGE}::test_it_does_not_count_the_mob_penalty_as_the_defenders_wrong_guesses",
        ),
        met=True,
    ),
    Mutation(
        ("C6", "C11"),
        "a Wounded character's static draw compared on totals",
        _c6_static_draw_ignores_wounds,
        cases=("m-c6-01", "m-c6-02"),
        met=True,
    ),
    Mutation(
        ("W1", "W11"),
        "a temper overbid names and crosses off a trait",
        _w1_temper_overbid_names_a_trait,
        cases=("m-w1-01", "m-w1-02", "m-w1-03"),
        met=True,
    ),
    Mutation(
        ("W13",),
        "a lost throw of an extended challenge cannot be retested",
        _w13_lost_throw_ends_at_once,
        cases=("m-w13-01", "m-w13-02", "m-w13-03", "m-w13-04", "m-w13-05"),
        met=True,
    ),
    Mutation(
        ("C15",),
        "Alacrity always goes first",
        _c15_alacrity_always_first,
        tests=(
            f"{CELERITY}::test_it_lets_only_the_higher_celerity_act_first",
            f"{CELERITY}::test_it_gives_no_one_alacrity_first_when_celerity_is_matched",
            f"{CELERITY}::test_it_weighs_alacrity_against_each_characters_own_target",
        ),
        met=True,
    ),
    Mutation(
        ("C10",),
        "willpower fending an attack off leaves no lock",
        _c10_no_fended_off_lock,
        tests=(
            f"{STEPS}::test_it_locks_the_fended_off_path_against_that_defender_for_ten_game_minutes",
        ),
        met=True,
    ),
    Mutation(
        ("C10",),
        "a defender spending willpower keeps its own attack",
        _c10_willpower_keeps_the_action,
        tests=(f"{STEPS}::test_it_makes_a_defender_who_spends_willpower_drop_its_own_attack",),
        met=True,
    ),
    Mutation(
        ("W9",),
        "no five-minute lock after a lost social challenge",
        _w9_no_five_minute_lock,
        tests=(f"{STEPS}::test_it_locks_a_lost_werewolf_social_challenge_for_five_game_minutes",),
        met=True,
    ),
    Mutation(
        ("C12",),
        "a surprised defender bids any physical trait",
        _c12_any_bid_when_surprised,
        tests=(f"{STEPS}::test_it_lets_a_surprised_defender_bid_only_stamina_based_traits",),
        met=True,
    ),
    Mutation(
        ("C14",),
        "an unarmed defender counterattacks a shooter",
        _c14_unarmed_counterattack,
        tests=(f"{STEPS}::test_it_refuses_an_unarmed_counterattack_on_a_shooter",),
        met=True,
    ),
    Mutation(
        ("C14",),
        "any retest against a ranged attack",
        _c14_any_retest_against_ranged,
        tests=(f"{STEPS}::test_it_lets_only_dodge_retest_a_ranged_attack",),
        met=True,
    ),
    Mutation(
        ("C16",),
        "a mob member who cannot match the negatives stays in",
        _c16_nobody_drops_out,
        tests=(f"{STEPS}::test_it_drops_a_member_who_cannot_match_the_negatives_named",),
        met=True,
    ),
    Mutation(
        ("C16",),
        "the mob keeps its bids when the defender wins",
        _c16_mob_keeps_its_bids,
        tests=(
            f"{STEPS}::test_it_takes_every_mob_members_bid_when_the_defender_wins",
            f"{STEPS}::test_it_runs_five_defenders_against_one_the_same_way",
        ),
        met=True,
    ),
    Mutation(
        ("W14",),
        "a storyteller's required bid is ignored",
        _w14_bid_never_required,
        tests=(f"{STEPS}::test_it_lets_the_storyteller_require_a_bid_in_a_simple_test",),
        met=True,
    ),
    Mutation(
        ("W12",),
        "two different gifts give one retest",
        _w12_one_power_retest_a_person,
        cases=("m-w12-01",),
        met=True,
    ),
)

ALL_MUTATIONS = MUTATIONS + MET_MUTATIONS

#: The rules issue 7 fixed or completed: each needs an entry above that a test catches.
ISSUE_7_RULES = frozenset(
    {"B5", "B6", "B8", "B9", "D5", "D6", "D7", "D13", "D16", "G3", "G5", "G6", "G7"}
)
#: The MET rules issue 7 fixed, on the MET branch (checked once it is merged).
ISSUE_7_MET_RULES = frozenset(
    {
        "C1",
        "C5",
        "C6",
        "C11",
        "W1",
        "W11",
        "W13",
        "C15",
        "C10",
        "W9",
        "C12",
        "C14",
        "C16",
        "W14",
        "W12",
    }
)


def mutated_rules() -> set[str]:
    """The rule IDs some mutation breaks and some case or test then catches (the MET ones
    only once their branch is merged)."""
    return {
        rule
        for mutation in ALL_MUTATIONS
        if MET_MERGED or not mutation.met
        for rule in mutation.rules
        if rule != "FORMAT"
    }


def _calls(test: Callable[[], Any] | str) -> list[Callable[[], Any]]:
    """A test as calls without fixtures: a ``"module::function"`` is imported (a missing one
    fails the check) and a parametrized function is called once per parameter set."""
    if callable(test):
        return [test]
    module_name, name = test.split("::")
    function = getattr(importlib.import_module(module_name), name)
    marks = [m for m in getattr(function, "pytestmark", []) if m.name == "parametrize"]
    if not marks:
        return [function]
    names, values = marks[0].args[0], marks[0].args[1]
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    calls = []
    for value in values:
        value = value.values if hasattr(value, "values") else value
        value = value if len(names) > 1 else (value,)
        calls.append(lambda value=value: function(**dict(zip(names, value, strict=True))))
    return calls


def _cases(ids: Iterable[str]) -> list[Any]:
    wanted = set(ids)
    found = [case for case in load_cases() if case.id in wanted]
    missing = wanted - {case.id for case in found}
    assert not missing, f"no case with id {sorted(missing)}"
    return found


def _fails(run: Callable[[], Any]) -> bool:
    """Whether ``run`` fails as a check fails: an assertion, a pytest failure, or a refusal
    nobody expected. Any other error means the mutation itself is broken: it propagates."""
    try:
        run()
    except (AssertionError, RuleError, pytest.fail.Exception):
        return True
    return False


@pytest.mark.parametrize(
    "mutation", ALL_MUTATIONS, ids=[f"{'-'.join(m.rules)}:{m.what}" for m in ALL_MUTATIONS]
)
def test_it_catches_the_broken_rule(mutation: Mutation, monkeypatch: pytest.MonkeyPatch) -> None:
    if mutation.met and not MET_MERGED:
        pytest.skip("the MET rules' branch is not merged yet")
    assert mutation.cases or mutation.tests, "a mutation needs a case or a test to catch it"
    cases = _cases(mutation.cases)
    calls = [call for test in mutation.tests for call in _calls(test)]
    with monkeypatch.context() as mp:
        mutation.patch(mp)
        red = [case.id for case in cases if _fails(lambda case=case: run_case(case))]
        red += [str(index) for index, call in enumerate(calls) if _fails(call)]
    assert red, f"breaking {mutation.rules} ({mutation.what}) fails no case and no test"
    for case in cases:  # unmutated, the same cases pass
        run_case(case)


def test_every_rule_fixed_in_issue_7_has_a_mutation() -> None:
    wanted = ISSUE_7_RULES | (ISSUE_7_MET_RULES if MET_MERGED else frozenset())
    assert mutated_rules() >= wanted, sorted(wanted - mutated_rules())
