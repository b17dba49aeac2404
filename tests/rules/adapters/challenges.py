"""Runs the Mind's Eye Theatre cases: throws and challenges (met_classic, met_werewolf,
met_bns), one step at a time as a service would."""

from __future__ import annotations

from typing import Any

from combat.rules.challenge import Challenge, Contender, Phase
from combat.rules.errors import RuleError
from combat.rules.terms import Mode, Outcome, Side, Throw, compare
from tests.rules.casekit import Case, CaseMismatch, adapter, check, started, step_through

MET = ("met_classic", "met_werewolf", "met_bns")


@adapter("throw", *MET)
def run_throw(case: Case) -> None:
    throws = started(case, lambda: (Throw.parse(case.given["a"]), Throw.parse(case.given["b"])))
    if throws is None:
        return
    outcome = compare(*throws)
    check(
        case,
        case.expect,
        {"winner": {Outcome.FIRST: "a", Outcome.SECOND: "b"}.get(outcome, "draw")},
    )


def _contender(raw: dict[str, Any] | None) -> Contender | None:
    if raw is None:
        return None
    return Contender.make(**raw)


def _start(case: Case) -> Challenge:
    g = case.given
    return Challenge.start(
        ruleset=case.ruleset,
        mode=g.get("mode", "contested"),
        category=g.get("category"),
        attacker=_contender(g.get("attacker")),
        defender=_contender(g.get("defender")),
        difficulty=g.get("difficulty", 0),
        mind_control=g.get("mind_control", False),
        more_defensive=g.get("more_defensive", "defender"),
        win_outright=g.get("win_outright", False),
        target_wins=g.get("target_wins", g.get("target")),
        race=g.get("race", False),
        options=g.get("options"),
        # beyond FORMAT.md, for the project's own cases: C10, C14, W14
        both_attacking=g.get("both_attacking", False),
        ranged=g.get("ranged", False),
        counterattack=g.get("counterattack", False),
        bid_required=g.get("bid_required", g.get("require_bid", False)),
    )


def _step(challenge: Challenge, step: dict[str, Any]) -> Challenge:
    if "relent" in step:
        return challenge.relent(step["relent"])
    if step.get("no_bid"):
        return challenge.no_bid()
    if "name_negative" in step:
        return challenge.name_negative(step["name_negative"]["by"], step["name_negative"]["trait"])
    if "throw" in step:
        return challenge.throw_both(*step["throw"])
    if "declare" in step:
        return challenge.declare(*step["declare"])
    if "retest" in step:
        r = dict(step["retest"])
        return challenge.retest(
            r.pop("by"),
            r.pop("kind"),
            ability=r.get("ability"),
            opposing=r.get("opposing"),
            power=r.get("power"),
            declared=r.get("declared"),
            trait=r.get("trait"),
        )
    if "cancel" in step:
        c = step["cancel"]
        return challenge.cancel(c["by"], ability=c.get("ability"), power=c.get("power"))
    raise AssertionError(f"unknown step {step}")


def _full_declarations(challenge: Challenge) -> Challenge:
    """FORMAT: where no declaration follows a draw, each side declares its full total."""
    if challenge.defender is None:
        return challenge.declare(challenge.total(Side.ATTACKER))
    return challenge.declare(challenge.total(Side.ATTACKER), challenge.total(Side.DEFENDER))


def _observed(challenge: Challenge) -> dict[str, Any]:
    """Every ``expect`` key of FORMAT.md for a challenge, read off the engine."""
    return {
        "winner": challenge.winner.value if challenge.winner else None,
        "success": challenge.success,
        "wins": challenge.wins,
        "lost": challenge.lost(),
        "spent": {s.value: challenge.spent_by(s) for s in Side},
        "throws": challenge.throws,
        "damage": challenge.damage(),
    }


@adapter("challenge", *MET)
def run_challenge(case: Case) -> None:
    if case.expect.get("refused_start"):
        try:
            _start(case)
        except RuleError as refused:
            assert refused.rule, f"{case.label}: refusal names no rule"
            return
        raise CaseMismatch(f"{case.label}: the challenge should not have started")
    try:
        start = _start(case)
    except RuleError as error:
        raise CaseMismatch(f"{case.label}: the challenge was refused: {error}") from error

    def declare_if_silent(challenge: Challenge, index: int) -> Challenge:
        following = case.steps[index + 1] if index + 1 < len(case.steps) else {}
        if challenge.phase is Phase.DECLARATIONS and "declare" not in following:
            challenge = _full_declarations(challenge)
        if (
            challenge.mode is Mode.EXTENDED
            and challenge.phase is Phase.RETESTS
            and "throw" in following
        ):
            challenge = challenge.accept()  # W13: the lost throw is taken, the next one comes
        return challenge

    challenge = step_through(
        case, start, _step, observe=lambda state, _step: _observed(state), after=declare_if_silent
    )
    if challenge.phase is Phase.DECLARATIONS:
        challenge = _full_declarations(challenge)
    if challenge.phase is not Phase.OVER:
        try:
            challenge = challenge.finish()
        except RuleError as error:
            raise CaseMismatch(f"{case.label}: the challenge cannot end: {error}") from error
    check(case, case.expect, _observed(challenge))
