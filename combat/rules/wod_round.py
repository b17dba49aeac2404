"""D4: a wod_dice combat round, driven one declaration and one resolution at a time.

Main Phase: declare from the lowest initiative to the highest, resolve from the highest to
the lowest; then haste phase n for those with haste actions left; then Book Keeping (D17).
A declaration stays private until its resolution (tied characters declare privately to the
storyteller, D3). Aborts (D16) replace a declaration that has not been resolved yet.

Steps the services call besides declaring and resolving: a target's answer to a committed
attack (D5, :meth:`WodRound.answer_committed`), the dice a defender has left against the n-th
attack (D13, :meth:`WodRound.defense_dice`), aborts for a void action or against a later
attack (D16, :meth:`WodRound.abort`) and the split penalty they bring (D14,
:meth:`WodRound.split_penalty`), a grapple broken up by a third party (G5,
:meth:`WodRound.negate`) and a released Pin's lost Main Phase action (G5, ``lost_main``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from combat.rules.errors import RuleError, all_named, named
from combat.rules.penalties import Stance, check_split_targets, piling_on, split
from combat.rules.wod_initiative import Combatant, Phase, Slot, round_phases

#: D5: the +2 difficulty a target may take instead of answering a committed attack otherwise.
COMMITTED_DIFFICULTY = 2
#: D6: the defenses (a guard is not one: it turns into an attack, D6 with D7).
DEFENSES = frozenset({"block", "dodge", "escape", "grapple_defense", "defense"})
#: D7, D10, D13: actions that carry on an attack (their defenses lose 2 dice an attacker).
ATTACKS = frozenset({"attack", "grapple", "guard"})


class AbortReason(Enum):
    """D16: why a character aborts."""

    VOID = "void"  # its action became void: any new action, counted for D14
    LATER_ATTACK = "later_attack"  # a later-declared attack on it: a defense, no split penalty
    COMMITTED = "committed"  # D5: a committed attack on it: a defense without a roll


class Answer(Enum):
    """D5: a target's answer to a committed attack."""

    ACCEPT = "accept"
    HARDER = "harder"  # +2 difficulty
    ABORT = "abort"  # abort to a defense without a roll


class Step(Enum):
    DECLARE = "declare"
    RESOLVE = "resolve"
    BOOK_KEEPING = "book_keeping"
    OVER = "over"


@dataclass(frozen=True)
class Declaration:
    who: str
    action: str  # "attack", "dodge", "block", "escape", "grapple", "guard", "move", …
    target: str | None = None
    maneuver: str = "basic"  # D5: basic, power, feint, committed
    actions: int = 1  # D14: a split into N actions
    aborted: bool = False
    abort_reason: str | None = None  # D16: AbortReason value of the abort that led here
    # D14: the split's further actions, (action, target) each: "attack" with its target, or a
    # defense ("block", "dodge") with none. ``actions`` counts them (a Grappler's defense
    # beside its sustain is no split, G2, so the caller counts).
    extra: tuple[tuple[str, str | None], ...] = ()

    def attack_targets(self) -> tuple[str, ...]:
        """Whom this declaration attacks: the main action's target and the split's attacks."""
        main = (self.target,) if self.action in ATTACKS and self.target else ()
        return main + tuple(t for a, t in self.extra if a in ATTACKS and t)

    def split_defense(self) -> str | None:
        """D14: the first defense among the split's further actions, if any."""
        return next((a for a, _t in self.extra if a in DEFENSES), None)


@dataclass(frozen=True)
class TimedEffect:
    """An effect lasting a number of rounds (D17 expires it at Book Keeping)."""

    name: str
    who: str
    rounds_left: int


def check_split(declaration: Declaration) -> None:
    """D14: a split names at least as many actions as it has further ones, never attacks one
    target twice; D5: a committed attacker has no defense this round, not even split off."""
    if declaration.actions < 1 + len(declaration.extra) - sum(
        1 for a, _t in declaration.extra if a in DEFENSES and declaration.action == "sustain"
    ):
        raise RuleError("D14", "A split counts each of its actions.")
    for action, target in declaration.extra:
        if action in ATTACKS and not target:
            raise RuleError("D14", "Name the target of each attack in a split.")
        if action not in ATTACKS and action not in DEFENSES:
            raise RuleError("D14", f"A split adds attacks or defenses, not {action!r}.")
    check_split_targets(list(declaration.attack_targets()))
    if declaration.maneuver == "committed" and declaration.split_defense():
        raise RuleError("D5", "A committed attack leaves no defense this round, split or not.")


def _members(slot: Slot) -> tuple[str, ...]:
    return tuple(sorted(slot)) if isinstance(slot, frozenset) else (slot,)


@dataclass(frozen=True)
class WodRound:
    phases: tuple[Phase, ...]
    phase_index: int = 0
    step: Step = Step.DECLARE
    cursor: int = 0
    declarations: tuple[Declaration, ...] = ()
    resolved: tuple[str, ...] = ()
    aborts: tuple[tuple[str, bool, str], ...] = ()  # (who, succeeded, reason) this phase
    expired: tuple[str, ...] = ()
    answers: tuple[tuple[str, str, str], ...] = ()  # D5: (attacker, target, answer)
    lost_main: tuple[str, ...] = ()  # G5: released from a Pin, no Main Phase action
    negated: tuple[str, ...] = ()  # G5: actions a third party negated this phase
    # D8, D13: the Main Phase declarations, kept through the haste phases (a defense declared
    # there holds all round; a committed attacker stays without one, D5).
    main_declarations: tuple[Declaration, ...] = ()

    @classmethod
    def start(
        cls,
        combatants: Sequence[Combatant],
        haste: Mapping[str, int] | None = None,
        *,
        lost_main: Sequence[str] = (),
    ) -> WodRound:
        """D3, D4: initiative rolled (the dice are in the combatants), phases laid out.

        ``lost_main``: characters released from a Pin since the last round; G5 takes their
        action in this Main Phase (they neither declare nor resolve in it).
        """
        if not combatants:
            raise RuleError("D4", "A combat round needs combatants.")
        names = {c.name for c in combatants}
        unknown = [name for name in lost_main if name not in names]
        if unknown:
            raise RuleError("G5", f"{all_named(unknown)} is not in this combat.")
        lost = tuple(sorted(set(lost_main)))
        skipped = tuple(Declaration(who=name, action="none") for name in lost)
        state = cls(phases=round_phases(combatants, haste), lost_main=lost, declarations=skipped)
        return state._skip()

    @property
    def phase(self) -> Phase:
        return self.phases[self.phase_index]

    @property
    def up(self) -> tuple[str, ...]:
        """Who must declare or resolve now (a tied group acts together)."""
        if self.step is Step.DECLARE:
            return _members(self.phase.declare[self.cursor])
        if self.step is Step.RESOLVE:
            return _members(self.phase.resolve[self.cursor])
        return ()

    def declaration(self, who: str) -> Declaration | None:
        return next((d for d in self.declarations if d.who == who), None)

    def standing(self, who: str) -> Declaration | None:
        """What ``who`` stands on now: its declaration in this phase, else (in a haste phase)
        its Main Phase one, whose defense holds all round (D4, D8, D13)."""
        mine = self.declaration(who)
        if mine is None and self.phase_index:
            mine = next((d for d in self.main_declarations if d.who == who), None)
        return mine

    def view_for(self, who: str) -> list[Declaration]:
        """Declarations one character may see: its own and those already resolved."""
        return [d for d in self.declarations if d.who == who or d.who in self.resolved]

    def declare(self, declaration: Declaration) -> WodRound:
        """D4, D5, D14: the character whose turn it is to declare names its action."""
        if self.step is not Step.DECLARE or declaration.who not in self.up:
            raise RuleError("D4", f"It is not {named(declaration.who)}'s turn to declare.")
        self._check_new(declaration)
        state = replace(self, declarations=(*self.declarations, declaration))
        if all(state.declaration(name) for name in self.up):
            return state._advance()
        return state

    def change(self, declaration: Declaration) -> WodRound:
        """D4: the last declaration made may be changed until the next character declares (or
        resolution starts); the new one passes the same checks as a fresh one (D5, D14, G5),
        or, after an abort, those of the action the abort opened (D16)."""
        who = declaration.who
        current = self.declaration(who)
        if (
            current is None
            or current.action == "pending"
            or self.resolved
            or self.step not in (Step.DECLARE, Step.RESOLVE)
            or self.declarations[-1].who != who
            or (current.aborted and current.action == "none")
        ):
            raise RuleError("D4", f"{named(who)}'s declaration can no longer be changed.")
        kept = tuple(d for d in self.declarations if d.who != who)
        if current.aborted:
            reopened = replace(current, action="pending", target=None, extra=(), actions=1)
            return replace(self, declarations=(*kept, reopened)).redeclare(declaration)
        self._check_new(declaration)
        return replace(self, declarations=(*kept, declaration))

    def _check_new(self, declaration: Declaration) -> None:
        """D5, D14, G5: what a fresh declaration may be in this phase."""
        haste = self.phase.name != "main"
        if not haste and declaration.who in self.lost_main:
            raise RuleError(
                "G5", f"{named(declaration.who)} was released from a Pin: no action now."
            )
        if haste and declaration.maneuver == "committed":
            raise RuleError("D5", "A committed attack is never made in a haste phase.")
        if haste and (declaration.actions > 1 or declaration.extra):
            raise RuleError("D14", "Haste actions are never split.")
        check_split(declaration)

    def abort(
        self,
        who: str,
        *,
        successes: int,
        reason: AbortReason | str = AbortReason.VOID,
        attacker: str | None = None,
    ) -> WodRound:
        """D16: Willpower at difficulty 8; one success lets the character declare anew
        (a second abort needs the first to have succeeded).

        ``reason`` VOID: the action became void (target gone, weapon destroyed); the new
        action may be anything and each successful such abort counts as one more action for
        D14. LATER_ATTACK: ``attacker`` declared an attack on ``who`` after ``who`` declared;
        the new action must be a defense and carries no split penalty. A committed attack's
        target aborts without a roll through :meth:`answer_committed` instead.
        """
        reason = AbortReason(reason)
        mine = self.declaration(who)
        if mine is None or who in self.resolved:
            raise RuleError("D16", "Only a declared, unresolved action can be aborted.")
        if self._skipped(who):
            raise RuleError("G5", f"{named(who)} was released from a Pin: no action to abort now.")
        if reason is AbortReason.COMMITTED:
            raise RuleError("D5", "A committed attack's target aborts through its answer.")
        earlier = [ok for name, ok, _why in self.aborts if name == who]
        if earlier and not earlier[-1]:
            raise RuleError("D16", "A second abort needs the first to have succeeded.")
        if reason is AbortReason.LATER_ATTACK:
            if self._committed(who):
                raise RuleError(
                    "D5", f"{named(who)} made a committed attack: no defense this round."
                )
            theirs = self.declaration(attacker) if attacker else None
            if theirs is None or who not in theirs.attack_targets():
                raise RuleError("D16", f"Name the attack on {named(who)} the abort answers.")
            if self.declarations.index(theirs) < self.declarations.index(mine):
                raise RuleError(
                    "D16", f"{named(attacker)}'s attack was declared before {named(who)}'s action."
                )
        if successes < 0:
            raise RuleError("D16", "Successes are counted from 0 up.")
        aborts = (*self.aborts, (who, successes > 0, reason.value))
        if successes == 0:
            return replace(self, aborts=aborts)
        return replace(self, aborts=aborts)._open_redeclaration(who, reason)

    def answer_committed(self, target: str, attacker: str, answer: Answer | str) -> WodRound:
        """D5: the target of a committed attack accepts it, takes +2 difficulty, or aborts to
        a defense without a roll (then :meth:`redeclare` a defense)."""
        answer = Answer(answer)
        theirs = self.declaration(attacker)
        if theirs is None or theirs.maneuver != "committed" or theirs.target != target:
            raise RuleError("D5", f"{named(attacker)} made no committed attack on {named(target)}.")
        if attacker in self.resolved:
            raise RuleError("D5", f"{named(attacker)}'s committed attack has already resolved.")
        if any(a == attacker and t == target for a, t, _ans in self.answers):
            raise RuleError(
                "D5", f"{named(target)} has already answered {named(attacker)}'s attack."
            )
        state = replace(self, answers=(*self.answers, (attacker, target, answer.value)))
        if answer is not Answer.ABORT:
            return state
        if target in self.resolved or self.declaration(target) is None or self._skipped(target):
            raise RuleError("D5", f"{named(target)} has no unresolved action to abort.")
        if self._committed(target):
            raise RuleError(
                "D5", f"{named(target)} made a committed attack: no defense this round."
            )
        return state._open_redeclaration(target, AbortReason.COMMITTED)

    def redeclare(self, declaration: Declaration) -> WodRound:
        """D16: after a successful abort the new action replaces the old one; after an abort
        against a later attack (or a committed one, D5) it must be a defense."""
        current = self.declaration(declaration.who)
        if current is None or not current.aborted or current.action != "pending":
            raise RuleError("D16", "Declare anew only after a successful abort.")
        reason = AbortReason(current.abort_reason or AbortReason.VOID.value)
        if reason is not AbortReason.VOID and declaration.action not in DEFENSES:
            raise RuleError("D16", "An abort against an attack can only become a defense.")
        if reason is not AbortReason.VOID and (declaration.actions > 1 or declaration.extra):
            raise RuleError("D16", "The defense an abort brings is not split.")
        if self.phase.name != "main" and (declaration.actions > 1 or declaration.extra):
            raise RuleError("D14", "Haste actions are never split.")
        check_split(declaration)
        if self.phase.name != "main" and declaration.maneuver == "committed":
            raise RuleError("D5", "A committed attack is never made in a haste phase.")
        kept = tuple(d for d in self.declarations if d.who != declaration.who)
        new = replace(declaration, aborted=True, abort_reason=reason.value)
        return replace(self, declarations=(*kept, new))

    def pass_over(self, who: str) -> WodRound:
        """D16: an aborted character that never names its new action takes no action this
        phase (the storyteller passes over it; nothing is filled in)."""
        mine = self.declaration(who)
        if mine is None or mine.action != "pending":
            raise RuleError("D16", f"{named(who)} has no new action left to declare.")
        passed = tuple(replace(d, action="none") if d.who == who else d for d in self.declarations)
        return replace(self, declarations=passed)

    def difficulty_modifier(self, who: str) -> int:
        """D5: +2 for each committed attack ``who`` answered by taking a harder roll."""
        harder = sum(1 for _a, t, ans in self.answers if t == who and ans == Answer.HARDER.value)
        return COMMITTED_DIFFICULTY * harder

    def defense_dice(self, defender: str, pool: int, attack_number: int) -> int:
        """D13: the dice ``defender`` rolls against the ``attack_number``-th attack on it this
        round: -2 per further attack if it carries on an attack, -1 if it declared a defense.
        At 0 the attack lands without a defense roll (the caller resolves it against 0
        successes). A committed attacker has no defense at all (D5): always 0."""
        if self._committed(defender):
            return 0
        mine = self.standing(defender)
        stance = Stance.ATTACKING if mine and mine.action in ATTACKS else Stance.DEFENDING
        return max(pool + piling_on(stance, attack_number), 0)

    def split_penalty(self, who: str, wits: int) -> int:
        """D14 with D16: the dice each of ``who``'s actions loses. Each successful abort of a
        void action counts as one more action; a defense brought by an abort against an attack
        carries no split penalty."""
        mine = self.standing(who)
        if mine is None:
            raise RuleError("D14", f"{named(who)} has declared nothing.")
        if mine.abort_reason in {AbortReason.LATER_ATTACK.value, AbortReason.COMMITTED.value}:
            return 0
        void = sum(1 for name, ok, why in self.aborts if name == who and ok and why == "void")
        return split(mine.actions + void, max(wits, mine.actions + void))

    def negate(self, *names: str) -> WodRound:
        """G5: a third party broke up a grapple before either side acted: both grapplers'
        actions this phase are negated (they resolve to nothing)."""
        for name in names:
            if self.declaration(name) is None or name in self.resolved:
                raise RuleError("G5", f"{named(name)} has no unresolved action to negate.")
        return replace(self, negated=(*self.negated, *names))

    def _committed(self, who: str) -> bool:
        """D5: a committed attacker has no defense for the rest of the round."""
        mine = [self.declaration(who), self.standing(who)]
        return any(
            d is not None and d.action in ATTACKS and d.maneuver == "committed" for d in mine
        )

    def _open_redeclaration(self, who: str, reason: AbortReason) -> WodRound:
        kept = tuple(d for d in self.declarations if d.who != who)
        marker = Declaration(who=who, action="pending", aborted=True, abort_reason=reason.value)
        return replace(self, declarations=(*kept, marker))

    def resolve(self, who: str) -> WodRound:
        """D4: actions resolve from the highest initiative to the lowest."""
        if self.step is not Step.RESOLVE or who not in self.up:
            raise RuleError("D4", f"It is not {named(who)}'s turn to resolve.")
        mine = self.declaration(who)
        if mine is not None and mine.action == "pending":
            raise RuleError("D16", f"{named(who)} aborted: declare the new action first.")
        if self._committed(who) and who not in self.negated:
            answered = {(a, t) for a, t, _ans in self.answers}
            if mine is not None and (who, mine.target) not in answered:
                raise RuleError(
                    "D5",
                    f"{named(mine.target)} first accepts the committed attack, takes +2 difficulty"
                    " or aborts to a defense.",
                )
        state = replace(self, resolved=(*self.resolved, who))
        if all(name in state.resolved or state._skipped(name) for name in self.up):
            return state._advance()
        return state

    def _skipped(self, name: str) -> bool:
        """G5: a character released from a Pin has no Main Phase action."""
        return self.phase.name == "main" and name in self.lost_main

    def _skip(self) -> WodRound:
        """Pass over slots made only of characters with no action in this phase (G5)."""
        state = self
        while state.step in {Step.DECLARE, Step.RESOLVE} and all(
            state._skipped(name) for name in state.up
        ):
            state = state._advance(skip=False)
        return state

    def _advance(self, skip: bool = True) -> WodRound:
        order = self.phase.declare if self.step is Step.DECLARE else self.phase.resolve
        if self.cursor + 1 < len(order):
            state = replace(self, cursor=self.cursor + 1)
        elif self.step is Step.DECLARE:
            state = replace(self, step=Step.RESOLVE, cursor=0)
        elif self.phase_index + 1 < len(self.phases):
            state = replace(
                self,
                phase_index=self.phase_index + 1,
                step=Step.DECLARE,
                cursor=0,
                declarations=(),
                resolved=(),
                aborts=(),
                answers=(),
                negated=(),
                main_declarations=self.declarations
                if self.phase_index == 0
                else self.main_declarations,
            )
        else:
            state = replace(self, step=Step.BOOK_KEEPING, cursor=0)
        return state._skip() if skip else state

    def book_keeping(
        self, effects: Sequence[TimedEffect]
    ) -> tuple[WodRound, tuple[TimedEffect, ...]]:
        """D17: at the end of the round effects measured in rounds tick down; the ones that
        run out expire. Returns the finished round and the effects still running."""
        if self.step is not Step.BOOK_KEEPING:
            raise RuleError("D17", "Book keeping comes after every phase has resolved.")
        ticking = [replace(e, rounds_left=e.rounds_left - 1) for e in effects]
        expired = tuple(e.name for e in ticking if e.rounds_left <= 0)
        running = tuple(e for e in ticking if e.rounds_left > 0)
        return replace(self, step=Step.OVER, expired=expired), running

    def to_dict(self) -> dict[str, Any]:
        return {
            "phases": [
                {
                    "name": p.name,
                    "declare": [sorted(s) if isinstance(s, frozenset) else s for s in p.declare],
                    "resolve": [sorted(s) if isinstance(s, frozenset) else s for s in p.resolve],
                }
                for p in self.phases
            ],
            "phase_index": self.phase_index,
            "step": self.step.value,
            "cursor": self.cursor,
            "declarations": [vars(d) for d in self.declarations],
            "resolved": list(self.resolved),
            "aborts": [list(a) for a in self.aborts],
            "expired": list(self.expired),
            "answers": [list(a) for a in self.answers],
            "lost_main": list(self.lost_main),
            "negated": list(self.negated),
            "main_declarations": [vars(d) for d in self.main_declarations],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WodRound:
        def slot(value: Any) -> Slot:
            return frozenset(value) if isinstance(value, list) else value

        phases = tuple(
            Phase(
                p["name"],
                tuple(slot(s) for s in p["declare"]),
                tuple(slot(s) for s in p["resolve"]),
            )
            for p in data["phases"]
        )
        return cls(
            phases=phases,
            phase_index=data["phase_index"],
            step=Step(data["step"]),
            cursor=data["cursor"],
            declarations=tuple(_declaration(d) for d in data["declarations"]),
            resolved=tuple(data["resolved"]),
            aborts=tuple(
                (a[0], a[1], a[2] if len(a) > 2 else AbortReason.VOID.value) for a in data["aborts"]
            ),
            expired=tuple(data["expired"]),
            answers=tuple((a[0], a[1], a[2]) for a in data.get("answers", ())),
            lost_main=tuple(data.get("lost_main", ())),
            negated=tuple(data.get("negated", ())),
            main_declarations=tuple(_declaration(d) for d in data.get("main_declarations", ())),
        )


def _declaration(data: Mapping[str, Any]) -> Declaration:
    extra = tuple((a, t) for a, t in data.get("extra", ()))
    return Declaration(**{**data, "extra": extra})
