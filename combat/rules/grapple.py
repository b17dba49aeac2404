"""G1-G9: grapples, driven one step at a time.

A :class:`Grapple` holds who is the Grappler, who the Victim, and the Control. Steps return a
new Grapple or raise :class:`RuleError`; rolls are made by the caller and passed in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from enum import Enum
from typing import Any

from combat.rules.errors import RuleError, named
from combat.rules.penalties import split

GRAPPLE_DIFFICULTY = 6  # G3


class Over(Enum):
    """G5: how a grapple ended."""

    FREE = "free"
    PINNED = "pinned"
    RELEASED = "released"
    BROKEN_UP = "broken_up"  # G5: a third party broke it up before either side acted


class Intent(Enum):
    """G2: what the Victim does on the Grappler's resolution."""

    RESIST = "resist"
    REVERSE = "reverse"


class Declaration(Enum):
    """G2: what each side of a grapple may declare for the round."""

    SUSTAIN = "sustain"
    RELEASE = "release"
    RESIST = "resist"
    REVERSE = "reverse"
    RELENT = "relent"


GRAPPLER_DECLARATIONS = {Declaration.SUSTAIN, Declaration.RELEASE}
VICTIM_DECLARATIONS = {Declaration.RESIST, Declaration.REVERSE, Declaration.RELENT}


def check_declarations(grappler: Declaration | str, victim: Declaration | str) -> None:
    """G2: the Grappler sustains (its main action) or releases; the Victim may only resist,
    reverse or relent."""
    if _declared(grappler) not in GRAPPLER_DECLARATIONS:
        raise RuleError("G2", "The Grappler sustains the grapple or releases it.")
    if _declared(victim) not in VICTIM_DECLARATIONS:
        raise RuleError("G2", "A grappled Victim can only resist, reverse or relent.")


def _declared(value: Declaration | str) -> Declaration | None:
    try:
        return Declaration(value)
    except ValueError:
        return None


class Effect(Enum):
    """G6: effects and their cost in Control (None: all Control, or set by the storyteller)."""

    PIN = "pin"
    DISARM = "disarm"
    SHRUG_OFF = "shrug_off"
    HOSTAGE_BLOCK = "hostage_block"
    DROP = "drop"
    SLAM = "slam"
    THROW = "throw"
    PROP = "prop"
    CLINCH = "clinch"
    CRACK = "crack"
    ACTION = "action"

    @property
    def cost(self) -> int | None:
        return EFFECT_COSTS[self]

    @property
    def forced(self) -> bool:
        """G6 with G7: Shrug Off and Hostage Block answer a third party's attack; they do not
        follow a roll the Grappler won."""
        return self in FORCED_EFFECTS


EFFECT_COSTS: dict[Effect, int | None] = {
    Effect.PIN: 10,
    Effect.DISARM: 5,
    Effect.SHRUG_OFF: 1,
    Effect.HOSTAGE_BLOCK: 2,
    Effect.DROP: 2,
    Effect.SLAM: 3,
    Effect.THROW: None,
    Effect.PROP: 5,
    Effect.CLINCH: 1,
    Effect.CRACK: 4,
    Effect.ACTION: None,
}


FORCED_EFFECTS = frozenset({Effect.SHRUG_OFF, Effect.HOSTAGE_BLOCK})


@dataclass(frozen=True)
class Damage:
    """A damage pool rolled at difficulty 6 and soakable (G6 with D11, D12)."""

    type: str
    pool: int


@dataclass(frozen=True)
class Grapple:
    grappler: str
    victim: str
    control: int
    strength: tuple[tuple[str, int], ...] = ()
    over: Over | None = None
    may_perform_effect: bool = True
    sustained_this_round: bool = False
    control_decay: bool = True  # G4 profile option: on by default
    victim_prone: bool = False
    last_damage: Damage | None = None
    thrown_yards: int | None = None
    victim_acted: bool = False  # G5: the Victim's roll this round (breaking free spends it)
    released_from_pin: bool = False  # G5: the Victim loses its next Main Phase action
    victim_block_penalty: int = 0  # G7: the Victim's split pool after blocking this round

    # -- starting --------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        *,
        attacker: str,
        defender: str,
        attacker_successes: int,
        defender_successes: int,
        grappling: str,
        strength: dict[str, int] | None = None,
        control_decay: bool = True,
    ) -> Grapple:
        """G1 (with D10): the side with more successes, if it was the one grappling, becomes
        the Grappler with Control = the difference; otherwise the grapple never starts and
        the result is already over (``Over.FREE``)."""
        names = {"attacker": attacker, "defender": defender}
        if grappling not in names:
            raise RuleError("G1", "Say which side used the grapple: attacker or defender.")
        if attacker == defender:
            raise RuleError("G1", "A grapple takes two characters.")
        if attacker_successes < 0 or defender_successes < 0:
            raise RuleError("G1", "Successes are counted from 0 up.")
        scores = {"attacker": attacker_successes, "defender": defender_successes}
        other = "defender" if grappling == "attacker" else "attacker"
        margin = scores[grappling] - scores[other]
        base = cls(
            grappler=names[grappling],
            victim=names[other],
            control=max(margin, 0),
            strength=tuple(sorted((strength or {}).items())),
            control_decay=control_decay,
        )
        return base if margin > 0 else replace(base, over=Over.FREE, may_perform_effect=False)

    @classmethod
    def held(
        cls,
        *,
        grappler: str,
        victim: str,
        control: int,
        strength: dict[str, int] | None = None,
        control_decay: bool = True,
    ) -> Grapple:
        """G1, G3: a grapple in progress, right after the Grappler won its roll (so one
        effect may follow). Control must be above 0 (G5: at 0 the Victim is free)."""
        if grappler == victim:
            raise RuleError("G1", "A grapple takes two characters.")
        if control <= 0:
            raise RuleError("G5", "At Control 0 or less the Victim is free: no grapple.")
        return cls(
            grappler=grappler,
            victim=victim,
            control=control,
            strength=tuple(sorted((strength or {}).items())),
            control_decay=control_decay,
        )

    def _strength(self, who: str) -> int:
        return dict(self.strength).get(who, 0)

    def _running(self, rule: str) -> None:
        if self.over is not None:
            raise RuleError(rule, f"The grapple is over ({self.over.value}).")

    def _after(self, control: int, **changes: Any) -> Grapple:
        if control <= 0:
            return replace(self, control=0, over=Over.FREE, may_perform_effect=False, **changes)
        return replace(self, control=control, **changes)

    # -- steps -----------------------------------------------------------------------
    def roll(self, *, grappler: int, victim: int, intent: Intent = Intent.RESIST) -> Grapple:
        """G3: both roll grapple pools; the higher has the lower's successes taken off.
        Grappler higher: Control + remaining and one effect may follow. Victim higher and
        resisting: Control - remaining. Reversing needs remaining >= 2 x Control to swap
        roles (Control + remaining - 2 x Control); otherwise nothing changes."""
        self._running("G3")
        if grappler < 0 or victim < 0:
            raise RuleError("G3", "Successes are counted from 0 up.")
        cleared = replace(
            self,
            victim_acted=True,
            sustained_this_round=True,
            may_perform_effect=False,
            last_damage=None,
            thrown_yards=None,
        )
        if grappler > victim:
            return replace(
                cleared, control=self.control + grappler - victim, may_perform_effect=True
            )
        if victim == grappler:
            return cleared
        remaining = victim - grappler
        if intent is Intent.RESIST:
            return cleared._after(self.control - remaining)
        if remaining >= 2 * self.control:
            return replace(
                cleared,
                grappler=self.victim,
                victim=self.grappler,
                control=self.control + remaining - 2 * self.control,
            )
        return cleared

    def effect(self, effect: Effect, *, cost: int | None = None) -> Grapple:
        """G3, G6: one effect right after the Grappler won its roll of this resolution, paid
        for in Control (a roll of an earlier round allows none). Throw needs the Victim on its
        feet. The forced effects (Shrug Off, Hostage Block) answer a third party's attack
        (G7): they need no won roll and leave the won roll's effect, if any, to come."""
        self._running("G6")
        if not effect.forced and not self.may_perform_effect:
            raise RuleError(
                "G3", "An effect follows only the roll the Grappler has just won, this round."
            )
        if effect is Effect.THROW and self.victim_prone:
            raise RuleError("G6", "Throw needs the Victim on its feet: it is down after a Drop.")
        if effect is Effect.ACTION:
            if cost is None or not 2 <= cost <= 6:
                raise RuleError("G6", "The storyteller sets a cost from 2 to 6 for an Action.")
            price = cost
        elif effect is Effect.THROW:
            price = self.control
        else:
            price = EFFECT_COSTS[effect] or 0
        if price > self.control and not effect.forced:
            raise RuleError(
                "G6",
                f"{effect.value.replace('_', ' ').title()} costs {price} Control; "
                f"the Grappler has {self.control}.",
            )
        # G7: a forced effect is performed even when it takes Control to 0 (the grapple then
        # ends once the attack it answered is over).
        remaining = max(self.control - price, 0)
        strength = self._strength(self.grappler)
        may = self.may_perform_effect if effect.forced else False
        done = replace(self, may_perform_effect=may, last_damage=None, thrown_yards=None)
        if effect is Effect.PIN:
            return replace(done, control=remaining, over=Over.PINNED)
        if effect is Effect.THROW:
            thrown = replace(done, thrown_yards=strength + self.control, victim_prone=False)
            return replace(thrown, control=0, over=Over.FREE)
        damage = {
            Effect.SLAM: Damage("bashing", strength + remaining),
            Effect.CLINCH: Damage("bashing", strength + remaining // 2),
            Effect.CRACK: Damage("lethal", strength + remaining // 2),
        }.get(effect)
        prone = effect in {Effect.DROP, Effect.SLAM} or self.victim_prone
        return done._after(remaining, last_damage=damage, victim_prone=prone)

    def assist(self, *, side: str, successes: int) -> Grapple:
        """G7: a third party's successes; +1 Control per 2 for the Grappler, -1 per 2 for the
        Victim (rounded down)."""
        self._running("G7")
        if side not in {"grappler", "victim"}:
            raise RuleError("G7", "A helper joins the grappler or the victim.")
        change = successes // 2
        return self._after(self.control + change if side == "grappler" else self.control - change)

    def end_round(self) -> Grapple:
        """G4: at the end of a round in which it was sustained, Control - 1 (profile option)."""
        self._running("G4")
        decay = 1 if self.control_decay else 0
        # G3: the round's won roll is spent; the next effect needs the next round's roll.
        ended = replace(
            self,
            sustained_this_round=False,
            may_perform_effect=False,
            victim_acted=False,
            victim_block_penalty=0,
        )
        return ended._after(self.control - decay)

    def stand_up(self) -> Grapple:
        """G6: a Victim put down by a Drop or a Slam gets back on its feet (Throw needs it)."""
        self._running("G6")
        if not self.victim_prone:
            raise RuleError("G6", f"{named(self.victim)} is already on its feet.")
        return replace(self, victim_prone=False)

    def release(self) -> Grapple:
        """G5: the Grappler lets go (and, having declared, may abort, D16). Releasing a
        pinned Victim ends the Pin; the Victim then loses its action in the next Main Phase
        (:attr:`loses_next_main_action`)."""
        if self.over is Over.PINNED:
            return replace(self, over=Over.RELEASED, released_from_pin=True)
        self._running("G5")
        return replace(self, over=Over.RELEASED, may_perform_effect=False)

    def break_up(self) -> Grapple:
        """G5: a third party breaks the grapple up before either side has acted this round;
        both their actions are negated (:attr:`negated`; the round step is
        :meth:`~combat.rules.wod_round.WodRound.negate`)."""
        self._running("G5")
        if self.sustained_this_round:
            raise RuleError("G5", "Too late: the grapple has already been rolled this round.")
        return replace(self, over=Over.BROKEN_UP, may_perform_effect=False)

    def victim_block(self, *, wits: int) -> Grapple:
        """G7 with D14: a grappled Victim blocks a third party's attack by splitting its pool
        (two actions: the block and its grapple roll lose the split penalty each)."""
        self._running("G7")
        if self.victim_block_penalty:
            raise RuleError("G7", f"{named(self.victim)} has already split its pool to block.")
        return replace(self, victim_block_penalty=split(2, wits))

    @property
    def negated(self) -> tuple[str, ...]:
        """G5: whose actions a third party negated by breaking the grapple up."""
        return (self.grappler, self.victim) if self.over is Over.BROKEN_UP else ()

    @property
    def loses_next_main_action(self) -> str | None:
        """G5: the Victim released from a Pin, who has no action in the next Main Phase
        (give it to :meth:`~combat.rules.wod_round.WodRound.start` as ``lost_main``)."""
        return self.victim if self.released_from_pin else None

    def may_abort(self, who: str) -> bool:
        """G5 with D16: once the grapple ends a Grappler who released instead of rolling may
        abort; a Victim who broke free with its own roll has spent its action and may not (nor
        may the Grappler whose roll that was); a pinned Victim, or anyone while the grapple
        holds, has nothing to abort."""
        if who not in {self.grappler, self.victim}:
            raise RuleError("G5", f"{named(who)} is not in this grapple.")
        if self.over in {None, Over.PINNED, Over.BROKEN_UP} or self.released_from_pin:
            return False
        if who == self.victim:
            return not self.victim_acted
        return not self.sustained_this_round  # its roll this round was its action

    def relent(self) -> Grapple:
        """G5: the Victim gives in and is pinned."""
        self._running("G5")
        return replace(self, over=Over.PINNED, may_perform_effect=False)

    # -- persistence -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["over"] = self.over.value if self.over else None
        data["strength"] = dict(self.strength)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grapple:
        data = dict(data)
        data["over"] = Over(data["over"]) if data.get("over") else None
        data["strength"] = tuple(sorted(data.get("strength", {}).items()))
        damage = data.get("last_damage")
        data["last_damage"] = Damage(**damage) if damage else None
        return cls(**data)


@dataclass(frozen=True)
class HostageBlockOutcome:
    """G6, G7: where a third party's attack lands after a Hostage Block: on the Victim with
    its base damage (one success: the damage pool alone, D11) when the block negates it
    fully, else on the Grappler with the successes left."""

    on: str  # the name hit
    successes: int


def hostage_block_lands(grapple: Grapple, *, attack: int, block: int) -> HostageBlockOutcome:
    """G6, G7: compare the Grappler's Hostage Block roll with the third party's attack."""
    if attack < 0 or block < 0:
        raise RuleError("G7", "Successes are counted from 0 up.")
    if attack == 0:
        raise RuleError("G7", "An attack with no success does not land on anyone.")
    if block >= attack:
        return HostageBlockOutcome(on=grapple.victim, successes=1)
    return HostageBlockOutcome(on=grapple.grappler, successes=attack - block)


def single_effect(grapple: Grapple, effect: Effect, *, cost: int | None = None) -> Grapple:
    """G8: spend the opening roll's Control on one effect at once; the grapple is not
    sustained, so it ends there (released, unless the effect pinned or threw)."""
    if grapple.sustained_this_round:
        raise RuleError("G8", "A single-effect grapple follows the opening roll only.")
    done = grapple.effect(effect, cost=cost)
    return done if done.over else replace(done, over=Over.RELEASED)


def grapple_difficulty(*, attribute: str, biological: bool = True, non_humanoid: int = 0) -> int:
    """G3, G9: difficulty 6; a Dexterity + Brawl grapple needs a biological target with an
    internal skeleton, and a non-humanoid target adds 1 to 3 (the storyteller's call)."""
    if attribute == "dexterity" and not biological:
        raise RuleError("G9", "A Dexterity grapple needs a living target with a skeleton.")
    if not 0 <= non_humanoid <= 3:
        raise RuleError("G9", "A non-humanoid target adds 1 to 3 to the difficulty.")
    return GRAPPLE_DIFFICULTY + non_humanoid
