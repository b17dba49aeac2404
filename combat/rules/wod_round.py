"""D4: a wod_dice combat round, driven one declaration and one resolution at a time.

Main Phase: declare from the lowest initiative to the highest, resolve from the highest to
the lowest; then haste phase n for those with haste actions left; then Book Keeping (D17).
A declaration stays private until its resolution (tied characters declare privately to the
storyteller, D3). Aborts (D16) replace a declaration that has not been resolved yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from combat.rules.errors import RuleError
from combat.rules.wod_initiative import Combatant, Phase, Slot, round_phases


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


@dataclass(frozen=True)
class TimedEffect:
    """An effect lasting a number of rounds (D17 expires it at Book Keeping)."""

    name: str
    who: str
    rounds_left: int


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
    aborts: tuple[tuple[str, bool], ...] = ()  # (who, succeeded) this phase
    expired: tuple[str, ...] = ()

    @classmethod
    def start(
        cls, combatants: Sequence[Combatant], haste: Mapping[str, int] | None = None
    ) -> WodRound:
        """D3, D4: initiative rolled (the dice are in the combatants), phases laid out."""
        if not combatants:
            raise RuleError("D4", "A combat round needs combatants.")
        return cls(phases=round_phases(combatants, haste))

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

    def view_for(self, who: str) -> list[Declaration]:
        """Declarations one character may see: its own and those already resolved."""
        return [d for d in self.declarations if d.who == who or d.who in self.resolved]

    def declare(self, declaration: Declaration) -> WodRound:
        """D4, D5, D14: the character whose turn it is to declare names its action."""
        if self.step is not Step.DECLARE or declaration.who not in self.up:
            raise RuleError("D4", f"It is not {declaration.who}'s turn to declare.")
        haste = self.phase.name != "main"
        if haste and declaration.maneuver == "committed":
            raise RuleError("D5", "A committed attack is never made in a haste phase.")
        if haste and declaration.actions > 1:
            raise RuleError("D14", "Haste actions are never split.")
        state = replace(self, declarations=(*self.declarations, declaration))
        if all(state.declaration(name) for name in self.up):
            return state._advance()
        return state

    def abort(self, who: str, *, successes: int) -> WodRound:
        """D16: Willpower at difficulty 8; one success lets the character declare anew
        (a second abort needs the first to have succeeded)."""
        if self.declaration(who) is None or who in self.resolved:
            raise RuleError("D16", "Only a declared, unresolved action can be aborted.")
        earlier = [ok for name, ok in self.aborts if name == who]
        if earlier and not earlier[-1]:
            raise RuleError("D16", "A second abort needs the first to have succeeded.")
        aborts = (*self.aborts, (who, successes > 0))
        if successes <= 0:
            return replace(self, aborts=aborts)
        kept = tuple(d for d in self.declarations if d.who != who)
        marker = Declaration(who=who, action="defense", aborted=True)
        return replace(self, aborts=aborts, declarations=(*kept, marker))

    def redeclare(self, declaration: Declaration) -> WodRound:
        """D16: after a successful abort the new action replaces the old one."""
        current = self.declaration(declaration.who)
        if current is None or not current.aborted:
            raise RuleError("D16", "Declare anew only after a successful abort.")
        kept = tuple(d for d in self.declarations if d.who != declaration.who)
        return replace(self, declarations=(*kept, replace(declaration, aborted=True)))

    def resolve(self, who: str) -> WodRound:
        """D4: actions resolve from the highest initiative to the lowest."""
        if self.step is not Step.RESOLVE or who not in self.up:
            raise RuleError("D4", f"It is not {who}'s turn to resolve.")
        state = replace(self, resolved=(*self.resolved, who))
        if all(name in state.resolved for name in self.up):
            return state._advance()
        return state

    def _advance(self) -> WodRound:
        order = self.phase.declare if self.step is Step.DECLARE else self.phase.resolve
        if self.cursor + 1 < len(order):
            return replace(self, cursor=self.cursor + 1)
        if self.step is Step.DECLARE:
            return replace(self, step=Step.RESOLVE, cursor=0)
        if self.phase_index + 1 < len(self.phases):
            return replace(
                self,
                phase_index=self.phase_index + 1,
                step=Step.DECLARE,
                cursor=0,
                declarations=(),
                resolved=(),
                aborts=(),
            )
        return replace(self, step=Step.BOOK_KEEPING, cursor=0)

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
            declarations=tuple(Declaration(**d) for d in data["declarations"]),
            resolved=tuple(data["resolved"]),
            aborts=tuple((a[0], a[1]) for a in data["aborts"]),
            expired=tuple(data["expired"]),
        )
