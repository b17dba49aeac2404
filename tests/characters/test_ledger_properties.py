"""The ledger as a state machine: whatever is spent, lost, regained (W7), refreshed or reversed,
in whatever order, every current value stays within 0..permanent, and a refused change
changes nothing (hypothesis, on the suite's database: SQLite or PostgreSQL)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from characters import services
from characters.models import Character, GameNight
from characters.selectors import current_values
from tests.factories import AbilityFactory, CharacterFactory, ChronicleFactory, TraitFactory

pytestmark = pytest.mark.django_db

TRAITS = [("physical", "Quick", 2), ("physical", "Strong", 1), ("social", "Witty", 3)]
_names = itertools.count()
POOLS = {
    "willpower": "willpower_spent",
    "blood": "blood_spent",
    "rage": "rage_spent",
    "willpower_spent": "willpower",
    "blood_spent": "blood",
    "rage_spent": "rage",
    "health_damage": "damage",
}


def _snapshot(character: Character) -> dict:
    now = current_values(character)
    now.pop("ledger")
    return now


class LedgerMachine(RuleBasedStateMachine):
    entries = Bundle("entries")

    def __init__(self) -> None:
        super().__init__()
        chronicle = ChronicleFactory(name=f"Machine {next(_names)}")
        GameNight.objects.create(chronicle=chronicle, number=1)
        self.chronicle = chronicle
        self.character = CharacterFactory(chronicle=chronicle, willpower=4, blood=5, rage=2)
        for category, name, count in TRAITS:
            TraitFactory(character=self.character, category=category, name=name, count=count)
        AbilityFactory(character=self.character, name="Brawl", rating=2)
        self.pools: dict[int, tuple[str, int]] = {}  # the model: pool entries since a refresh

    def _try(self, write, **kwargs):
        before = _snapshot(self.character)
        try:
            entry = write(**kwargs)
        except services.LedgerError:
            assert _snapshot(self.character) == before, "a refusal changed nothing"
            return None
        for row in (entry, entry.paid_by):  # a W7 regain is paid by a willpower entry
            if row is not None and row.kind in POOLS and row.reverses_id is None:
                self.pools[row.pk] = (row.kind, row.amount)
        return entry

    @rule(
        target=entries,
        kind=st.sampled_from(["willpower_spent", "blood_spent", "rage_spent"]),
        amount=st.integers(1, 3),
    )
    def spend(self, kind: str, amount: int):
        return self._try(
            services.ledger_spend, character=self.character, kind=kind, amount=amount, by=None
        )

    @rule(target=entries, trait=st.sampled_from(TRAITS), amount=st.integers(1, 2))
    def lose(self, trait, amount: int):
        category, name, _ = trait
        return self._try(
            services.ledger_spend,
            character=self.character,
            kind="trait_lost",
            subject=name,
            category=category,
            amount=amount,
            by=None,
        )

    @rule(target=entries)
    def spend_ability(self):
        return self._try(
            services.ledger_spend,
            character=self.character,
            kind="ability_spent",
            subject="Brawl",
            by=None,
        )

    @rule(target=entries, category=st.sampled_from(["physical", "social"]))
    def regain(self, category: str):
        return self._try(
            services.ledger_regain, character=self.character, category=category, by=None
        )

    @rule(
        target=entries,
        amount=st.integers(1, 3),
        damage_type=st.sampled_from(["", "bashing", "lethal", "aggravated"]),
    )
    def damage(self, amount: int, damage_type: str):
        return self._try(
            services.ledger_spend,
            character=self.character,
            kind="health_damage",
            category=damage_type,
            amount=amount,
            by=None,
        )

    @rule()
    def refresh(self) -> None:
        services.game_night_refresh(chronicle=self.chronicle, by=None)
        self.pools.clear()
        now = _snapshot(self.character)
        assert (now["willpower"], now["blood"], now["rage"], now["damage"]) == (4, 5, 2, 0)

    @rule()
    def open_night(self) -> None:
        number = GameNight.objects.get(chronicle=self.chronicle, closed_at=None).number
        services.game_night_open(chronicle=self.chronicle, by=None, expected_number=number)
        now = _snapshot(self.character)
        assert now["traits"] == now["permanent_traits"]
        assert now["abilities"] == {"Brawl": 2}

    @rule(entry=entries)
    def reverse(self, entry) -> None:
        if entry is not None and self._try(
            services.ledger_reverse, entry=entry, by=None, reason="machine"
        ):
            self.pools.pop(entry.pk, None)
            self.pools.pop(entry.paid_by_id, None)

    @invariant()
    def values_stay_within_the_sheet(self) -> None:
        now = _snapshot(self.character)
        for category, name, count in TRAITS:
            assert 0 <= now["traits"][category][name] <= count
        assert 0 <= now["abilities"]["Brawl"] <= 2
        assert 0 <= now["willpower"] <= 4
        assert 0 <= now["blood"] <= 5
        assert 0 <= now["rage"] <= 2
        assert 0 <= now["damage"] <= now["health"]["boxes"] == 4

    @invariant()
    def pools_are_the_sheet_minus_what_still_counts(self) -> None:
        now = _snapshot(self.character)
        for pool, permanent in (("willpower", 4), ("blood", 5), ("rage", 2)):
            spent = sum(a for kind, a in self.pools.values() if kind == POOLS[pool])
            assert now[pool] == permanent - spent
        damage = sum(a for kind, a in self.pools.values() if kind == "health_damage")
        assert now["damage"] == damage


def test_it_keeps_current_values_within_the_sheet_whatever_the_order() -> None:
    LedgerMachine.TestCase.settings = settings(
        max_examples=8,
        stateful_step_count=12,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    LedgerMachine.TestCase().runTest()
