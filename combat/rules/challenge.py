"""A Mind's Eye Theatre challenge, one player action at a time (met_classic, met_werewolf,
met_bns).

A service starts a :class:`Challenge` and feeds it each player's action as it arrives: bids,
a throw from each side (held hidden until both have thrown), declared totals after a draw,
retests and cancels, and finally :meth:`Challenge.finish`. Each step returns a new frozen
Challenge or raises :class:`RuleError` naming the rule, leaving the old one as it was.

The steps: :meth:`~Challenge.start` (C1 bids held, C7, W6, C12/C15 Stamina-based bids, C14,
C16 mobs, W13 races, W14 required bids), :meth:`~Challenge.relent`, :meth:`~Challenge.no_bid`,
:meth:`~Challenge.name_negative` (C5, W8), :meth:`~Challenge.spend_blood` (C5),
:meth:`~Challenge.drop_out` and :meth:`~Challenge.step_in` (C16),
:meth:`~Challenge.throw`, :meth:`~Challenge.declare` (C4, W3), :meth:`~Challenge.retest`,
:meth:`~Challenge.cancel`, :meth:`~Challenge.accept` (the loser takes a throw's result; W13
scores it in an extended challenge) and :meth:`~Challenge.finish`. Reading:
:meth:`~Challenge.allowed_retests`, :meth:`~Challenge.must_drop_out`, :meth:`~Challenge.lost`,
:meth:`~Challenge.mob_lost`, :meth:`~Challenge.harms`, :meth:`~Challenge.fended_off` and
:meth:`~Challenge.initiator_lost` (for the C10 and W9 locks of :mod:`combat.rules.night`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import Enum
from functools import cache
from typing import Any

from combat.rules.errors import RuleError
from combat.rules.profiles import Family, Profile, profile
from combat.rules.terms import Category, Health, Mode, Outcome, RetestKind, Side, Throw, compare

CHOICE = "(a trait of the loser's choice)"
MOB_MOST = 5  # C16
SURPRISE_BARRED = {
    "brawl",
    "melee",
    "dodge",
}  # C12  # W8: extra traits at risk are the loser's pick


class Phase(Enum):
    THROWS = "throws"  # waiting for both throws
    DECLARATIONS = "declarations"  # C4: a draw, totals to declare
    RETESTS = "retests"  # someone is losing: retest, cancel, or finish
    OVER = "over"


@dataclass(frozen=True)
class Contender:
    """One side as the challenge reads it (the sheet's current values, passed in)."""

    traits: tuple[tuple[str, int], ...] | int = 0  # named traits with counts, or a total
    bid: str | None = None
    ability: str | None = None  # W2: the ability this challenge uses
    abilities: tuple[tuple[str, int], ...] = ()  # permanent ratings
    powers: tuple[str, ...] = ()
    temper: tuple[tuple[str, int], ...] = ()  # willpower, rage, gnosis (current)
    health: Health = Health.HEALTHY
    bonus: int = 0  # C5: blood, powers
    weapon_bonus: int = 0
    weapon_skill: bool = False
    negatives: tuple[str, ...] = ()
    blood: int = 0  # C5: blood spent for physical traits (counted in the total)
    blood_per_turn: int = 3  # C5: the generation's limit
    #: C5: blood traits bought earlier in the conflict and still lasting (counted in the total
    #: and against the 3 a challenge; not spent again, so not against the generation's limit)
    blood_kept: int = 0
    surprised: bool = False  # C12
    pool: int = 0  # B1
    name: str = ""  # who this is (C16: mob members, locks)
    #: C12, C15: which traits of the sheet are Stamina-based (trait -> flag; missing: unknown)
    stamina_based: tuple[tuple[str, bool], ...] = ()
    #: C12: the storyteller's word on whether this side's bid is Stamina-based (None: unsaid)
    stamina_ruling: bool | None = None
    outpaced: bool = False  # C15: the target of Celerity actions it cannot match
    armed: bool = False  # C14: has a weapon to counterattack a ranged attack with
    damage_base: int = 1  # B3
    damage_bonus: int = 0
    damage_reduction: int = 0

    @classmethod
    def make(cls, **raw: Any) -> Contender:
        """Build from plain values (dicts for traits, abilities and temper)."""
        data = dict(raw)
        if isinstance(data.get("traits"), dict):
            data["traits"] = tuple(sorted(data["traits"].items()))
        flagged = data.get("stamina_based")
        if isinstance(flagged, (list, set)) and all(isinstance(n, str) for n in flagged):
            data["stamina_based"] = dict.fromkeys(flagged, True)  # C12: names flagged
        for key in ("abilities", "temper", "stamina_based"):
            if isinstance(data.get(key), dict):
                data[key] = tuple(sorted(data[key].items()))
        for key in ("powers", "negatives"):
            if key in data:
                data[key] = tuple(data[key])
        if "health" in data and not isinstance(data["health"], Health):
            data["health"] = Health(data["health"])
        damage = data.pop("damage", None) or {}
        data["damage_base"] = damage.get("base", 1)
        data["damage_bonus"] = damage.get("bonus", 0)
        data["damage_reduction"] = damage.get("reduction", 0)
        return cls(**data)

    @property
    def trait_count(self) -> int:
        if isinstance(self.traits, int):
            return self.traits
        return sum(count for _name, count in self.traits)

    def has_trait(self, name: str, count: int = 1) -> bool:
        if isinstance(self.traits, int):
            return self.traits >= count
        return dict(self.traits).get(name, 0) >= count

    def holds_bid(self) -> bool:
        """C1: the bid is one of the side's current traits in the category."""
        return self.bid is None or self.has_trait(self.bid)

    def bid_is_stamina_based(self) -> bool | None:
        """C12: the storyteller's ruling if given, else the sheet's flag, else unknown."""
        if self.stamina_ruling is not None:
            return self.stamina_ruling
        return dict(self.stamina_based).get(self.bid or "")

    def has_power(self, name: str) -> bool:
        return any(power.casefold() == name.casefold() for power in self.powers)

    def rating(self, ability: str | None) -> int:
        return dict(self.abilities).get(ability or "", 0)

    def tempered(self, name: str) -> int:
        return dict(self.temper).get(name, 0)


@dataclass(frozen=True)
class Retest:
    kind: RetestKind
    by: Side
    ability: str | None = None
    power: str | None = None


@dataclass(frozen=True)
class Challenge:
    profile: Profile
    mode: Mode
    category: Category | None
    attacker: Contender
    defender: Contender | None
    difficulty: int = 0
    mind_control: bool = False
    more_defensive: Side = Side.DEFENDER
    win_outright: bool = False
    phase: Phase = Phase.THROWS
    leader: Side | None = None  # who is winning right now
    pending: tuple[tuple[str, str], ...] = ()  # hidden throws: (side, throw)
    throws: int = 0
    declared: tuple[tuple[str, int], ...] = ()  # C4: fixed once made
    used: tuple[str, ...] = ()  # retest kinds used: "overbid" or "defender:overbid"
    spent: tuple[tuple[str, str, int], ...] = ()  # (side, resource, amount)
    at_risk: tuple[tuple[str, str], ...] = ()  # (side, trait) beyond the bid
    lost_now: tuple[tuple[str, str], ...] = ()  # W11: crossed off at once
    penalties: tuple[tuple[str, int], ...] = ()  # C5, C16: the mob penalty
    guesses: tuple[tuple[str, str, bool], ...] = ()  # C5: (by, trait named, correct)
    announced: Retest | None = None  # a retest waiting for its throw (may be cancelled)
    final: bool = False  # C10: after a willpower retest nothing follows
    wins: int = 0  # W13: the character's won throws (in a race, the attacker's)
    target_wins: int | None = None  # W13: a target count ends the challenge when reached
    race: bool = False  # W13: two sides throw until one reaches the target count
    opponent_wins: int = 0  # W13: in a race, the defender's (or the static's) won throws
    decided_by: str = ""  # how it ended: "throw", "relent", "no bid", "running out"…
    path: str = ""  # C10, W9: the ability, discipline path or effect the attacker uses
    both_attacking: bool = False  # C10: both sides were attacking each other
    ranged: bool = False  # C14: a ranged attack
    counterattack: bool = False  # C14: the defender's stated effect is a counterattack
    ranged_abilities: tuple[str, ...] = ("dodge",)  # C14: what retests a ranged attack
    bid_required: bool = False  # W14: the storyteller requires a bid in a simple test
    #: C16: the mob's other members (name, side as read), beyond the primary who throws
    mob: tuple[tuple[str, Contender], ...] = ()
    mob_side: Side = Side.ATTACKER  # C16: which side is the mob (five defenders: defender)
    dropped: tuple[str, ...] = ()  # C16: members who dropped out
    stepped_in: int = 0  # C16: members who stepped in for one who dropped out

    # -- starting --------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        *,
        ruleset: str | Profile,
        mode: Mode | str = Mode.CONTESTED,
        category: Category | str | None = None,
        attacker: Contender | None = None,
        defender: Contender | None = None,
        difficulty: int = 0,
        mind_control: bool = False,
        more_defensive: Side | str = Side.DEFENDER,
        win_outright: bool = False,
        target_wins: int | None = None,
        race: bool = False,
        options: dict[str, Any] | None = None,
        mob_attackers: int = 1,
        mob: list[tuple[str, Contender]] | tuple[tuple[str, Contender], ...] = (),
        mob_side: Side | str = Side.ATTACKER,
        path: str = "",
        both_attacking: bool = False,
        ranged: bool = False,
        counterattack: bool = False,
        ranged_abilities: tuple[str, ...] = ("dodge",),
        bid_required: bool = False,
        called: bool = False,
    ) -> Challenge:
        """C1: the attacker names the category and bids; the defender answers. Refused when
        the attacker is Incapacitated (C7: unless the storyteller ``called`` the test, which
        the character then initiates not) or has no current traits in the category (W6),
        a bid is not held (C1), a surprised or outpaced side bids a trait not Stamina-based
        (C12, C15), an unarmed defender would counterattack a ranged attack (C14), a mob is
        more than five or a member does not bid (C16), or a required bid is missing (W14).

        ``mob`` lists the mob's other members (name, side) beyond the primary who throws
        (``attacker``, or ``defender`` when ``mob_side`` is the defender: five defenders
        against one); ``mob_attackers`` is the older way to give only the mob's size."""
        prof = ruleset if isinstance(ruleset, Profile) else profile(ruleset, options)
        mode = Mode(mode)
        category = Category(category) if category else None
        attacker = attacker or Contender()
        mob = tuple((name, member) for name, member in mob)
        mob_side = Side(mob_side)
        extra = len(mob) + max(mob_attackers - 1, 0)
        challenge = cls(
            profile=prof,
            mode=mode,
            category=category,
            attacker=attacker,
            defender=defender if mode is Mode.CONTESTED or race else None,
            difficulty=difficulty,
            mind_control=mind_control,
            more_defensive=Side(more_defensive),
            win_outright=win_outright,
            target_wins=target_wins,
            race=race,
            # C5, C16: the one facing a mob is -1 for each member beyond the first.
            penalties=((mob_side.other.value, extra),) if extra else (),
            path=path,
            both_attacking=both_attacking,
            ranged=ranged,
            counterattack=counterattack,
            ranged_abilities=tuple(a.lower() for a in ranged_abilities),
            bid_required=bid_required,
            mob=mob,
            mob_side=mob_side,
        )
        check_kind(prof, mode, race=race, bid_required=bid_required)
        if mode in {Mode.SIMPLE, Mode.DIFFICULT}:
            if bid_required and (not attacker.bid or not attacker.holds_bid()):
                raise RuleError("W14", "The storyteller requires a bid: bid a trait you hold.")
            return challenge
        if race and (mode is not Mode.EXTENDED or not target_wins or target_wins < 1):
            raise RuleError("W13", "A race is an extended challenge with a target count.")
        for who in (attacker, defender):
            if who is not None and who.blood:
                challenge._check_blood(who)
        if attacker.health.down and not called:
            raise RuleError("C7", "An Incapacitated character cannot start a challenge.")
        if prof.family is not Family.POOLS and challenge._current(Side.ATTACKER) <= 0:
            raise RuleError("W6", "With no traits left in this category you cannot challenge.")
        challenge._check_bid(Side.ATTACKER)
        if (
            mode is Mode.CONTESTED
            and prof.family is not Family.POOLS
            and challenge._current(Side.DEFENDER) <= 0
        ):
            # W6: challenged with nothing left, the defender loses at once, losing nothing.
            return challenge._over(Side.ATTACKER, "running out")
        if mode is Mode.CONTESTED:
            challenge._check_bid(Side.DEFENDER)
            challenge._check_ranged()
        for side in (Side.ATTACKER, Side.DEFENDER):
            if challenge.defender is not None or side is Side.ATTACKER:
                challenge._check_stamina(challenge.side(side))
        challenge._check_mob()
        return challenge

    # -- reading ---------------------------------------------------------------------
    def side(self, side: Side) -> Contender:
        contender = self.attacker if side is Side.ATTACKER else self.defender
        if contender is None:
            raise RuleError("C11", "A static test has no defending character.")
        return contender

    def _check_bid(self, side: Side) -> None:
        """C1: a side bids one of its current traits in the category (W1: temper challenges
        and B1: test pools name none)."""
        if self.profile.family is Family.POOLS or (self.category and self.category.is_temper):
            return
        contender = self.side(side)
        if not contender.holds_bid():
            raise RuleError(
                "C1",
                f"The {side.value} has no current {contender.bid} trait to bid "
                f"in this {self.category.value if self.category else ''} challenge.",
            )

    def _check_stamina(self, contender: Contender) -> None:
        """C12: a surprised defender bids only Stamina-based physical traits; C15: so does
        the target of Celerity actions it cannot match. Whether a trait is Stamina-based is
        on the sheet; where the sheet does not say, the storyteller's ruling decides."""
        if not (contender.surprised or contender.outpaced) or not contender.bid:
            return
        if self.category is not Category.PHYSICAL:
            return
        rule = "C12" if contender.surprised else "C15"
        flag = contender.bid_is_stamina_based()
        if flag is None:
            raise RuleError(
                rule, f"The storyteller must say whether {contender.bid} is Stamina-based."
            )
        if not flag:
            raise RuleError(rule, f"{contender.bid} is not Stamina-based: bid one that is.")

    def _check_ranged(self) -> None:
        """C14: against a ranged attack an unarmed defender may not counterattack."""
        if self.ranged and self.counterattack and not self.side(Side.DEFENDER).armed:
            raise RuleError("C14", "Unarmed, you cannot counterattack a ranged attack.")

    def _check_mob(self) -> None:
        """C16: at most five in a mob; every member bids a trait it holds."""
        if not self.mob:
            return
        if len(self.mob) + 1 > MOB_MOST:
            raise RuleError("C16", f"At most {MOB_MOST} can act together as a mob.")
        for name, member in self.mob:
            if not member.bid:
                raise RuleError("C16", f"Every member of a mob bids a trait; {name} has not.")
            if not member.holds_bid() and not self._temper:
                raise RuleError("C1", f"{name} has no current {member.bid} trait to bid.")

    def _check_blood(self, contender: Contender) -> None:
        """C5: up to 3 blood traits a challenge, never past the generation's per-turn limit,
        physical challenges only; C12: not by a surprised defender."""
        if self.category is not Category.PHYSICAL:
            raise RuleError("C5", "Blood buys physical traits only.")
        if contender.surprised:
            raise RuleError("C12", "A surprised defender cannot spend blood for traits.")
        if contender.blood + contender.blood_kept > 3:
            raise RuleError("C5", "At most 3 blood traits in one challenge.")
        if contender.blood > contender.blood_per_turn:
            raise RuleError(
                "C5", f"Your generation lets you spend {contender.blood_per_turn} blood a turn."
            )

    @property
    def _temper(self) -> bool:
        return bool(self.category and self.category.is_temper)

    def _current(self, side: Side) -> int:
        """Current traits in the category; W1: in a temper challenge the current temper
        (what this challenge has spent of it already is gone)."""
        contender = self.side(side)
        if self.category and self.category.is_temper:
            name = self.category.value
            return contender.tempered(name) - self.spent_by(side).get(name, 0)
        return contender.trait_count

    def total(self, side: Side) -> int:
        """C5 (W2 in met_werewolf): current traits + bonuses - penalties (+ the permanent
        rating of the ability used, W2; abilities never add to temper challenges)."""
        contender = self.side(side)
        if self.profile.family is Family.POOLS:
            return contender.pool
        value = self._current(side)
        temper = bool(self.category and self.category.is_temper)
        if not temper:
            value += contender.bonus + contender.blood + contender.blood_kept
            if contender.weapon_skill:
                value += contender.weapon_bonus
            if contender.health is Health.BRUISED and not contender.has_power("Fortitude"):
                value -= 1  # C5: Fortitude may ignore Bruised
            value -= self.guess_penalty(side)
            if self.profile.family is Family.WEREWOLF and self.profile.abilities_add:
                value += contender.rating(contender.ability)
        value -= dict(self.penalties).get(side.value, 0)
        return value

    def _opponent_total(self, side: Side) -> int:
        if self.defender is not None:
            return self.total(side.other)
        return self.difficulty  # C9: in a static challenge, the difficulty

    def _use_key(self, kind: RetestKind, by: Side, source: str | None = None) -> str:
        """C8: each kind once per challenge; W10–W12, B2: once per person; W12: other
        retest sources once per person per source (two gifts, two retests)."""
        if not self.profile.retests_per_person:
            return kind.value
        key = f"{by.value}:{kind.value}"
        return f"{key}:{source}" if source else key

    def _used(self, kind: RetestKind, by: Side, source: str | None = None) -> bool:
        return self._use_key(kind, by, source) in self.used

    def _mark_used(self, kind: RetestKind, by: Side, source: str | None = None) -> tuple[str, ...]:
        return (*self.used, self._use_key(kind, by, source))

    def _source(self, kind: RetestKind, by: Side, power: str | None) -> str | None:
        """W12: in met_werewolf a power retest is counted per source: the one named, or
        the first of the side's not used yet."""
        if kind is not RetestKind.POWER or self.profile.family is not Family.WEREWOLF:
            return None
        if power:
            return power
        powers = self.side(by).powers
        return next((p for p in powers if not self._used(kind, by, p)), None)

    def spent_by(self, side: Side) -> dict[str, int]:
        totals: dict[str, int] = {}
        for who, resource, amount in self.spent:
            if who == side.value:
                totals[resource] = totals.get(resource, 0) + amount
        return totals

    @property
    def loser(self) -> Side | None:
        return None if self.leader is None else self.leader.other

    @property
    def winner(self) -> Side | None:
        return self.leader if self.phase is Phase.OVER else None

    @property
    def success(self) -> bool | None:
        """Static, simple and extended tests: did the character succeed?"""
        if self.phase is not Phase.OVER:
            return None
        return self.leader is Side.ATTACKER

    def lost(self) -> dict[str, list[str]]:
        """C3, W4, W8, W11: the traits each side crosses off once the challenge is over."""
        out: dict[str, list[str]] = {"attacker": [], "defender": []}
        for who, trait in self.lost_now:
            out[who].append(trait)
        if self.phase is not Phase.OVER or self.leader is None:
            return out
        if self.profile.family is Family.POOLS or (self.category and self.category.is_temper):
            return out  # B1, W1: nothing is crossed off
        if self.decided_by in {"relent", "no bid", "running out"}:
            return out
        loser = self.leader.other
        if self.mode in {Mode.SIMPLE, Mode.DIFFICULT}:
            # W14: a bid the storyteller required is at risk like any other.
            if self.bid_required and loser is Side.ATTACKER and self.attacker.bid:
                out["attacker"].append(self.attacker.bid)
            return out
        if self.mode is not Mode.CONTESTED:
            if self.profile.family is Family.WEREWOLF or loser is Side.DEFENDER:
                return out  # W4: nothing at risk in a static test; C11: only the character
            if self.mode is not Mode.STATIC:
                return out
        bid = self.side(loser).bid
        if bid:
            out[loser.value].append(bid)
        out[loser.value] += [trait for who, trait in self.at_risk if who == loser.value]
        return out

    def harms(self, side: Side) -> bool:
        """Whether this side's stated effect on the other may happen if it wins. C12: a
        surprised defender cannot harm the attacker; C10: a defender who spent willpower
        dropped its own action; C14: an unarmed defender does not counterattack a ranged
        attack."""
        if side is not Side.DEFENDER:
            return True
        defender = self.side(side)
        if defender.surprised or self.dropped_action(side):
            return False
        return not (self.ranged and not defender.armed)

    def dropped_action(self, side: Side) -> bool:
        """C10: when both sides were attacking each other, the defender who spends
        willpower drops its own action against the attacker (willpower only defends)."""
        return (
            self.both_attacking
            and side is Side.DEFENDER
            and self.profile.family is Family.CLASSIC
            and self.spent_by(side).get("willpower", 0) > 0
        )

    def fended_off(self) -> bool:
        """C10: the defender's willpower retest fended the attack off."""
        return (
            self.phase is Phase.OVER
            and self.winner is Side.DEFENDER
            and self.profile.family is Family.CLASSIC
            and self.spent_by(Side.DEFENDER).get("willpower", 0) > 0
        )

    def initiator_lost(self) -> bool:
        """W9: the initiator ultimately lost (the five-minute rule follows)."""
        return self.phase is Phase.OVER and self.winner is not Side.ATTACKER

    def damage(self) -> int:
        """B3: 1 base + bonuses - reductions, never below 0, dealt by the winner."""
        if self.winner is None or self.profile.family is not Family.POOLS:
            return 0
        hitter = self.side(self.winner)
        return max(hitter.damage_base + hitter.damage_bonus - hitter.damage_reduction, 0)

    def view_for(self, side: Side) -> dict[str, Any]:
        """What one side may be shown: its own pending throw, never the other's."""
        data = self.to_dict()
        data["pending"] = {k: v for k, v in dict(self.pending).items() if k == side.value}
        data["waiting_for"] = [s for s in ("attacker", "defender") if s not in dict(self.pending)]
        return data

    # -- steps -----------------------------------------------------------------------
    def _open(self, rule: str) -> None:
        if self.phase is Phase.OVER:
            raise RuleError(rule, "The challenge is over.")

    def _over(self, leader: Side, how: str) -> Challenge:
        return replace(
            self, phase=Phase.OVER, leader=leader, pending=(), announced=None, decided_by=how
        )

    def relent(self, side: Side | str) -> Challenge:
        """C2, W5: before the test either side may give in; nobody loses a trait."""
        side = Side(side)
        self._open("C2")
        if self.throws:
            raise RuleError(
                "W5" if self.profile.family is Family.WEREWOLF else "C2",
                "You can only relent before the first throw.",
            )
        return self._over(side.other, "relent")

    def no_bid(self) -> Challenge:
        """C1: the defender does not or cannot bid: the attacker's effect happens, no test."""
        self._open("C1")
        if self.throws or self.mode is not Mode.CONTESTED:
            raise RuleError("C1", "Only a defender who has not thrown can decline to bid.")
        return self._over(Side.ATTACKER, "no bid")

    def name_negative(self, by: Side | str, trait: str) -> Challenge:
        """C5 (W8 in met_werewolf): name a negative trait of the opponent before the test.

        A side makes at most as many guesses, right or wrong, as it has current traits beyond
        its bid (it must be able to pay for every wrong one); holding only its bid it makes
        none. A trait already named against that side counts once (C16: in a mob each
        attacker may name all it knows, the defender's negatives still count once)."""
        by = Side(by)
        self._open("C5")
        rule = "W8" if self.profile.family is Family.WEREWOLF else "C5"
        if self.throws:
            raise RuleError(rule, "Negative traits are named before the first throw.")
        if self.mode is not Mode.CONTESTED:
            raise RuleError(rule, "Negative traits are named against a character.")
        if any(who == by.value and named == trait for who, named, _ in self.guesses):
            return self  # C16: counted once
        made = sum(1 for who, _named, _correct in self.guesses if who == by.value)
        beyond_bid = self.side(by).trait_count - 1
        if made + 1 > beyond_bid:
            raise RuleError(
                "C5",
                "You can name only as many negative traits as you have traits beyond your bid"
                f" ({max(beyond_bid, 0)}).",
            )
        target = by.other
        correct = trait in self.side(target).negatives or (
            target is self.mob_side and any(trait in m.negatives for _n, m in self.mob)
        )
        state = replace(self, guesses=(*self.guesses, (by.value, trait, correct)))
        if self.profile.family is Family.WEREWOLF:
            who = target if correct else by
            return replace(state, at_risk=(*self.at_risk, (who.value, CHOICE)))
        return state

    def spend_blood(self, side: Side | str, amount: int) -> Challenge:
        """C5: a side spends blood for physical traits, announced before the test: counted in
        its total from now on, at most 3 a challenge and never past its generation's limit
        (C12: not while surprised). The traits are not crossed off on a loss (the blood is
        spent already) and do not count as traits beyond the bid (C16 drop-outs, C5 guesses)."""
        side = Side(side)
        self._open("C5")
        if self.profile.family is Family.POOLS:
            raise RuleError("C5", "No blood traits in met_bns.")
        if self.throws or self.pending:
            raise RuleError("C5", "Blood for traits is announced before the test.")
        if amount < 1:
            raise RuleError("C5", "Spend at least one blood.")
        contender = self.side(side)
        more = replace(contender, blood=contender.blood + amount)
        self._check_blood(more)
        if side is Side.ATTACKER:
            return replace(self, attacker=more)
        return replace(self, defender=more)

    def guess_penalty(self, side: Side) -> int:
        """C5: -1 for each correctly named negative trait of this side, -1 for each wrong
        guess this side made (met_classic; W8 puts traits at risk instead)."""
        if self.profile.family is Family.WEREWOLF:
            return 0
        negatives = self.side(side).negatives
        return sum(
            1
            for who, trait, correct in self.guesses
            if (who == side.value and not correct) or (who != side.value and trait in negatives)
        )

    # -- mobs ------------------------------------------------------------------------
    def _members(self) -> list[tuple[str, Contender]]:
        """C16: every member of the mob, the primary first."""
        primary = self.side(self.mob_side)
        return [(primary.name or "primary", primary), *self.mob]

    def members(self) -> list[tuple[str, Contender]]:
        """C16: every member of the mob (name, side as read), the one who throws first."""
        return self._members() if self.mob else []

    def must_drop_out(self) -> list[str]:
        """C16: mob members who cannot match the negative traits named against them: more
        of those they have than traits beyond their bid. No throw until they drop out."""
        if not self.mob:
            return []
        named = {t for who, t, _c in self.guesses if who == self.mob_side.other.value}
        out = []
        for name, member in self._members():
            hits = sum(1 for trait in named if trait in member.negatives)
            if hits > member.trait_count - 1:
                out.append(name)
        return out

    def drop_out(self, name: str, replacement: tuple[str, Contender] | None = None) -> Challenge:
        """C16: a mob member who cannot match the negatives named drops out before the
        test; another may step in (it bids a trait it holds). If the primary drops out the
        next member (or the one stepping in) throws instead."""
        self._open("C16")
        if self.throws:
            raise RuleError("C16", "Members drop out before the first throw.")
        if name not in self.must_drop_out():
            raise RuleError("C16", f"{name} can match the negatives named and stays in.")
        members = [(n, m) for n, m in self._members() if n != name]
        if replacement is not None:
            new_name, new = replacement
            if not new.bid or not new.holds_bid():
                raise RuleError("C16", f"{new_name} must bid a trait it holds to step in.")
            members.append((new_name, replace(new, name=new.name or new_name)))
        if not members:
            raise RuleError("C16", "The last member cannot drop out: the mob breaks up.")
        (primary_name, primary), *rest = members
        primary = replace(primary, name=primary.name or primary_name)
        penalties = dict(self.penalties)
        penalties[self.mob_side.other.value] = len(rest)
        state = replace(
            self,
            mob=tuple(rest),
            dropped=(*self.dropped, name),
            stepped_in=self.stepped_in + (replacement is not None),
            penalties=tuple(sorted((k, v) for k, v in penalties.items() if v)),
        )
        if self.mob_side is Side.ATTACKER:
            return replace(state, attacker=primary)
        return replace(state, defender=primary)

    def can_step_in(self) -> bool:
        """C16: before the first throw, someone may step into the place of a member who
        dropped out (one for each), while the mob stays at most five."""
        return (
            self.phase is not Phase.OVER
            and not self.throws
            and len(self.dropped) > self.stepped_in
            and len(self.mob) + 1 < MOB_MOST
        )

    def step_in(self, name: str, member: Contender) -> Challenge:
        """C16: another character steps into the place of one who dropped out, bidding a
        trait it holds; the negatives named already count against it too (it may have to
        drop out in turn), and the one facing the mob is -1 for it on a draw."""
        self._open("C16")
        if not self.can_step_in():
            raise RuleError("C16", "Someone steps in only for a member who dropped out.")
        if name in {n for n, _m in self._members()}:
            raise RuleError("C16", f"{name} is in this mob already.")
        if not member.bid or (not member.holds_bid() and not self._temper):
            raise RuleError("C16", f"{name} must bid a trait it holds to step in.")
        mob = (*self.mob, (name, replace(member, name=member.name or name)))
        penalties = dict(self.penalties)
        penalties[self.mob_side.other.value] = len(mob)
        return replace(
            self,
            mob=mob,
            stepped_in=self.stepped_in + 1,
            penalties=tuple(sorted((k, v) for k, v in penalties.items() if v)),
        )

    def mob_lost(self) -> dict[str, list[str]]:
        """C16: if the one facing the mob wins, every member loses the trait it bid."""
        if not self.mob or self.phase is not Phase.OVER or self.winner is not self.mob_side.other:
            return {}
        if self.decided_by in {"relent", "no bid", "running out"}:
            return {}
        return {name: [member.bid] for name, member in self._members() if member.bid}

    def throw(self, side: Side | str, throw: Throw | str) -> Challenge:
        """Both throw at once: a throw is held hidden until the other side's arrives."""
        side, throw = Side(side), Throw.parse(throw)
        self._open("C3")
        if not self.throws and self.must_drop_out():
            raise RuleError("C16", f"{', '.join(self.must_drop_out())} must drop out first.")
        if self.phase is not Phase.THROWS:
            raise RuleError("C3", "No throw is called for right now.")
        if side.value in dict(self.pending):
            raise RuleError("C3", "You have already thrown.")
        pending = (*self.pending, (side.value, throw.value))
        if len(pending) < 2:
            return replace(self, pending=pending)
        throws = dict(pending)
        return replace(self, pending=())._resolve(
            Throw(throws["attacker"]), Throw(throws["defender"])
        )

    def throw_both(self, attacker: Throw | str, defender: Throw | str) -> Challenge:
        """Both throws at once (the storyteller's tablet, or tests)."""
        return self.throw(Side.ATTACKER, attacker).throw(Side.DEFENDER, defender)

    def _resolve(self, attacker: Throw, defender: Throw) -> Challenge:
        state = replace(self, throws=self.throws + 1, announced=None)
        outcome = compare(attacker, defender)
        if state.mode in {Mode.SIMPLE, Mode.DIFFICULT}:
            # C13, W14: the initiator wins draws unless a win outright is needed.
            outright = state.mode is Mode.DIFFICULT or state.win_outright
            won = outcome is Outcome.FIRST or (outcome is Outcome.DRAW and not outright)
            return state._over(Side.ATTACKER if won else Side.DEFENDER, "throw")
        if outcome is Outcome.DRAW:
            return state._draw()
        leader = Side.ATTACKER if outcome is Outcome.FIRST else Side.DEFENDER
        return state._lead(leader)

    def _lead(self, leader: Side) -> Challenge:
        if self.mode is Mode.EXTENDED:
            return self._extended(leader)
        return replace(self, leader=leader, phase=Phase.RETESTS)

    def _extended(self, leader: Side) -> Challenge:
        """W13: a won throw counts; a lost one may be retested within the usual limits (the
        losing side calls a retest or :meth:`accept`). A static opponent never retests, so
        the character's won throw counts at once."""
        if leader is Side.ATTACKER and self.defender is None:
            return self._score(Side.ATTACKER)
        return replace(self, leader=leader, phase=Phase.RETESTS)

    def _score(self, side: Side) -> Challenge:
        """W13: the throw counts for ``side``. Retest limits are counted per throw, so the
        next throw starts with every retest available again (what was spent stays spent)."""
        state = replace(
            self,
            wins=self.wins + (side is Side.ATTACKER),
            opponent_wins=self.opponent_wins + (side is Side.DEFENDER),
            used=(),
            final=False,
            announced=None,
            pending=(),
        )
        count = state.wins if side is Side.ATTACKER else state.opponent_wins
        if self.target_wins is not None and count >= self.target_wins:
            return state._over(side, "target")
        if not self.race and side is Side.DEFENDER:
            return state._end_extended()  # the character lost a throw: it stops
        return replace(state, phase=Phase.THROWS, leader=None)

    def _end_extended(self) -> Challenge:
        """W13: the result is the number of wins; with a target count set, success needs it;
        a race cut short goes to the side ahead (equal: the defender, as a static would)."""
        if self.race:
            return self._over(
                Side.ATTACKER if self.wins > self.opponent_wins else Side.DEFENDER, "throw"
            )
        reached = self.wins >= self.target_wins if self.target_wins else self.wins > 0
        return self._over(Side.ATTACKER if reached else Side.DEFENDER, "throw")

    def _draw(self) -> Challenge:
        family = self.profile.family
        if family is Family.POOLS:
            # B1: the larger pool wins; equal pools: the defender.
            a, d = self.total(Side.ATTACKER), self._opponent_total(Side.ATTACKER)
            return self._lead(Side.ATTACKER if a > d else Side.DEFENDER)
        a_hurt = self.attacker.health.wounded
        if self.defender is not None:
            d_hurt = self.side(Side.DEFENDER).health.wounded
            if a_hurt != d_hurt:  # C6: the side at Wounded or worse loses every draw
                return self._lead(Side.DEFENDER if a_hurt else Side.ATTACKER)
        elif a_hurt:  # C6 with C11: against a difficulty too, without comparing totals
            return self._lead(Side.DEFENDER)
        if self.declared:
            declared = dict(self.declared)
            return self._compare_totals(
                declared["attacker"], declared.get("defender", self.difficulty)
            )
        return replace(self, phase=Phase.DECLARATIONS, leader=None)

    def _compare_totals(self, attacker: int, defender: int) -> Challenge:
        if attacker != defender:
            return self._lead(Side.ATTACKER if attacker > defender else Side.DEFENDER)
        if self.profile.family is Family.WEREWOLF:
            # W3: the more defensive action wins; against a static difficulty, the static.
            if self.defender is None:
                return self._lead(Side.DEFENDER)
            return self._lead(self.more_defensive)
        # C4, C11: equal totals: throw again (not a retest, uses nothing up).
        return replace(self, phase=Phase.THROWS, leader=None)

    def declare(self, attacker: int, defender: int | None = None) -> Challenge:
        """C4 (W3 in met_werewolf): after a draw the attacker, then the defender, declare a
        total no higher than their own (under-declaring is allowed). A declaration stands
        for every later draw of the same challenge: those are compared without asking."""
        self._open("C4")
        if self.phase is not Phase.DECLARATIONS:
            raise RuleError("C4", "Totals are declared only after a draw.")
        values = {"attacker": attacker}
        if self.defender is not None:
            if defender is None:
                raise RuleError("C4", "Both sides declare a total.")
            values["defender"] = defender
        for side_name, value in values.items():
            most = self.total(Side(side_name))
            if value > most:
                raise RuleError("C4", f"The {side_name} can declare at most {most} traits.")
            if value < 0:
                raise RuleError("C4", "A declared total cannot be negative.")
        declared = tuple(sorted(values.items()))
        return replace(self, declared=declared)._compare_totals(
            values["attacker"], values.get("defender", self.difficulty)
        )

    # -- retests ---------------------------------------------------------------------
    def allowed_retests(self, side: Side | str) -> list[tuple[RetestKind, str]]:
        """Every retest kind this side may call for now, with the rule that allows it."""
        side = Side(side)
        allowed = []
        for kind in RetestKind:
            try:
                self._check_retest(
                    side, kind, ability=None, power=None, declared=None, trait=None, probing=True
                )
            except RuleError:
                continue
            allowed.append((kind, _RETEST_RULES[self.profile.family][kind]))
        return allowed

    def may_retest_with(self, side: Side | str, ability: str, opposing: str | None = None) -> bool:
        """Whether this side may call an ability retest with ``ability`` now (C8; C12: not
        Brawl, Melee or Dodge when surprised; C14: Dodge alone against a ranged attack).

        C8 in met_classic: a rating that is not higher than the other side's in the
        ``opposing`` ability (the one it uses; none: 0) would be refused, so it is not allowed
        here either."""
        side = Side(side)
        try:
            self._check_retest(
                side,
                RetestKind.ABILITY,
                ability=ability,
                power=None,
                declared=None,
                trait=None,
                probing=True,
            )
        except RuleError:
            return False
        if self.profile.family is Family.CLASSIC:
            mine = self.side(side).rating(ability)
            theirs = self.side(side.other).rating(opposing) if self.defender is not None else 0
            return mine > theirs
        return True

    def _rule(self, kind: RetestKind) -> str:
        return _RETEST_RULES[self.profile.family][kind]

    def _check_retest(
        self,
        side: Side,
        kind: RetestKind,
        *,
        ability: str | None,
        power: str | None,
        declared: int | None,
        trait: str | None,
        probing: bool = False,
    ) -> None:
        rule = self._rule(kind)
        family = self.profile.family
        if self.phase is not Phase.RETESTS or self.leader is None:
            raise RuleError(rule, "A retest follows a lost throw, before the challenge ends.")
        if self.final:
            raise RuleError("C10", "After a willpower retest the result is final.")
        if self.leader is side:
            raise RuleError("C8", "Only the side that is losing can retest.")
        source = self._source(kind, side, power)
        if self._used(kind, side, source):
            scope = "by you" if self.profile.retests_per_person else "in this challenge"
            what = f"{source} retest" if source else f"{kind.value.capitalize()} retest"
            raise RuleError(rule, f"{what} already used {scope}.")
        contender = self.side(side)
        if kind is RetestKind.WILLPOWER:
            if family is Family.CLASSIC:
                if side is not Side.DEFENDER:
                    raise RuleError("C10", "Only the defender can spend willpower to retest.")
                if self.category not in {Category.MENTAL, Category.SOCIAL}:
                    raise RuleError("C10", "Willpower retests only mental or social challenges.")
            if family is Family.WEREWOLF and (side is not Side.DEFENDER or not self.mind_control):
                raise RuleError("W12", "Willpower defends only against an attack on your mind.")
            if contender.tempered("willpower") - self.spent_by(side).get("willpower", 0) < 1:
                raise RuleError(rule, "No willpower left to spend.")
        elif kind is RetestKind.ABILITY:
            name = ability or contender.ability
            if (
                self.ranged
                and side is Side.DEFENDER
                and name
                and name.lower() not in self.ranged_abilities
            ):
                raise RuleError("C14", "Against a ranged attack only Dodge retests.")
            if contender.surprised and (name or "").lower() in SURPRISE_BARRED:
                raise RuleError("C12", "A surprised defender has no Brawl, Melee or Dodge retest.")
            if family is Family.POOLS:
                raise RuleError("B2", "met_bns has no ability retests.")
            if family is Family.WEREWOLF:
                if probing and name is None:
                    name = next((n for n, r in contender.abilities if r > 0), None)
                spent = self.spent_by(side).get(name or "", 0)
                if not name or contender.rating(name) - spent < 1:
                    raise RuleError("W10", "You have no point of that ability left to spend.")
            elif not probing and not name:
                raise RuleError("C8", "Name the ability you retest with.")
        elif kind is RetestKind.OVERBID:
            if family is Family.POOLS:
                if contender.pool < 2 * self._opponent_total(side):
                    raise RuleError("B2", "Overbid needs a test pool at least double the other.")
            elif declared is not None and declared > self.total(side):
                raise RuleError(rule, f"You can announce at most your total of {self.total(side)}.")
            if (
                family is Family.WEREWOLF
                and not self._temper
                and not probing
                and not self._can_risk(side, trait)
            ):
                raise RuleError("W11", "Name another current trait to risk on the overbid.")
        elif kind is RetestKind.POWER:
            if family is not Family.CLASSIC and family is not Family.WEREWOLF:
                raise RuleError(rule, "No power retests in this ruleset.")
            if not contender.powers or (power and power not in contender.powers):
                raise RuleError("C8", "You have no power that retests this.")
        elif kind is RetestKind.FREE:
            opponent = self.side(side.other) if self.defender is not None else None
            if opponent is None or not opponent.health.wounded:
                raise RuleError(
                    "C6", "A free retest is only against an opponent at Wounded or worse."
                )
            if self._current(side) <= self._current(side.other):
                raise RuleError("C6", "The free retest needs more current traits than them.")

    def _can_risk(self, side: Side, trait: str | None) -> bool:
        contender = self.side(side)
        if not trait:
            return False
        if isinstance(contender.traits, int):
            return True
        already = [t for who, t in (*self.at_risk, *self.lost_now) if who == side.value]
        needed = 1 + already.count(trait) + (1 if contender.bid == trait else 0)
        return contender.has_trait(trait, needed)

    def retest(
        self,
        side: Side | str,
        kind: RetestKind | str,
        *,
        ability: str | None = None,
        opposing: str | None = None,
        power: str | None = None,
        declared: int | None = None,
        trait: str | None = None,
    ) -> Challenge:
        """C8–C10, C6, W10–W12, B2: the losing side calls for a retest. A retest the rules do
        not allow now is refused and uses nothing up."""
        side, kind = Side(side), RetestKind(kind)
        self._open(self._rule(kind))
        self._check_retest(side, kind, ability=ability, power=power, declared=declared, trait=trait)
        family = self.profile.family
        source = self._source(kind, side, power)
        used = self._mark_used(kind, side, source)
        contender = self.side(side)
        if kind is RetestKind.ABILITY and family is Family.CLASSIC:
            # C8: the retest happens only if the loser's rating beats the opposing one.
            mine = contender.rating(ability or contender.ability)
            theirs = self.side(side.other).rating(opposing) if self.defender is not None else 0
            if mine <= theirs:
                raise RuleError(
                    "C8", f"Your rating ({mine}) must be higher than the opposing one ({theirs})."
                )
        if kind is RetestKind.OVERBID and family is not Family.POOLS:
            announced = self.total(side) if declared is None else declared
            opponent = self._opponent_total(side)
            if family is Family.WEREWOLF:
                succeeds = announced >= 2 * opponent  # W11
                # W1: a temper overbid names no trait and crosses none off.
                risked = () if self._temper else ((side.value, trait or CHOICE),)
                if not succeeds:
                    return replace(self, used=used, lost_now=(*self.lost_now, *risked))
                return replace(
                    self,
                    used=used,
                    at_risk=(*self.at_risk, *risked),
                    phase=Phase.THROWS,
                    announced=Retest(kind, side),
                )
            if opponent > announced / 2:  # C9: the overbid fails, the loss stands
                return replace(self, used=used)
        spent = self.spent
        if kind is RetestKind.WILLPOWER:
            spent = (*spent, (side.value, "willpower", 1))
        if kind is RetestKind.ABILITY and family is Family.WEREWOLF:
            name = ability or contender.ability
            spent = (*spent, (side.value, name or "", 1))
        return replace(
            self,
            used=used,
            spent=spent,
            phase=Phase.THROWS,
            # A power retest is announced under the power's name, an ability retest under
            # the ability's: each kind names only what it uses.
            announced=Retest(
                kind,
                side,
                ability=(ability or contender.ability) if kind is RetestKind.ABILITY else None,
                power=(source or power) if kind is RetestKind.POWER else None,
            ),
            final=self.final or (kind is RetestKind.WILLPOWER and family is Family.CLASSIC),
        )

    def cancel(
        self, side: Side | str, *, ability: str | None = None, power: str | None = None
    ) -> Challenge:
        """W10: cross off a point of an opposing ability to cancel an ability retest; C8: an
        identical power retest cancels a power retest. The loss stands."""
        side = Side(side)
        pending = self.announced
        if pending is None or pending.by is side or self.phase is not Phase.THROWS or self.pending:
            raise RuleError("C8", "There is no retest of the other side's to cancel now.")
        contender = self.side(side)
        if pending.kind is RetestKind.POWER and power:
            if power != pending.power or power not in contender.powers:
                raise RuleError("C8", "Only the identical power cancels a power retest.")
            return replace(self, announced=None, phase=Phase.RETESTS)
        if (
            pending.kind is RetestKind.ABILITY
            and ability
            and self.profile.family is Family.WEREWOLF
        ):
            if self._used(RetestKind.ABILITY, side):
                raise RuleError("W10", "You have already used an ability point in this challenge.")
            if contender.rating(ability) - self.spent_by(side).get(ability, 0) < 1:
                raise RuleError("W10", "You have no point of that ability left to spend.")
            return replace(
                self,
                announced=None,
                phase=Phase.RETESTS,
                used=self._mark_used(RetestKind.ABILITY, side),
                spent=(*self.spent, (side.value, ability, 1)),
            )
        raise RuleError("C8", "That does not cancel this retest.")

    def accept(self) -> Challenge:
        """C3: the losing side takes the result without a further retest. In a contested or
        static challenge the challenge is over; W13: in an extended challenge the throw
        counts (a lost throw ends it; in a race the winner of the throw scores)."""
        self._open("C3")
        if self.phase is not Phase.RETESTS or self.leader is None:
            raise RuleError("C3", "No throw result is waiting to be accepted.")
        if self.mode is Mode.EXTENDED:
            return self._score(self.leader)
        return self._over(self.leader, self.decided_by or "throw")

    def finish(self) -> Challenge:
        """Everyone accepts the result: the challenge is over and losses apply (C3, W4).
        W13: an extended challenge stops with the wins it has; a race cut short goes to the
        side ahead."""
        if self.phase is Phase.OVER:
            return self
        if self.mode is Mode.EXTENDED and self.throws and not self.pending:
            state = self.accept() if self.phase is Phase.RETESTS else self
            if state.phase is Phase.OVER:
                return state
            if state.phase is Phase.THROWS:
                return state._end_extended()
        if self.phase is not Phase.RETESTS or self.leader is None:
            raise RuleError("C3", "The challenge cannot end before the test is decided.")
        return self._over(self.leader, self.decided_by or "throw")

    # -- persistence -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _dump(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Challenge:
        return _load(data)


def check_kind(
    ruleset: str | Profile, mode: Mode | str, *, race: bool = False, bid_required: bool = False
) -> None:
    """W0 (clarified 2026-11-26): W13 extended challenges (and races) and W14's simple tests
    with a required bid are met_werewolf's; met_classic has C11 static challenges and C13
    simple and difficult tests. Refuses a kind of test the ruleset does not have."""
    prof = ruleset if isinstance(ruleset, Profile) else profile(ruleset)
    if prof.family is Family.WEREWOLF:
        return
    if Mode(mode) is Mode.EXTENDED or race:
        raise RuleError(
            "W13", f"Extended challenges are a met_werewolf rule (W0), not {prof.slug}'s."
        )
    if bid_required:
        raise RuleError(
            "W14",
            f"A simple test with a required bid is a met_werewolf rule (W0), not {prof.slug}'s.",
        )


def kinds_of_test(ruleset: str | Profile) -> tuple[Mode, ...]:
    """C1, C11, C13, W13, W14: the kinds of challenge a ruleset has (W0: extended challenges
    are met_werewolf's), for a form to offer only those."""
    kinds = []
    for mode in Mode:
        try:
            check_kind(ruleset, mode)
        except RuleError:
            continue
        kinds.append(mode)
    return tuple(kinds)


def has_werewolf_tests(ruleset: str | Profile) -> bool:
    """W0: W13 (target counts, races) and W14 (a required bid) are met_werewolf's."""
    prof = ruleset if isinstance(ruleset, Profile) else profile(ruleset)
    return prof.family is Family.WEREWOLF


_RETEST_RULES = {
    Family.CLASSIC: {
        RetestKind.POWER: "C8",
        RetestKind.ABILITY: "C8",
        RetestKind.OVERBID: "C9",
        RetestKind.WILLPOWER: "C10",
        RetestKind.FREE: "C6",
    },
    Family.WEREWOLF: {
        RetestKind.POWER: "W12",
        RetestKind.ABILITY: "W10",
        RetestKind.OVERBID: "W11",
        RetestKind.WILLPOWER: "W12",
        RetestKind.FREE: "C6",
    },
    Family.POOLS: {
        RetestKind.POWER: "B2",
        RetestKind.ABILITY: "B2",
        RetestKind.OVERBID: "B2",
        RetestKind.WILLPOWER: "B2",
        RetestKind.FREE: "B2",
    },
}


# What a state holds most of (counts, names, flags): given back as they are, by their exact
# type first (a step's state is dumped under the scene's lock, every step).
_SCALARS = frozenset({str, int, bool, float, type(None)})


@cache
def _names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple:
        return [_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Profile):
        return {
            "slug": value.slug,
            "abilities_add": value.abilities_add,
            "control_decay": value.control_decay,
        }
    if isinstance(value, (Contender, Retest)):
        return {name: _plain(getattr(value, name)) for name in _names(kind)}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _dump(challenge: Challenge) -> dict[str, Any]:
    return {name: _plain(getattr(challenge, name)) for name in _names(type(challenge))}


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _contender(data: dict[str, Any]) -> Contender:
    side = {k: _tuples(v) for k, v in data.items()}
    side["health"] = Health(side["health"])
    return Contender(**side)


def _load(data: dict[str, Any]) -> Challenge:
    raw = dict(data)
    slug = raw["profile"]["slug"]
    raw["profile"] = profile(slug, {k: v for k, v in raw["profile"].items() if k != "slug"})
    for key, enum in (("mode", Mode), ("phase", Phase), ("more_defensive", Side)):
        raw[key] = enum(raw[key])
    raw["category"] = Category(raw["category"]) if raw.get("category") else None
    raw["leader"] = Side(raw["leader"]) if raw.get("leader") else None
    raw["mob_side"] = Side(raw.get("mob_side", "attacker"))
    for key in ("attacker", "defender"):
        if raw.get(key) is not None:
            raw[key] = _contender(raw[key])
    raw["mob"] = tuple((name, _contender(member)) for name, member in raw.get("mob", []))
    if raw.get("announced"):
        r = raw["announced"]
        raw["announced"] = Retest(
            RetestKind(r["kind"]), Side(r["by"]), r.get("ability"), r.get("power")
        )
    for key in (
        "pending",
        "declared",
        "used",
        "spent",
        "at_risk",
        "lost_now",
        "penalties",
        "guesses",
        "ranged_abilities",
        "dropped",
    ):
        raw[key] = _tuples(raw.get(key, []))
    return Challenge(**raw)


__all__ = [
    "CHOICE",
    "Challenge",
    "Contender",
    "Phase",
    "Retest",
    "check_kind",
    "has_werewolf_tests",
    "kinds_of_test",
]
