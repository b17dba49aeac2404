"""met_bns complex scenarios: turns, rounds and actions (B5-B11).

A :class:`Combat` is the state a storyteller's tablet drives one step at a time through the
phases of B11: mediation, storyteller assessment, order of action (the surprise action of
B7, then the everyman round in initiative order), the Celerity rounds of B5, then the next
turn. Every step returns a new frozen :class:`Combat` or raises :class:`RuleError`.

Within a round (B6) each character has one standard and one simple action, taken when its
initiative comes up (:meth:`Combat.act`), delayed (:meth:`Combat.delay`,
:meth:`Combat.resume`, B8), left unused (:meth:`Combat.finish`), or spent on a fair escape
(:meth:`Combat.fair_escape`, B9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from random import Random
from typing import Any

from combat.rules.bns_initiative import (
    MAX_CELERITY_ROUNDS,
    TURN_SECONDS,
    Attribute,
    Combatant,
    acts_in_round,
    draw_tiebreak,
    forgo_bonus_counts,
    initiative,
    plan_round,
)
from combat.rules.errors import RuleError, all_named, named

#: B6: steps a character may move with one action.
STEPS_PER_MOVE = 3
#: B10: prone characters crawl, or stand and move, one step per simple action.
PRONE_STEPS = 1
#: B10: within this many steps a physical attack on a prone character is close.
PRONE_CLOSE_STEPS = 3


class Phase(Enum):
    """B11: the steps of a complex scenario."""

    MEDIATION = "mediation"
    ASSESSMENT = "assessment"
    ORDER_OF_ACTION = "order_of_action"
    CELERITY_ROUNDS = "celerity_rounds"
    OVER = "over"


class Action(Enum):
    """B6: what a character does with an action.

    Each action knows whether it needs the standard action (anything that needs a challenge,
    and advanced movement), which attribute it is (B5 lets only physical ones into Celerity
    rounds) and how many steps it moves (B6, B10).
    """

    ATTACK = "attack"
    PHYSICAL_CHALLENGE = "physical_challenge"
    MENTAL_CHALLENGE = "mental_challenge"
    SOCIAL_CHALLENGE = "social_challenge"
    PHYSICAL_POWER = "physical_power"
    MENTAL_POWER = "mental_power"
    SOCIAL_POWER = "social_power"
    DRAW = "draw"
    MOVE = "move"
    JUMP = "jump"
    CLIMB = "climb"
    SWIM = "swim"
    DROP_PRONE = "drop_prone"
    CRAWL = "crawl"
    STAND_UP = "stand_up"

    @property
    def standard(self) -> bool:
        """B6: a challenge, or jumping, climbing, swimming, takes the standard action."""
        return self in _STANDARD

    @property
    def challenge(self) -> bool:
        return self in _CHALLENGES

    @property
    def attribute(self) -> Attribute:
        return _ATTRIBUTE.get(self, Attribute.PHYSICAL)

    @property
    def steps(self) -> int:
        """B6, B10: how far the action moves the character."""
        if self in {Action.MOVE, Action.JUMP, Action.CLIMB, Action.SWIM}:
            return STEPS_PER_MOVE
        if self in {Action.CRAWL, Action.STAND_UP}:
            return PRONE_STEPS
        return 0


_CHALLENGES = {
    Action.ATTACK,
    Action.PHYSICAL_CHALLENGE,
    Action.MENTAL_CHALLENGE,
    Action.SOCIAL_CHALLENGE,
}
_STANDARD = _CHALLENGES | {Action.JUMP, Action.CLIMB, Action.SWIM}
_ATTRIBUTE = {
    Action.MENTAL_CHALLENGE: Attribute.MENTAL,
    Action.MENTAL_POWER: Attribute.MENTAL,
    Action.SOCIAL_CHALLENGE: Attribute.SOCIAL,
    Action.SOCIAL_POWER: Attribute.SOCIAL,
}
_UPRIGHT_MOVES = {Action.MOVE, Action.JUMP, Action.CLIMB, Action.SWIM}


class Escape(Enum):
    """B9: where a fair escape stands."""

    ON_HOLD = "on_hold"
    ESCAPED = "escaped"
    FAILED = "failed"


def prone_defense_modifier(physical: bool, ranged: bool, distance_steps: int) -> int:
    """B10: a prone defender's pool: +2 against physical ranged attacks from more than three
    steps, -2 against physical attacks from within three steps, else nothing."""
    if not physical:
        return 0
    if distance_steps <= PRONE_CLOSE_STEPS:
        return -2
    return 2 if ranged else 0


@dataclass(frozen=True)
class Fighter:
    """One participant's state in the current round.

    ``standard`` and ``simple`` hold what filled each action this round (B6; a simple action
    in ``standard`` is a traded standard action). ``forwent`` is B8's +5 waiting for the next
    everyman round (never a Celerity round, B5); ``boosted`` says it applies to the current
    round.
    """

    sheet: Combatant
    standard: Action | None = None
    simple: Action | None = None
    begun: bool = False
    done: bool = False
    delaying: bool = False
    forwent: bool = False
    boosted: bool = False
    prone: bool = False
    attacked: bool = False
    escape: Escape | None = None
    intents: tuple[str, ...] = ()
    out: bool = False

    @property
    def name(self) -> str:
        return self.sheet.name

    @property
    def initiative(self) -> int:
        """B4 with B8's +5 when it applies to this round."""
        return initiative(self.sheet, forgo_bonus=self.boosted)

    @property
    def actions_used(self) -> tuple[Action, ...]:
        return tuple(a for a in (self.standard, self.simple) if a is not None)

    @property
    def has_action_left(self) -> bool:
        return self.standard is None or self.simple is None

    @property
    def steps(self) -> int:
        """B6: steps moved this round (three per move, six with both actions)."""
        return sum(a.steps for a in self.actions_used)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sheet": self.sheet.to_dict(),
            "standard": _value(self.standard),
            "simple": _value(self.simple),
            "begun": self.begun,
            "done": self.done,
            "delaying": self.delaying,
            "forwent": self.forwent,
            "boosted": self.boosted,
            "prone": self.prone,
            "attacked": self.attacked,
            "escape": _value(self.escape),
            "intents": list(self.intents),
            "out": self.out,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fighter:
        return cls(
            sheet=Combatant.from_dict(data["sheet"]),
            standard=_enum(Action, data.get("standard")),
            simple=_enum(Action, data.get("simple")),
            begun=bool(data.get("begun", False)),
            done=bool(data.get("done", False)),
            delaying=bool(data.get("delaying", False)),
            forwent=bool(data.get("forwent", False)),
            boosted=bool(data.get("boosted", False)),
            prone=bool(data.get("prone", False)),
            attacked=bool(data.get("attacked", False)),
            escape=_enum(Escape, data.get("escape")),
            intents=tuple(data.get("intents", ())),
            out=bool(data.get("out", False)),
        )


@dataclass(frozen=True)
class Combat:
    """A met_bns complex scenario (B4-B11), one immutable snapshot.

    ``round`` is 0 for the everyman round and k for Celerity round k; ``order`` is that
    round's initiative order; ``cursor`` points at the next character on its natural
    initiative; ``queue`` holds delayers who stepped back in (B8) and act before it;
    ``surprise_by`` is the character whose surprise action (B7) is still to come.
    """

    phase: Phase
    fighters: tuple[Fighter, ...]
    tiebreak: tuple[str, ...]
    turn: int = 0
    round: int = 0
    order: tuple[str, ...] = ()
    cursor: int = 0
    queue: tuple[str, ...] = ()
    surprise_by: str | None = None
    game_seconds: int = 0
    mediated: bool = False

    # ----------------------------------------------------------------- B11: setting up

    @classmethod
    def begin(
        cls,
        combatants: Sequence[Combatant],
        rng: Random | None = None,
        tiebreak: Sequence[str] | None = None,
    ) -> Combat:
        """B11: a complex scenario opens with mediation. B4's random ties are drawn here."""
        names = [c.name for c in combatants]
        if len(set(names)) != len(names):
            raise RuleError("B11", f"Each character takes part once: {all_named(names)}")
        for c in combatants:
            if min(c.physical, c.mental, c.social, c.celerity) < 0:
                raise RuleError(
                    "B4", f"{named(c.name)}: attributes and Celerity are counted from 0."
                )
        if tiebreak is None:
            if rng is None:
                raise ValueError("Combat.begin needs an rng or a tiebreak (B4)")
            tiebreak = draw_tiebreak(names, rng)
        fighters = tuple(Fighter(sheet=c, forwent=c.forwent_last_round) for c in combatants)
        return cls(phase=Phase.MEDIATION, fighters=fighters, tiebreak=tuple(tiebreak))

    def mediate(self, agreed: bool, approved: bool = True) -> Combat:
        """B11 mediation: an outcome everyone agrees to and the storyteller approves ends the
        scenario; otherwise the storyteller assesses the scene."""
        self._require(Phase.MEDIATION, "B11", "Mediation comes first, before anything else")
        if agreed and approved:
            return replace(self, phase=Phase.OVER, mediated=True)
        return replace(self, phase=Phase.ASSESSMENT)

    def assess(self, participants: Sequence[str], started_by: str | None = None) -> Combat:
        """B11 storyteller assessment: the scene is frozen and the participants named; the one
        whose action started the combat takes its surprise action first (B7)."""
        self._require(Phase.ASSESSMENT, "B11", "The storyteller assesses after mediation fails")
        known = {f.name for f in self.fighters}
        unknown = [name for name in participants if name not in known]
        if unknown:
            raise RuleError("B11", f"{all_named(unknown)} is not in this scene")
        if not participants:
            raise RuleError("B11", "Name at least one character taking part")
        if started_by is not None and started_by not in participants:
            raise RuleError(
                "B7", f"{named(started_by)} is not taking part, so cannot start the combat"
            )
        fighters = tuple(f for f in self.fighters if f.name in participants)
        started = replace(self, fighters=fighters, turn=1, surprise_by=started_by)
        return started._start_round(0)

    def end_combat(self) -> Combat:
        """B11: the storyteller ends the scenario."""
        if self.phase is Phase.OVER:
            raise RuleError("B11", "This combat is already over")
        return replace(self, phase=Phase.OVER)

    # ----------------------------------------------------------------- queries

    def fighter(self, name: str) -> Fighter:
        for f in self.fighters:
            if f.name == name:
                return f
        raise RuleError("B11", f"{named(name)} is not taking part in this combat")

    @property
    def round_label(self) -> str:
        return "everyman" if self.round == 0 else f"celerity {self.round}"

    @property
    def current(self) -> str | None:
        """Whose actions are being resolved now (B7, B8): the surprise action's owner, a
        delayer who stepped back in, or the next character on its initiative."""
        if self.phase not in _IN_ROUND:
            return None
        if self.surprise_by is not None:
            return self.surprise_by
        if self.queue:
            return self.queue[0]
        if self.cursor < len(self.order):
            return self.order[self.cursor]
        return None

    @property
    def initiatives(self) -> dict[str, int]:
        """B4, B8: this round's initiative of everyone acting in it."""
        return {name: self.fighter(name).initiative for name in self.order}

    @property
    def escapes(self) -> dict[str, str]:
        """B9: every fair escape declared, by name: on_hold, escaped or failed."""
        return {f.name: f.escape.value for f in self.fighters if f.escape is not None}

    def defense_modifier(
        self, defender: str, physical: bool, ranged: bool, distance_steps: int
    ) -> int:
        """B10: the prone modifier to ``defender``'s defense pool (0 when standing)."""
        if not self.fighter(defender).prone:
            return 0
        return prone_defense_modifier(physical, ranged, distance_steps)

    # ----------------------------------------------------------------- B7: surprise action

    def surprise(
        self,
        who: str,
        action: Action,
        target: str | None = None,
        against_physical: bool = False,
    ) -> Combat:
        """B7: the action that started the combat, resolved first and outside initiative.

        It takes one action (the standard one if it needs it, else the simple one); the
        character's other action comes on its initiative.
        """
        self._require_round()
        if self.surprise_by is None:
            raise RuleError("B7", "Only the action that starts the combat goes outside initiative")
        if who != self.surprise_by:
            raise RuleError("B7", f"{named(self.surprise_by)} started the combat and acts first")
        fighter = self.fighter(who)
        if action.standard:
            fighter = self._use(fighter, standard=action)
        else:
            fighter = self._use(fighter, simple=action)
        state = replace(self._put(fighter), surprise_by=None)
        if target is not None:
            state = state._strike(who, action, target, against_physical)
        return state._settle()

    # ----------------------------------------------------------------- B6: actions

    def act(
        self,
        who: str,
        *,
        standard: Action | None = None,
        simple: Action | None = None,
        target: str | None = None,
        against_physical: bool = False,
    ) -> Combat:
        """B6: the current character uses its standard and/or simple action.

        ``standard`` may hold a simple action (the standard traded for a second simple one);
        ``simple`` may not hold a standard action. A lone simple action goes into the
        standard slot once the simple one is spent. ``target`` is the target of the challenge
        (B9 watches physical attacks, and mental or social ones ``against_physical``).

        B7: while the combat's starter has its opening action to take, that action is the one
        it takes here: resolved first, outside initiative (:meth:`surprise`); its other action
        comes on its initiative.
        """
        if self.phase in _IN_ROUND and who == self.surprise_by:
            if standard is not None and simple is not None:
                raise RuleError(
                    "B7", "The action that starts the combat is one action; the other comes later"
                )
            opening = standard if standard is not None else simple
            if opening is None:
                raise RuleError("B6", "Say which action to take")
            return self.surprise(who, opening, target=target, against_physical=against_physical)
        state = self._turn_for(who)
        if standard is None and simple is None:
            raise RuleError("B6", "Say which action to take")
        fighter = state.fighter(who)
        for action in (standard, simple):
            if action is not None and self.round > 0 and action.attribute is not Attribute.PHYSICAL:
                raise RuleError(
                    "B5", "Only physical actions in a Celerity round: no mental or social challenge"
                )
        if simple is not None and simple.standard:
            raise RuleError(
                "B6", "A simple action cannot be traded for a standard one; use the standard action"
            )
        challenges = [a for a in (standard, simple) if a is not None and a.challenge]
        if target is not None and not challenges:
            raise RuleError("B6", "Only a challenge has a target")
        if standard is None and simple is not None and fighter.simple is not None:
            standard, simple = simple, None  # B6: the standard action traded for a simple one
        fighter = state._use_in_some_order(fighter, standard, simple)
        fighter = replace(fighter, begun=True, delaying=False)
        state = state._put(fighter)
        if target is not None:
            state = state._strike(who, challenges[0], target, against_physical)
        if not fighter.has_action_left:
            state = state._done(who)
        return state._settle()

    def attack(self, by: str, target: str) -> Combat:
        """B6: a physical attack on ``target`` with the standard action (B7: the starter's
        opening attack, resolved first; its target has been attacked before its initiative,
        so a fair escape it declares this round fails, B9)."""
        return self.act(by, standard=Action.ATTACK, target=target)

    def finish(self, who: str) -> Combat:
        """B6: the current character leaves its remaining actions unused this round.

        Nobody has to say it: once a character has acted, the next one in the order may
        simply act (:meth:`act`), and what the first left unused is forgone.
        """
        return self._turn_for(who)._done(who)._settle()

    # ----------------------------------------------------------------- B8: delay

    def delay(self, who: str) -> Combat:
        """B8: the current character holds its remaining actions for later in the round."""
        state = self._turn_for(who)
        fighter = replace(state.fighter(who), delaying=True)
        state = state._put(fighter)
        if state.queue and state.queue[0] == who:
            state = replace(state, queue=state.queue[1:])
        else:
            state = replace(state, cursor=state.cursor + 1)
        return state._settle()

    def resume(self, *names: str) -> Combat:
        """B8: delayers step back in now, before the next character on its initiative; the
        delayer acts after whoever just acted on its natural initiative, and delayers stepping
        in at the same moment go in initiative order."""
        self._require_round()
        if not names:
            raise RuleError("B8", "Name who steps back in")
        if self.surprise_by is not None:
            raise RuleError(
                "B7", f"{named(self.surprise_by)}'s action started the combat: it goes first"
            )
        for name in names:
            fighter = self.fighter(name)
            if not fighter.delaying or name in self.queue:
                raise RuleError("B8", f"{named(name)} is not delaying an action")
        state = self
        current = self.current
        if current is not None and self.fighter(current).begun:
            # B6: whoever has acted is passed; what it left unused is forgone.
            state = self._done(current)._settle()
        queue = sorted({*state.queue, *names}, key=state.order.index)
        return replace(state, queue=tuple(queue))

    # ----------------------------------------------------------------- B9: fair escape

    def fair_escape(
        self,
        who: str,
        announced_by: Sequence[str] = (),
        *,
        way_out: bool = True,
        can_be_attacked: bool = True,
    ) -> Combat:
        """B9: a fair escape declared at the start of ``who``'s own initiative.

        ``announced_by``: characters yet to act who announce an intent to attack it.
        ``way_out`` false (grappled, locked in) refuses the escape; ``can_be_attacked`` false
        (nobody can physically attack it this round) lets it succeed at once.
        """
        state = self._turn_for(who)
        fighter = state.fighter(who)
        if fighter.begun:
            raise RuleError("B9", "A fair escape is declared at the start of your initiative")
        if fighter.escape is not None:
            raise RuleError("B9", "Only one fair escape a round")
        if not way_out:
            raise RuleError("B9", "No logical way out: no fair escape while grappled or locked in")
        if fighter.attacked:
            failed = replace(fighter, escape=Escape.FAILED, begun=True)
            return state._put(failed)._settle()
        for name in announced_by:
            other = state.fighter(name)
            if name == who or other.out or other.done or not other.has_action_left:
                raise RuleError("B9", f"{named(name)} has no action left to attack with this round")
            if name not in state.order:
                raise RuleError("B9", f"{named(name)} does not act in this round")
        if not announced_by or not can_be_attacked:
            escaped = replace(fighter, escape=Escape.ESCAPED, out=True, begun=True)
            return state._put(escaped)._done(who)._settle()
        held = replace(fighter, escape=Escape.ON_HOLD, intents=tuple(announced_by), begun=True)
        return state._put(held)._done(who)._settle()

    # ----------------------------------------------------------------- B5, B11: rounds

    def end_round(self) -> Combat:
        """B5, B8, B9, B11: close the round; on to the next Celerity round or the next turn.

        Escapes on hold succeed. Whoever acts in this round and used no action at all gets
        +5 initiative in the next everyman round (B8 with B5, not cumulative).
        """
        self._require_round()
        if self.surprise_by is not None:
            raise RuleError("B7", "The action that started the combat is resolved first")
        fighters = []
        for f in self.fighters:
            if f.escape is Escape.ON_HOLD:
                f = replace(f, escape=Escape.ESCAPED, out=True)
            if f.name in self.order and not f.out:
                idle = not f.actions_used and f.escape is None
                f = replace(f, boosted=False, forwent=idle or f.forwent)
            fighters.append(f)
        state = replace(self, fighters=tuple(fighters))
        for number in range(self.round + 1, MAX_CELERITY_ROUNDS + 1):
            if any(acts_in_round(f.sheet, number) for f in state.fighters if not f.out):
                return state._start_round(number)
        next_turn = replace(
            state, turn=self.turn + 1, game_seconds=self.game_seconds + TURN_SECONDS
        )
        return next_turn._start_round(0)

    # ----------------------------------------------------------------- JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase.value,
            "fighters": [f.to_dict() for f in self.fighters],
            "tiebreak": list(self.tiebreak),
            "turn": self.turn,
            "round": self.round,
            "order": list(self.order),
            "cursor": self.cursor,
            "queue": list(self.queue),
            "surprise_by": self.surprise_by,
            "game_seconds": self.game_seconds,
            "mediated": self.mediated,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Combat:
        return cls(
            phase=Phase(data["phase"]),
            fighters=tuple(Fighter.from_dict(f) for f in data["fighters"]),
            tiebreak=tuple(data["tiebreak"]),
            turn=int(data.get("turn", 0)),
            round=int(data.get("round", 0)),
            order=tuple(data.get("order", ())),
            cursor=int(data.get("cursor", 0)),
            queue=tuple(data.get("queue", ())),
            surprise_by=data.get("surprise_by"),
            game_seconds=int(data.get("game_seconds", 0)),
            mediated=bool(data.get("mediated", False)),
        )

    # ----------------------------------------------------------------- internals

    def _require(self, phase: Phase, rule: str, reason: str) -> None:
        if self.phase is not phase:
            raise RuleError(rule, reason)

    def _require_round(self) -> None:
        if self.phase not in _IN_ROUND:
            raise RuleError("B11", "Actions come after the storyteller's assessment")

    def _turn_for(self, who: str) -> Combat:
        """B4, B6, B9: the state in which ``who`` acts now.

        Once the character whose initiative it is has acted (one action or more), the next
        character in the order may act (or declare a fair escape) without anyone saying the
        first has finished: what the first left unused is forgone. A delayer, or a character
        whose fair escape failed, may likewise step back in by acting (B8, B9).
        """
        current = self.current
        if (
            self.phase in _IN_ROUND
            and self.surprise_by is None
            and who in self.order
            and self.fighter(who).delaying
            and who not in self.queue
            and (current is None or self.fighter(current).begun)
        ):
            # B8: a delayer (or a failed fair escape, B9) steps back in by acting, once the
            # character whose initiative it is has acted or nobody is left.
            stepped_in = self.resume(who)
            if stepped_in.current == who:
                return stepped_in
        if (
            self.phase in _IN_ROUND
            and self.surprise_by is None
            and current is not None
            and current != who
            and self.fighter(current).begun
        ):
            passed = self._done(current)._settle()
            if passed.current == who:
                passed._require_turn_of(who)
                return passed
        self._require_turn_of(who)
        return self

    def _require_turn_of(self, who: str) -> None:
        self._require_round()
        fighter = self.fighter(who)
        if fighter.out:
            raise RuleError("B9", f"{named(who)} has escaped and cannot return to this combat")
        if self.surprise_by is not None:
            raise RuleError(
                "B7", f"{named(self.surprise_by)}'s action started the combat: it goes first"
            )
        if who not in self.order:
            raise RuleError("B5", f"{named(who)} does not act in {self.round_label}")
        if fighter.escape is Escape.ON_HOLD:
            raise RuleError("B9", f"{named(who)} takes no other action while the escape is on hold")
        current = self.current
        if who != current:
            if fighter.delaying:
                raise RuleError("B8", f"{named(who)} is delaying: step back in first")
            if fighter.done:
                raise RuleError("B6", f"{named(who)} has already acted this round")
            raise RuleError("B4", f"It is {named(current)}'s initiative, not {named(who)}'s")

    def _use(
        self, fighter: Fighter, standard: Action | None = None, simple: Action | None = None
    ) -> Fighter:
        for action, slot in ((standard, "standard"), (simple, "simple")):
            if action is None:
                continue
            if getattr(fighter, slot) is not None:
                raise RuleError("B6", f"{named(fighter.name)} has already used the {slot} action")
            fighter = _move_prone(fighter, action)
            fighter = replace(fighter, **{slot: action})
        return fighter

    def _use_in_some_order(
        self, fighter: Fighter, standard: Action | None, simple: Action | None
    ) -> Fighter:
        """B6: the two actions may come in either order (standing up, then moving)."""
        try:
            return self._use(fighter, standard=standard, simple=simple)
        except RuleError as first:
            if standard is None or simple is None or first.rule != "B10":
                raise
            return self._use(self._use(fighter, simple=simple), standard=standard)

    def _strike(self, by: str, action: Action, target: str, against_physical: bool) -> Combat:
        """B9: a physical challenge, or a mental or social one against the Physical attribute,
        counts as an attack; it breaks an escape on hold (the target may then act, B9)."""
        if target == by:
            raise RuleError("B6", "A challenge needs someone else as its target")
        victim = self.fighter(target)
        if victim.out:
            raise RuleError("B9", f"{named(target)} has escaped this combat")
        if action.attribute is not Attribute.PHYSICAL and not against_physical:
            return self
        victim = replace(victim, attacked=True)
        if victim.escape is Escape.ON_HOLD:
            victim = replace(victim, escape=Escape.FAILED, done=False, delaying=True)
        return self._put(victim)

    def _put(self, fighter: Fighter) -> Combat:
        fighters = tuple(fighter if f.name == fighter.name else f for f in self.fighters)
        return replace(self, fighters=fighters)

    def _done(self, who: str) -> Combat:
        state = self._put(replace(self.fighter(who), done=True, delaying=False))
        if state.queue and state.queue[0] == who:
            return replace(state, queue=state.queue[1:])
        if state.cursor < len(state.order) and state.order[state.cursor] == who:
            return replace(state, cursor=state.cursor + 1)
        return state

    def _settle(self) -> Combat:
        """Move the cursor past characters who have finished or escaped."""
        cursor = self.cursor
        while cursor < len(self.order):
            f = self.fighter(self.order[cursor])
            if not (f.done or f.out or f.delaying):
                break
            cursor += 1
        return replace(self, cursor=cursor)

    def _start_round(self, number: int) -> Combat:
        """B5: round ``number``'s order among those who act in it, with B8's +5 applied."""
        fighters = []
        for f in self.fighters:
            escape = Escape.ESCAPED if f.out else None
            f = replace(
                f,
                standard=None,
                simple=None,
                begun=False,
                done=False,
                delaying=False,
                attacked=False,
                escape=escape,
                intents=(),
            )
            if forgo_bonus_counts(number) and not f.out and f.forwent:
                # B8 with B5: the pending +5 counts in the everyman round only.
                f = replace(f, boosted=True, forwent=False)
            fighters.append(f)
        acting = [f for f in fighters if not f.out and acts_in_round(f.sheet, number)]
        sheets = [replace(f.sheet, forwent_last_round=f.boosted) for f in acting]
        plan = plan_round(sheets, number, self.tiebreak)
        phase = Phase.ORDER_OF_ACTION if number == 0 else Phase.CELERITY_ROUNDS
        return replace(
            self,
            phase=phase,
            fighters=tuple(fighters),
            round=number,
            order=plan.order,
            cursor=0,
            queue=(),
        )._settle()


_IN_ROUND = {Phase.ORDER_OF_ACTION, Phase.CELERITY_ROUNDS}


def _move_prone(fighter: Fighter, action: Action) -> Fighter:
    """B10: dropping prone, crawling, standing up; no upright movement while prone."""
    if action is Action.DROP_PRONE:
        if fighter.prone:
            raise RuleError("B10", f"{named(fighter.name)} is already prone")
        return replace(fighter, prone=True)
    if action in {Action.CRAWL, Action.STAND_UP} and not fighter.prone:
        raise RuleError("B10", f"{named(fighter.name)} is not prone")
    if action is Action.STAND_UP:
        return replace(fighter, prone=False)
    if action in _UPRIGHT_MOVES and fighter.prone:
        raise RuleError("B10", f"{named(fighter.name)} is prone: crawl, or stand up first")
    return fighter


def _value(member: Enum | None) -> str | None:
    return None if member is None else member.value


def _enum(kind: type[Enum], value: Any) -> Any:
    return None if value is None else kind(value)
