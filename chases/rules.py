"""Chases (K1–K12): a Prey running from one or more Predators, one round at a time.

A :class:`Chase` starts cold (K3), from an escape defense (K4), by stalk and pounce (K5), or
from a Lead the storyteller sets. Each round both sides roll their chase pools (K2) and the
engine is given the successes (K6); the winner may then make one maneuver (K7, K8); obstacles
(K9) are faced with the results the participants rolled. The chase ends (K10) when the Prey
escapes, is caught, or someone crashes out. Every step returns a new frozen :class:`Chase` or
raises :class:`RuleError`; dice are rolled by the caller.

With several Predators (K1) each has its own :class:`Pursuit` and Lead: the Prey rolls once
a round against each Predator's roll, any Predator that catches it ends the chase, and it
escapes once it has escaped every one of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from combat.rules.errors import RuleError

PREY = "prey"
#: The name a lone Predator goes by when the caller does not name it.
PREDATOR = "predator"
#: K6: the base course difficulty; an empty highway 4, rush hour 9.
BASE_DIFFICULTY = 6
OPEN_HIGHWAY_DIFFICULTY = 4
RUSH_HOUR_DIFFICULTY = 9
#: K1, K10: with this Lead or more the Prey escapes by winning a round.
ESCAPE_LEAD = 10
#: K11: attacks need the Lead below these.
WEAPON_LEAD = 5
POWER_LEAD = 7
#: K8: Attack Run counts the Lead this much lower for the Predator's attacks.
ATTACK_RUN_REDUCTION = 4
#: K12: a chase round lasts fifteen seconds of game time.
ROUND_SECONDS = 15
#: D1's clamp, applied to course difficulties after maneuvers.
MIN_DIFFICULTY, MAX_DIFFICULTY = 2, 10

_ATTRIBUTES = {
    "strength",
    "dexterity",
    "stamina",
    "charisma",
    "manipulation",
    "appearance",
    "perception",
    "intelligence",
    "wits",
}


class Role(Enum):
    """K1: the two sides of a chase."""

    PREY = "prey"
    PREDATOR = "predator"


class PreyManeuver(Enum):
    """K7: what the Prey may buy with Lead."""

    BAIT = "bait"
    GUN_IT = "gun_it"
    QUICK_REVERSE = "quick_reverse"
    NEVER_TELL_ME_THE_ODDS = "never_tell_me_the_odds"
    IN_THERE = "in_there"
    NOPE = "nope"

    @property
    def lead(self) -> int:
        """K7: the change to the Lead (a cost, so never positive)."""
        return -_PREY_COST[self]

    @property
    def on_obstacle(self) -> bool:
        """K8: Nope! is used only when an obstacle is confronted."""
        return self is PreyManeuver.NOPE


class PredatorManeuver(Enum):
    """K8: what a Predator may do by giving the Prey Lead."""

    TAIL = "tail"
    GUN_IT = "gun_it"
    HERD = "herd"
    ATTACK_RUN = "attack_run"
    HEAD_OFF = "head_off"
    DAMNIT = "damnit"

    @property
    def lead(self) -> int:
        """K8: the Lead the Prey gains."""
        return _PREDATOR_GAIN[self]

    @property
    def on_obstacle(self) -> bool:
        """K8: Damnit! is used only when an obstacle is confronted."""
        return self is PredatorManeuver.DAMNIT


_PREY_COST = {
    PreyManeuver.BAIT: 2,
    PreyManeuver.GUN_IT: 2,
    PreyManeuver.QUICK_REVERSE: 3,
    PreyManeuver.NEVER_TELL_ME_THE_ODDS: 1,
    PreyManeuver.IN_THERE: 1,
    PreyManeuver.NOPE: 3,
}
_PREDATOR_GAIN = {
    PredatorManeuver.TAIL: 1,
    PredatorManeuver.GUN_IT: 2,
    PredatorManeuver.HERD: 2,
    PredatorManeuver.ATTACK_RUN: 1,
    PredatorManeuver.HEAD_OFF: 4,
    PredatorManeuver.DAMNIT: 3,
}


_NEW_COURSE = {PreyManeuver.IN_THERE, PredatorManeuver.HERD}


def changes_course(by: str, name: PreyManeuver | PredatorManeuver | str) -> bool:
    """K7 In there!, K8 Herd: the maneuvers that set a new course, for which the tablet asks
    the winner to pick the part of the chase pool it uses."""
    try:
        return maneuver_of(by, name) in _NEW_COURSE
    except RuleError:
        return False


class Effect(Enum):
    """K7, K8: what a maneuver does to the next round."""

    PREY_MOS_HALVED = "prey_mos_halved"
    PREDATOR_MOS_HALVED = "predator_mos_halved"
    PREDATOR_MOS_DOUBLED = "predator_mos_doubled"
    PREY_EASIER = "prey_easier"
    PREDATOR_EASIER = "predator_easier"


_EFFECTS: dict[PreyManeuver | PredatorManeuver, Effect] = {
    PreyManeuver.BAIT: Effect.PREDATOR_MOS_HALVED,
    PreyManeuver.GUN_IT: Effect.PREY_EASIER,
    PredatorManeuver.TAIL: Effect.PREY_MOS_HALVED,
    PredatorManeuver.GUN_IT: Effect.PREDATOR_EASIER,
    PredatorManeuver.HEAD_OFF: Effect.PREDATOR_MOS_DOUBLED,
}


class Obstacle(Enum):
    """K9: how a participant came through an obstacle."""

    PASSED = "passed"
    FAILED = "failed"
    NOPE = "nope"
    DAMNIT = "damnit"


class Status(Enum):
    """K1, K9, K10: where one Predator's pursuit of the Prey stands."""

    RUNNING = "running"
    ESCAPED = "escaped"
    CAUGHT = "caught"
    OUT = "out"


class Outcome(Enum):
    """K10, K9: how a chase ended."""

    ESCAPED = "escaped"
    CAUGHT = "caught"
    PREY_OUT = "prey_out"
    PREDATOR_OUT = "predator_out"
    BOTH_OUT = "both_out"


class Terrain(Enum):
    """K2: where the chase runs, which sets the chase pool."""

    FOOT = "foot"
    CAR = "car"
    HEAVY_TRAFFIC = "heavy_traffic"
    WATER = "water"


class AttackMeans(Enum):
    """K11: what an attack during a chase uses."""

    WEAPON = "weapon"
    POWER = "power"


@dataclass(frozen=True)
class ChasePool:
    """K2: an attribute plus an ability (``ChasePool("dexterity", "athletics")``)."""

    attribute: str
    ability: str

    def with_part(self, trait: str) -> ChasePool:
        """K7 In there!, K8 Herd: one part of the pool replaced (an attribute or an ability)."""
        trait = trait.lower()
        if trait in _ATTRIBUTES:
            return replace(self, attribute=trait)
        return replace(self, ability=trait)

    def to_dict(self) -> dict[str, Any]:
        return {"attribute": self.attribute, "ability": self.ability}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChasePool:
        return cls(attribute=str(data["attribute"]), ability=str(data["ability"]))


_TERRAIN_POOL = {
    Terrain.FOOT: ChasePool("dexterity", "athletics"),
    Terrain.CAR: ChasePool("dexterity", "drive"),
    Terrain.HEAVY_TRAFFIC: ChasePool("wits", "drive"),
    Terrain.WATER: ChasePool("strength", "athletics"),
}


def chase_pool(terrain: Terrain) -> ChasePool:
    """K2: Dexterity + Athletics on foot, Dexterity + Drive by car, Wits + Drive in heavy
    traffic or a maze, Strength + Athletics in water."""
    return _TERRAIN_POOL[terrain]


@dataclass(frozen=True)
class Course:
    """K2, K6: the terrain, the chase pool both sides roll, and the course difficulty.

    ``pool`` is ``None`` to use the terrain's pool; the storyteller may set another.
    """

    terrain: Terrain = Terrain.FOOT
    difficulty: int = BASE_DIFFICULTY
    pool: ChasePool | None = None

    @property
    def chase_pool(self) -> ChasePool:
        return self.pool if self.pool is not None else chase_pool(self.terrain)

    def to_dict(self) -> dict[str, Any]:
        return {
            "terrain": self.terrain.value,
            "difficulty": self.difficulty,
            "pool": None if self.pool is None else self.pool.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Course:
        pool = data.get("pool")
        return cls(
            terrain=Terrain(data.get("terrain", Terrain.FOOT.value)),
            difficulty=int(data.get("difficulty", BASE_DIFFICULTY)),
            pool=None if pool is None else ChasePool.from_dict(pool),
        )


@dataclass(frozen=True)
class ChaseOptions:
    """Profile options. ``sprint_rounds``: K2's five or six rounds on foot before the pool
    switches to Stamina (the storyteller's pick; six by default)."""

    sprint_rounds: int = 6

    def to_dict(self) -> dict[str, Any]:
        return {"sprint_rounds": self.sprint_rounds}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChaseOptions:
        return cls(sprint_rounds=int(data.get("sprint_rounds", 6)))


@dataclass(frozen=True)
class Pursuit:
    """K1: one Predator's own Lead on the Prey and what the last round left behind.

    ``winner`` won the round just rolled (``None`` on a tie or before any round) and may make
    one maneuver while ``maneuvered`` is false; ``effects`` apply to the next round;
    ``attack_run_through`` is the last round in which Attack Run counts (K8); ``run`` is the
    Predator's Run in rounds (K10).
    """

    predator: str
    lead: int
    status: Status = Status.RUNNING
    winner: Role | None = None
    maneuvered: bool = False
    effects: frozenset[Effect] = frozenset()
    attack_run_through: int | None = None
    run: int | None = None

    @property
    def running(self) -> bool:
        return self.status is Status.RUNNING

    def to_dict(self) -> dict[str, Any]:
        return {
            "predator": self.predator,
            "lead": self.lead,
            "status": self.status.value,
            "winner": None if self.winner is None else self.winner.value,
            "maneuvered": self.maneuvered,
            "effects": sorted(e.value for e in self.effects),
            "attack_run_through": self.attack_run_through,
            "run": self.run,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pursuit:
        winner = data.get("winner")
        return cls(
            predator=str(data["predator"]),
            lead=int(data["lead"]),
            status=Status(data.get("status", Status.RUNNING.value)),
            winner=None if winner is None else Role(winner),
            maneuvered=bool(data.get("maneuvered", False)),
            effects=frozenset(Effect(e) for e in data.get("effects", ())),
            attack_run_through=data.get("attack_run_through"),
            run=data.get("run"),
        )


def stalk_bonus(prey_successes: int, predator_successes: int) -> int:
    """K5: dice the Prey's Perception + Alertness successes, less the Predator's Manipulation
    + Subterfuge successes, add to its chase pool for the start (never fewer than 0)."""
    return max(0, prey_successes - predator_successes)


def split_penalty(actions: int) -> int:
    """D14: with N >= 2 actions each loses 2 + (N - 1) dice (a size; 0 for one action)."""
    return 0 if actions < 2 else 2 + (actions - 1)


def split_pool(pool: int, actions: int = 2) -> int:
    """K11 (by D14): attacking while chasing splits the pool, each action losing
    2 + (actions - 1) dice; pools never go below 0."""
    return max(0, pool - split_penalty(actions))


@dataclass(frozen=True)
class Chase:
    """A chase, one immutable snapshot (K1–K12).

    ``rounds`` counts the rounds rolled; ``obstacle`` names who must face the obstacle a
    maneuver set up before the next round; ``prey_out`` is set when the Prey crashed out;
    ``attacks`` holds the (attacker, target) attacks made as part of the next round (K11):
    their attackers split their chase pool for it (D14).
    """

    pursuits: tuple[Pursuit, ...]
    course: Course = field(default_factory=Course)
    rounds: int = 0
    over: Outcome | None = None
    prey_run: int | None = None
    obstacle: tuple[str, ...] = ()
    prey_out: bool = False
    options: ChaseOptions = field(default_factory=ChaseOptions)
    attacks: tuple[tuple[str, str], ...] = ()

    # ----------------------------------------------------------------- starting (K3–K5)

    @classmethod
    def cold(
        cls,
        prey_successes: int,
        botch: bool = False,
        predators: Sequence[str] = (PREDATOR,),
        **setup: Any,
    ) -> Chase:
        """K3: the Prey rolls its chase pool at 6; Head Start = successes + 1. A botch ends
        the chase before it starts, the Prey caught."""
        if botch:
            return cls._open(dict.fromkeys(predators, 0), **setup)
        return cls._open(dict.fromkeys(predators, prey_successes + 1), **setup)

    @classmethod
    def from_escape(
        cls,
        escape_successes: int,
        attack_successes: int | Mapping[str, int],
        **setup: Any,
    ) -> Chase:
        """K4 (D9): an attacker pursues an escape defense that beat its attack; Head Start =
        the escape's remaining successes. Several attackers compare against the one roll."""
        attacks = _per_predator(attack_successes)
        leads = {name: escape_successes - attack for name, attack in attacks.items()}
        beaten = [name for name, lead in leads.items() if lead <= 0]
        if beaten:
            raise RuleError("K4", "The escape did not beat the attack, so no chase starts")
        return cls._open(leads, **setup)

    @classmethod
    def pounce(
        cls,
        prey_successes: int,
        predator_successes: int | Mapping[str, int],
        **setup: Any,
    ) -> Chase:
        """K5: contested chase pools after the stalk (see :func:`stalk_bonus`); Head Start =
        Prey successes − Predator successes; 0 or less and the pounce lands."""
        rolls = _per_predator(predator_successes)
        return cls._open({name: prey_successes - roll for name, roll in rolls.items()}, **setup)

    @classmethod
    def with_lead(cls, lead: int | Mapping[str, int], **setup: Any) -> Chase:
        """K1: a chase from a Lead the storyteller sets (each Predator may have its own)."""
        leads = _per_predator(lead)
        if any(value <= 0 for value in leads.values()):
            raise RuleError("K1", "With a Lead of 0 or less the Prey is already caught")
        return cls._open(leads, **setup)

    @classmethod
    def _open(
        cls,
        leads: Mapping[str, int],
        course: Course | None = None,
        prey_run: int | None = None,
        predator_run: int | Mapping[str, int] | None = None,
        options: ChaseOptions | None = None,
    ) -> Chase:
        if not leads:
            raise RuleError("K1", "A chase needs at least one Predator")
        if PREY in leads:
            raise RuleError("K1", "The Prey cannot also be a Predator")
        runs: Mapping[str, int] = {}
        if predator_run is not None:
            runs = (
                dict.fromkeys(leads, predator_run)
                if isinstance(predator_run, int)
                else predator_run
            )
        for run in [prey_run, *runs.values()]:
            if run is not None and run < 1:
                raise RuleError("K10", "A Run allows at least one round")
        pursuits = tuple(
            Pursuit(
                predator=name,
                lead=lead,
                status=Status.CAUGHT if lead <= 0 else Status.RUNNING,
                run=runs.get(name),
            )
            for name, lead in leads.items()
        )
        chase = cls(
            pursuits=pursuits,
            course=course or Course(),
            prey_run=prey_run,
            options=options or ChaseOptions(),
        )
        return chase._conclude()

    def join(self, predator: str, lead: int) -> Chase:
        """K1, K4 with D13: another attacker whose attack the same escape roll beat pursues
        too, with its own Lead (the escape's successes left over its own attack). Only before
        the first round is rolled: after it, the chase has moved on without it."""
        self._require_running()
        if self.rounds:
            raise RuleError("K1", "A Predator joins a chase only before its first round")
        if predator == PREY or predator in self.predators:
            raise RuleError("K1", f"{predator} already takes a side in this chase")
        if lead <= 0:
            raise RuleError("K4", "The escape did not beat the attack, so no chase starts")
        return replace(self, pursuits=(*self.pursuits, Pursuit(predator=predator, lead=lead)))

    # ----------------------------------------------------------------- queries

    @property
    def running(self) -> bool:
        return self.over is None

    @property
    def lead(self) -> int:
        """K1: the Lead, when there is one Predator (otherwise see :meth:`pursuit`)."""
        if len(self.pursuits) != 1:
            raise ValueError("several Predators: each has its own Lead, ask pursuit(name)")
        return self.pursuits[0].lead

    @property
    def predators(self) -> tuple[str, ...]:
        return tuple(p.predator for p in self.pursuits)

    @property
    def game_seconds(self) -> int:
        """K12: fifteen seconds of game time per chase round."""
        return self.rounds * ROUND_SECONDS

    @property
    def pool(self) -> ChasePool:
        """K2: the chase pool for the next round; on foot, Stamina replaces Dexterity once
        the sprint has lasted ``options.sprint_rounds`` rounds."""
        pool = self.course.chase_pool
        if self.course.terrain is Terrain.FOOT and self.rounds >= self.options.sprint_rounds:
            return pool.with_part("stamina")
        return pool

    def pursuit(self, predator: str) -> Pursuit:
        for p in self.pursuits:
            if p.predator == predator:
                return p
        raise RuleError("K1", f"{predator} is not chasing the Prey")

    def difficulty(self) -> dict[str, int]:
        """K6–K8: each side's difficulty for the next round (Gun it! lowers one's own by 1)."""
        base = self.course.difficulty
        prey_easier = any(Effect.PREY_EASIER in p.effects for p in self.pursuits if p.running)
        result = {PREY: _clamp(base - (1 if prey_easier else 0))}
        for p in self.pursuits:
            result[p.predator] = _clamp(base - (1 if Effect.PREDATOR_EASIER in p.effects else 0))
        return result

    def attack_run_active(self, predator: str) -> bool:
        """K8: Attack Run counts for the Predator's attacks until the end of the next round.

        An attack now is part of the round still to be rolled (K11, ``rounds + 1``), so Attack
        Run taken after round N counts for attacks in round N + 1 and lapses once that round
        is rolled.
        """
        through = self.pursuit(predator).attack_run_through
        return through is not None and self.rounds + 1 <= through

    def can_attack(self, by: str, means: AttackMeans, against: str | None = None) -> bool:
        """K11: weapons only while the Lead is below 5, supernatural powers below 7; the
        Predator counts the Lead 4 lower under Attack Run. ``against``: which Predator the
        Prey shoots at, when there are several."""
        if not self.running:
            return False
        if by == PREY:
            pursuit = self._target(against)
            lead = pursuit.lead
        else:
            pursuit = self.pursuit(by)
            lead = pursuit.lead
            if self.attack_run_active(by):
                lead -= ATTACK_RUN_REDUCTION
        if not pursuit.running:
            return False
        limit = WEAPON_LEAD if means is AttackMeans.WEAPON else POWER_LEAD
        return lead < limit

    def split(self, who: str) -> int:
        """K11, D14: the dice ``who`` loses on its chase roll this round for the attacks it
        makes as part of it (its chase roll and one attack: 3)."""
        made = sum(1 for attacker, _ in self.attacks if attacker == who)
        return split_penalty(1 + made) if made else 0

    # ----------------------------------------------------------------- K11: attacks

    def attack(self, by: str, means: AttackMeans | str, target: str) -> Chase:
        """K11: ``by`` attacks ``target`` as part of the next round: the Prey and a Predator
        attack each other, with weapons only while the Lead is below 5 and supernatural powers
        below 7 (Attack Run counts the Lead 4 lower for its Predator). The attacker splits its
        pool (D14): its chase roll and the attack each lose 3 dice.

        **Decision**: one attack per attacker per chase round (its two actions are the chase
        roll and that attack), so the split is known when the attack is rolled.
        """
        self._require_running()
        if self.obstacle:
            raise RuleError("K9", f"First face the obstacle: {', '.join(self.obstacle)}")
        means = AttackMeans(means.value if isinstance(means, Enum) else means)
        if (by == PREY) == (target == PREY):
            raise RuleError("K11", "In a chase the Prey and a Predator attack each other")
        predator = target if by == PREY else by
        self.pursuit(predator)  # K1: an unknown Predator is refused
        if not self.can_attack(by, means, against=predator if by == PREY else None):
            limit = WEAPON_LEAD if means is AttackMeans.WEAPON else POWER_LEAD
            raise RuleError(
                "K11", f"No attack with a {means.value} unless the Lead is below {limit}"
            )
        if any(attacker == by for attacker, _ in self.attacks):
            raise RuleError("D14", "One attack a chase round besides the chase roll")
        return replace(self, attacks=(*self.attacks, (by, target)))

    # ----------------------------------------------------------------- K6, K10: rounds

    def play_round(self, prey_successes: int, predator_successes: int | Mapping[str, int]) -> Chase:
        """K6: both sides' successes at the course difficulty.

        The margin of success (MoS) is the winner's successes minus the loser's, halved or
        doubled by last round's maneuvers (halving rounds down); the Prey adds it to the
        Lead, a Predator takes it off. K10: a Prey that wins while the Lead is 10 or more
        escapes (checked before the MoS is added); a Lead of 0 or less is a catch; Runs run
        out after their last round's result.
        """
        self._require_running()
        if self.obstacle:
            raise RuleError("K9", f"First face the obstacle: {', '.join(self.obstacle)}")
        rolls = _per_predator(predator_successes, self.predators)
        running = {p.predator for p in self.pursuits if p.running}
        if set(rolls) != running:
            raise RuleError("K6", f"Every Predator still running rolls: {', '.join(running)}")
        if prey_successes < 0 or any(r < 0 for r in rolls.values()):
            raise RuleError("K6", "Successes cannot be negative")
        number = self.rounds + 1
        pursuits = []
        for p in self.pursuits:
            if p.running:
                p = _resolve(p, prey_successes, rolls[p.predator])
                if p.running and p.run is not None and number >= p.run:
                    p = replace(p, status=Status.ESCAPED)  # K10: the Predator's Run is up
            pursuits.append(p)
        chase = replace(self, pursuits=tuple(pursuits), rounds=number, attacks=())
        if chase.prey_run is not None and number >= chase.prey_run:
            # K10: the Prey's Run is up: penned in, the Lead becomes 0.
            chase = chase._map(lambda p: replace(p, lead=0, status=Status.CAUGHT))
        return chase._conclude()

    # ----------------------------------------------------------------- K7, K8: maneuvers

    def maneuver(
        self,
        by: str,
        name: PreyManeuver | PredatorManeuver | str,
        *,
        against: str | None = None,
        pick: str | None = None,
        difficulty: int | None = None,
    ) -> Chase:
        """K7, K8: the winner of the round just rolled makes one maneuver.

        ``by`` is ``"prey"`` or a Predator's name; ``against`` names the Predator a Prey
        maneuver works on when there are several; In there! and Herd may carry the ``pick``
        (the part of the chase pool the new course uses, for both sides) and may set the new
        course's ``difficulty``; without them the Lead moves by the maneuver's cost and the
        course is left as it was (a table may settle the new course by word; the tablet asks
        for the pick, see :func:`changes_course`). Any other maneuver given a ``pick`` or a
        ``difficulty`` is refused. A Prey maneuver that would bring the Lead to 0 or below is
        refused.
        """
        self._require_running()
        move = maneuver_of(by, name)
        if move.on_obstacle:
            raise RuleError("K8", "Nope! and Damnit! are used only when facing an obstacle")
        role = Role.PREY if by == PREY else Role.PREDATOR
        pursuit = self._target(against) if role is Role.PREY else self.pursuit(by)
        if not pursuit.running:
            raise RuleError("K1", f"{pursuit.predator} is no longer in the chase")
        if pursuit.winner is not role:
            raise RuleError("K6", "Only the winner of the round just rolled may maneuver")
        if pursuit.maneuvered:
            raise RuleError("K8", "One maneuver a round")
        lead = pursuit.lead + move.lead
        if role is Role.PREY and lead <= 0:
            raise RuleError("K8", "That maneuver would cost the Prey its whole Lead")
        new_course = move in _NEW_COURSE
        rule = "K7" if role is Role.PREY else "K8"
        if pick is not None and not new_course:
            raise RuleError(
                rule, "Only In there! and Herd pick a part of the chase pool for a new course"
            )
        if difficulty is not None and not new_course:
            raise RuleError(rule, "Only a new course changes the difficulty")
        pursuit = replace(pursuit, lead=lead, maneuvered=True)
        if move in _EFFECTS:
            pursuit = replace(pursuit, effects=pursuit.effects | {_EFFECTS[move]})
        if move is PredatorManeuver.ATTACK_RUN:
            pursuit = replace(pursuit, attack_run_through=self.rounds + 1)
        chase = self._put(pursuit)
        if move is PreyManeuver.QUICK_REVERSE:
            chase = chase._facing(pursuit.predator)
        elif move is PreyManeuver.NEVER_TELL_ME_THE_ODDS:
            chase = chase._facing(PREY, pursuit.predator)
        elif new_course and (pick is not None or difficulty is not None):
            course = replace(
                self.course,
                pool=self.course.pool if pick is None else self.course.chase_pool.with_part(pick),
                difficulty=self.course.difficulty if difficulty is None else difficulty,
            )
            chase = replace(chase, course=course)
        return chase

    # ----------------------------------------------------------------- K9: obstacles

    def face_obstacle(self, results: Mapping[str, Obstacle | bool | str]) -> Chase:
        """K9: everyone facing the obstacle rolled (``True``/``PASSED``, ``False``/``FAILED``)
        or passed it without a roll by Nope! (the Prey, −3 Lead) or Damnit! (a Predator, +3).

        A failure puts that participant out: the chase ends if it is the Prey or the last
        Predator, with both out if both sides failed. The Prey's Nope! is paid on every
        Predator's Lead and refused if any would drop to 0 or below.
        """
        self._require_running()
        outcome = {who: _obstacle(value) for who, value in results.items()}
        if not outcome:
            raise RuleError("K9", "Say who faces the obstacle")
        if self.obstacle and set(outcome) != set(self.obstacle):
            raise RuleError("K9", f"This obstacle is faced by {', '.join(self.obstacle)}")
        chase = self
        for who, result in outcome.items():
            if who != PREY and not self.pursuit(who).running:
                raise RuleError("K9", f"{who} is no longer in the chase")
            if result is Obstacle.NOPE and who != PREY:
                raise RuleError("K7", "Nope! is the Prey's maneuver")
            if result is Obstacle.DAMNIT and who == PREY:
                raise RuleError("K8", "Damnit! is a Predator's maneuver")
        if outcome.get(PREY) is Obstacle.NOPE:
            cost = PreyManeuver.NOPE.lead
            if any(p.lead + cost <= 0 for p in chase.pursuits if p.running):
                raise RuleError("K8", "Nope! would cost the Prey its whole Lead")
            chase = chase._map(lambda p: replace(p, lead=p.lead + cost))
        for who, result in outcome.items():
            if who == PREY:
                continue
            pursuit = chase.pursuit(who)
            if result is Obstacle.DAMNIT:
                chase = chase._put(
                    replace(pursuit, lead=pursuit.lead + PredatorManeuver.DAMNIT.lead)
                )
            elif result is Obstacle.FAILED:
                chase = chase._put(replace(pursuit, status=Status.OUT))
        chase = replace(chase, obstacle=(), prey_out=outcome.get(PREY) is Obstacle.FAILED)
        if chase.prey_out:
            both = any(r is Obstacle.FAILED for w, r in outcome.items() if w != PREY)
            return replace(chase, over=Outcome.BOTH_OUT if both else Outcome.PREY_OUT)
        return chase._conclude()

    # ----------------------------------------------------------------- JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "pursuits": [p.to_dict() for p in self.pursuits],
            "course": self.course.to_dict(),
            "rounds": self.rounds,
            "over": None if self.over is None else self.over.value,
            "prey_run": self.prey_run,
            "obstacle": list(self.obstacle),
            "prey_out": self.prey_out,
            "options": self.options.to_dict(),
            "attacks": [list(a) for a in self.attacks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chase:
        over = data.get("over")
        return cls(
            pursuits=tuple(Pursuit.from_dict(p) for p in data["pursuits"]),
            course=Course.from_dict(data.get("course", {})),
            rounds=int(data.get("rounds", 0)),
            over=None if over is None else Outcome(over),
            prey_run=data.get("prey_run"),
            obstacle=tuple(data.get("obstacle", ())),
            prey_out=bool(data.get("prey_out", False)),
            options=ChaseOptions.from_dict(data.get("options", {})),
            attacks=tuple((str(a), str(t)) for a, t in data.get("attacks", ())),
        )

    # ----------------------------------------------------------------- internals

    def _require_running(self) -> None:
        if self.over is not None:
            raise RuleError("K10", f"The chase is over ({self.over.value.replace('_', ' ')})")

    def _target(self, against: str | None) -> Pursuit:
        if against is not None:
            return self.pursuit(against)
        running = [p for p in self.pursuits if p.running]
        if len(self.pursuits) == 1:
            return self.pursuits[0]
        if len(running) == 1:
            return running[0]
        raise RuleError("K1", "Several Predators: say which one")

    def _facing(self, *who: str) -> Chase:
        """K7, K9: ``who`` face the obstacle too; an obstacle an earlier maneuver of the same
        round set up stays (the Prey paid Lead for it), and no one faces it twice."""
        return replace(self, obstacle=tuple(dict.fromkeys((*self.obstacle, *who))))

    def _put(self, pursuit: Pursuit) -> Chase:
        return self._map(lambda p: pursuit if p.predator == pursuit.predator else p)

    def _map(self, change: Any) -> Chase:
        """Apply ``change`` to every running pursuit."""
        return replace(self, pursuits=tuple(change(p) if p.running else p for p in self.pursuits))

    def _conclude(self) -> Chase:
        """K1, K9, K10: any catch ends the chase; it is over once no Predator is left running.

        Then, whatever order the Predators are listed or stopped in: with every Predator out
        (K9) it ends ``PREDATOR_OUT``; when the Prey escaped at least one and the rest crashed
        out, it has escaped every Predator still after it (K1), so it ends ``ESCAPED``.
        """
        statuses = {p.status for p in self.pursuits}
        if Status.CAUGHT in statuses:
            return replace(self, over=Outcome.CAUGHT)
        if Status.RUNNING in statuses:
            return self
        if Status.ESCAPED in statuses:
            return replace(self, over=Outcome.ESCAPED)
        return replace(self, over=Outcome.PREDATOR_OUT)


def _resolve(pursuit: Pursuit, prey: int, predator: int) -> Pursuit:
    """K6, K7, K8, K10: one Predator's round against the Prey's roll."""
    effects = pursuit.effects
    if prey > predator:
        winner: Role | None = Role.PREY
        mos = prey - predator
        if Effect.PREY_MOS_HALVED in effects:
            mos //= 2
    elif predator > prey:
        winner = Role.PREDATOR
        mos = predator - prey
        if Effect.PREDATOR_MOS_HALVED in effects:
            mos //= 2
        if Effect.PREDATOR_MOS_DOUBLED in effects:
            mos *= 2
    else:
        winner, mos = None, 0
    escaped = winner is Role.PREY and pursuit.lead >= ESCAPE_LEAD
    lead = pursuit.lead + (mos if winner is Role.PREY else -mos)
    status = Status.RUNNING
    if escaped:
        status = Status.ESCAPED
    elif lead <= 0:
        status = Status.CAUGHT
    return replace(
        pursuit, lead=lead, status=status, winner=winner, maneuvered=False, effects=frozenset()
    )


def _per_predator(
    value: int | Mapping[str, int], names: Iterable[str] = (PREDATOR,)
) -> dict[str, int]:
    if isinstance(value, Mapping):
        return {str(k): int(v) for k, v in value.items()}
    names = list(names)
    if len(names) != 1:
        raise RuleError("K1", "Several Predators: give each one's successes by name")
    return {names[0]: int(value)}


def maneuver_of(by: str, name: PreyManeuver | PredatorManeuver | str) -> Any:
    """The maneuver ``name`` as ``by`` (the Prey or a Predator) takes it (K7, K8)."""
    kind: type[Enum] = PreyManeuver if by == PREY else PredatorManeuver
    if isinstance(name, kind):
        return name
    try:
        return kind(name.value if isinstance(name, Enum) else name)
    except ValueError:
        who = "the Prey" if by == PREY else "a Predator"
        raise RuleError("K7" if by == PREY else "K8", f"{name} is not {who}'s maneuver") from None


def _obstacle(value: Obstacle | bool | str) -> Obstacle:
    if isinstance(value, Obstacle):
        return value
    if value is True:
        return Obstacle.PASSED
    if value is False:
        return Obstacle.FAILED
    return Obstacle(value)


def _clamp(difficulty: int) -> int:
    return max(MIN_DIFFICULTY, min(MAX_DIFFICULTY, difficulty))
