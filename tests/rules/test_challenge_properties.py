"""Properties of the challenge engine over random legal step sequences (hypothesis)."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from combat.rules.challenge import Challenge, Contender, Phase
from combat.rules.errors import RuleError
from combat.rules.odds import retest_with
from combat.rules.profiles import Profile
from combat.rules.terms import RetestKind, Side, Throw

RULESETS = ["met_classic", "met_werewolf", "met_bns"]
throws = st.sampled_from(list(Throw))
steps = st.lists(
    st.one_of(
        st.tuples(st.just("throw"), throws, throws),
        st.tuples(
            st.just("retest"), st.sampled_from(list(Side)), st.sampled_from(list(RetestKind))
        ),
        st.tuples(st.just("declare"), st.integers(-2, 14), st.integers(-2, 14)),
        st.tuples(st.just("cancel"), st.sampled_from(list(Side)), st.just("")),
        st.tuples(st.just("finish"), st.just(""), st.just("")),
    ),
    max_size=25,
)


@st.composite
def challenges(draw: st.DrawFn) -> Challenge:
    ruleset = draw(st.sampled_from(RULESETS))
    category = draw(st.sampled_from(["physical", "social", "mental"]))

    def side() -> Contender:
        traits = draw(
            st.dictionaries(st.sampled_from(["A", "B", "C"]), st.integers(1, 4), min_size=1)
        )
        return Contender.make(
            traits=traits,
            bid=sorted(traits)[0],
            abilities={"brawl": draw(st.integers(0, 3)), "dodge": draw(st.integers(0, 3))},
            ability=draw(st.sampled_from(["brawl", "dodge"])),
            powers=draw(st.sampled_from([[], ["Potence"]])),
            temper={"willpower": draw(st.integers(0, 3))},
            health=draw(st.sampled_from(["healthy", "bruised", "wounded"])),
            pool=draw(st.integers(1, 16)),
        )

    return Challenge.start(
        ruleset=ruleset,
        category=category,
        attacker=side(),
        defender=side(),
        mind_control=draw(st.booleans()),
    )


def _apply(state: Challenge, step: tuple) -> Challenge:
    kind, a, b = step
    if kind == "throw":
        return state.throw_both(a, b)
    if kind == "retest":
        return retest_with(state, a, b)
    if kind == "declare":
        return state.declare(a, b)
    if kind == "cancel":
        other = state.side(a)
        return state.cancel(
            a, ability=other.ability, power=other.powers[0] if other.powers else None
        )
    return state.finish()


def _dumped(value: Any) -> Any:
    """A state as plain JSON, the slow obvious way: what ``to_dict``'s fast one must equal."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Profile):
        keys = ("slug", "abilities_add", "control_decay")
        return {key: getattr(value, key) for key in keys}
    if dataclasses.is_dataclass(value):
        return {f.name: _dumped(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_dumped(v) for v in value]
    return value


def _limit(state: Challenge) -> int:
    return 2 if state.profile.retests_per_person else 1


@settings(max_examples=300, deadline=None)
@given(challenges(), steps)
def test_every_step_is_applied_or_refused_without_change(start: Challenge, plan: list) -> None:
    state = start
    for step in plan:
        before = state
        try:
            state = _apply(state, step)
        except RuleError as refused:
            assert refused.rule, "a refusal names its rule"
            assert state == before
            continue
        # no retest kind beyond its limit (once a challenge, or once a person)
        for kind in RetestKind:
            uses = sum(1 for used in state.used if kind.value in used.split(":"))
            assert uses <= _limit(state), (kind, state.used)
        # nothing spent below zero
        for side in Side:
            contender = state.side(side)
            spent = state.spent_by(side)
            assert contender.tempered("willpower") - spent.get("willpower", 0) >= 0
            for ability, rating in contender.abilities:
                assert rating - spent.get(ability, 0) >= 0
        data = state.to_dict()
        assert data == _dumped(state)
        assert json.loads(json.dumps(data)) == data  # lists, not tuples: as it is stored
        assert Challenge.from_dict(data) == state


@settings(max_examples=300, deadline=None)
@given(challenges(), st.lists(st.tuples(throws, throws), min_size=60, max_size=60), st.data())
def test_every_challenge_ends_with_exactly_one_winner(
    start: Challenge, pairs: list, data: st.DataObject
) -> None:
    state = start
    for first, second in pairs:
        if state.phase is Phase.OVER:
            break
        if state.phase is Phase.DECLARATIONS:
            state = state.declare(state.total(Side.ATTACKER), state.total(Side.DEFENDER))
            continue
        if state.phase is Phase.RETESTS:
            kind = data.draw(st.sampled_from([None, *RetestKind]))
            try:
                state = retest_with(state, state.loser, kind) if kind else state.finish()
            except RuleError:
                state = state.finish()
            continue
        state = state.throw_both(first, second)
    if state.phase is Phase.RETESTS:
        state = state.finish()
    # only an unbroken run of equal-total draws (C4 re-throws) can keep it going
    assert state.phase in (Phase.OVER, Phase.THROWS)
    if state.phase is Phase.OVER:
        assert state.winner in (Side.ATTACKER, Side.DEFENDER)
        lost = state.lost()
        assert not (lost["attacker"] and lost["defender"]) or state.lost_now
        # the winner loses nothing but what an overbid crossed off at once (W11)
        extra = [t for who, t in state.lost_now if who == state.winner.value]
        assert lost[state.winner.value] == extra
