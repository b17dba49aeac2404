"""Game nights and the ledger: costs are recorded, never edited into the sheet."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from django.db import connection, transaction

from characters import services
from characters.models import Character, GameNight, LedgerEntry, Trait
from characters.selectors import current_values
from tests.factories import AbilityFactory, CharacterFactory

pytestmark = pytest.mark.django_db


def test_it_records_a_lost_trait_without_touching_the_sheet(character, storyteller) -> None:
    services.ledger_spend(
        character=character,
        kind="trait_lost",
        subject="Charismatic",
        category="social",
        by=storyteller,
    )
    assert Trait.objects.get(character=character, name="Charismatic").count == 3
    now = current_values(character)
    assert now["traits"]["social"]["Charismatic"] == 2
    assert now["permanent_traits"]["social"]["Charismatic"] == 3


def test_it_refuses_to_lose_a_trait_the_character_no_longer_has(character, storyteller) -> None:
    for _ in range(2):
        services.ledger_spend(
            character=character, kind="trait_lost", subject="Quick", category="physical", by=None
        )
    with pytest.raises(services.LedgerError, match="no current Quick"):
        services.ledger_spend(
            character=character, kind="trait_lost", subject="Quick", category="physical", by=None
        )
    assert LedgerEntry.objects.filter(character=character).count() == 2


def test_it_refuses_willpower_the_character_does_not_have(character) -> None:
    services.ledger_spend(character=character, kind="willpower_spent", amount=3, by=None)
    with pytest.raises(services.LedgerError, match="only 0 current willpower"):
        services.ledger_spend(character=character, kind="willpower_spent", by=None)
    assert current_values(character)["willpower"] == 0


@pytest.mark.parametrize("amount", [0, -2])
def test_it_refuses_an_amount_below_one(character, amount) -> None:
    with pytest.raises(services.LedgerError, match="at least 1"):
        services.ledger_spend(character=character, kind="willpower_spent", amount=amount, by=None)
    assert not LedgerEntry.objects.exists()


def test_it_resets_lost_traits_and_spent_abilities_with_the_next_night(
    character, chronicle, storyteller
) -> None:
    AbilityFactory(character=character, name="Expression", rating=2)
    services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    services.ledger_spend(character=character, kind="ability_spent", subject="Expression", by=None)
    services.ledger_spend(character=character, kind="willpower_spent", by=None)

    night = services.game_night_open(chronicle=chronicle, by=storyteller, expected_number=1)

    assert night.number == 2
    now = current_values(character)
    assert now["traits"]["physical"]["Quick"] == 2
    assert now["abilities"]["Expression"] == 2
    assert now["willpower"] == 2, "willpower waits for the storyteller's refresh"
    assert LedgerEntry.objects.filter(character=character).count() == 3, "nothing deleted"
    assert GameNight.objects.filter(chronicle=chronicle).count() == 2


def test_it_refreshes_willpower_blood_and_health_in_one_bulk_action(
    character, chronicle, storyteller, django_assert_max_num_queries
) -> None:
    CharacterFactory.create_batch(20, chronicle=chronicle)
    services.ledger_spend(character=character, kind="willpower_spent", amount=2, by=None)
    services.ledger_spend(character=character, kind="health_damage", amount=2, by=None)
    with django_assert_max_num_queries(8):
        count = services.game_night_refresh(chronicle=chronicle, by=storyteller)
    assert count == 21
    now = current_values(character)
    assert (now["willpower"], now["damage"]) == (3, 0)
    assert LedgerEntry.objects.filter(kind="refresh").count() == 21


def test_it_opens_a_night_only_once_for_a_double_tap(chronicle, storyteller) -> None:
    services.game_night_open(chronicle=chronicle, by=storyteller, expected_number=1)
    with pytest.raises(services.LedgerError, match="no longer the open one"):
        services.game_night_open(chronicle=chronicle, by=storyteller, expected_number=1)
    assert GameNight.objects.filter(chronicle=chronicle).count() == 2


def test_it_reverses_an_entry_with_a_reason_and_records_the_reversal(
    character, storyteller
) -> None:
    entry = services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    reversal = services.ledger_reverse(entry=entry, by=storyteller, reason="wrong target")
    assert reversal.reverses == entry
    assert reversal.amount == -1
    assert current_values(character)["traits"]["physical"]["Quick"] == 2
    with pytest.raises(services.LedgerError, match="already reversed"):
        services.ledger_reverse(entry=entry, by=storyteller, reason="again")
    with pytest.raises(services.LedgerError, match="cannot itself be reversed"):
        services.ledger_reverse(entry=reversal, by=storyteller, reason="undo the undo")


def test_it_wants_a_reason_to_reverse(character, storyteller) -> None:
    entry = services.ledger_spend(character=character, kind="willpower_spent", by=None)
    with pytest.raises(services.LedgerError, match="Say why"):
        services.ledger_reverse(entry=entry, by=storyteller, reason="  ")
    assert LedgerEntry.objects.count() == 1


def test_it_refuses_to_spend_without_an_open_night(character, chronicle) -> None:
    GameNight.objects.filter(chronicle=chronicle).update(closed_at="2026-01-01T00:00Z")
    with pytest.raises(services.LedgerError, match="No game night is open"):
        services.ledger_spend(character=character, kind="willpower_spent", by=None)


def test_a_cost_is_checked_against_the_sheet_at_the_locked_rows_version(
    character, django_assert_num_queries
) -> None:
    """A cost's check reads the sheet from the process's sheet cache only at the version the
    locked character row holds: a write made meanwhile elsewhere (another process, whose
    cache this one does not share) changed the version, and the check reads it afresh; a
    sheet kept at the row's version costs no read (issue 21)."""
    from django.db import connection

    from characters import sheet_cache

    sheet_cache.clear()
    assert sheet_cache.sheets([character.pk])[character.pk][1]["traits"]["physical"]["Quick"] == 2
    night = GameNight.objects.get(chronicle=character.chronicle, closed_at__isnull=True)
    # another process's loss (its signals bump the version; this process's cache is not told)
    LedgerEntry.objects.create(
        game_night=night, character=character, kind="trait_lost", subject="Quick",
        category="physical", amount=1,
    )  # fmt: skip
    services.ledger_spend(
        character=character, kind="trait_lost", subject="Quick", category="physical", by=None
    )
    with pytest.raises(services.LedgerError, match="no current Quick"):
        services.ledger_spend(
            character=character, kind="trait_lost", subject="Quick", category="physical", by=None
        )
    trait = Trait.objects.get(character=character, name="Quick")
    trait.count = 3  # a row written elsewhere: the whole version drawn anew
    trait.save()
    sheet_cache.sheets([character.pk])  # kept at the version the next lock reads
    # the lock (with the open night's id), the open night, the entry and the version's bump
    # (one statement on PostgreSQL); and the savepoint of a step in the test's transaction
    # (a tap's own has none)
    bump = 0 if connection.vendor == "postgresql" else 1
    with django_assert_num_queries(2 + 3 + bump):
        services.ledger_spend(
            character=character, kind="trait_lost", subject="Quick", category="physical", by=None
        )
    assert current_values(character)["traits"]["physical"]["Quick"] == 0


@pytest.mark.django_db(transaction=True)
def test_two_costs_racing_for_the_last_trait_charge_it_once() -> None:
    """Two spends of a character's last Quick at the same moment, each with the sheet kept
    in the process's cache at the version both saw: the second waits for the first's lock,
    then reads the version the first wrote, so its check reads the ledger afresh and
    refuses (issue 21: the cost's check from the sheet cache)."""
    import threading

    from django.db import connection

    from characters import sheet_cache
    from tests.factories import ChronicleFactory, GameNightFactory, TraitFactory

    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    chronicle = ChronicleFactory(name="Race Chronicle")
    GameNightFactory(chronicle=chronicle, number=1)
    janet = CharacterFactory(chronicle=chronicle, name="Janet")
    TraitFactory(character=janet, category="physical", name="Quick", count=1)
    sheet_cache.clear()
    sheet_cache.sheets([janet.pk])  # both see Quick kept at this version
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def spend() -> None:
        try:
            start.wait()
            services.ledger_spend(
                character=janet, kind="trait_lost", subject="Quick", category="physical", by=None
            )
            outcomes.append("spent")
        except services.LedgerError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=spend) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused", "spent"]
    assert LedgerEntry.objects.filter(character=janet).count() == 1
    assert current_values(janet)["traits"]["physical"]["Quick"] == 0


def _cost_held_open(character, hold: threading.Event, held: threading.Event) -> threading.Thread:
    """A thread whose cost of ``character``'s Quick stays uncommitted until ``hold`` is set
    (``held`` set once it is recorded): its locks held, as under a slow step."""

    def run() -> None:
        try:
            with transaction.atomic():
                services.ledger_spend(
                    character=character, kind="trait_lost", subject="Quick",
                    category="physical", by=None,
                )  # fmt: skip
                held.set()
                hold.wait(10)
        finally:
            connection.close()

    return threading.Thread(target=run)


def _cost_thread(character, done: threading.Event) -> threading.Thread:
    """A thread that records a cost of ``character``'s Quick, then sets ``done``."""

    def run() -> None:
        try:
            services.ledger_spend(
                character=character, kind="trait_lost", subject="Quick", category="physical",
                by=None,
            )  # fmt: skip
            done.set()
        finally:
            connection.close()

    return threading.Thread(target=run)


def _night_with(*names: str) -> list:
    from tests.factories import ChronicleFactory, GameNightFactory, TraitFactory

    chronicle = ChronicleFactory(name="Convention Chronicle")
    GameNightFactory(chronicle=chronicle, number=1)
    found = []
    for name in names:
        character = CharacterFactory(chronicle=chronicle, name=name)
        TraitFactory(character=character, category="physical", name="Quick", count=2)
        found.append(character)
    return found


@pytest.mark.django_db(transaction=True)
def test_costs_of_a_chronicles_characters_do_not_wait_for_one_another() -> None:
    """Every cost lands in the chronicle's open night, and every pair of a convention plays
    in it: a cost holds the night's row shared, so one in flight does not hold up another
    character's (issue 21: they queued on the night's row, 18 ms a cost at 16 pairs)."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    janet, bob = _night_with("Janet", "Bob")
    hold, held, done = threading.Event(), threading.Event(), threading.Event()
    first = _cost_held_open(janet, hold, held)
    first.start()
    try:
        assert held.wait(10)
        second = _cost_thread(bob, done)
        second.start()
        assert done.wait(5), "Bob's cost waited for Janet's to commit"
    finally:
        hold.set()
        first.join()
    second.join()
    assert LedgerEntry.objects.filter(character__in=[janet, bob]).count() == 2


@pytest.mark.django_db(transaction=True)
def test_closing_the_night_waits_for_a_cost_in_flight() -> None:
    """The cost's shared hold still keeps the night open under it: closing the night waits
    for the cost to commit, so no cost lands in a night closed meanwhile."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    (janet,) = _night_with("Janet")
    hold, held, closed = threading.Event(), threading.Event(), threading.Event()
    cost = _cost_held_open(janet, hold, held)
    cost.start()
    try:
        assert held.wait(10)

        def close() -> None:
            try:
                services.game_night_open(chronicle=janet.chronicle, by=None, expected_number=1)
                closed.set()
            finally:
                connection.close()

        closer = threading.Thread(target=close)
        closer.start()
        assert not closed.wait(1), "the night closed under a cost in flight"
    finally:
        hold.set()
        cost.join()
    closer.join()
    assert closed.is_set()
    entry = LedgerEntry.objects.get(character=janet)
    assert entry.game_night.number == 1
    assert entry.game_night.closed_at > entry.created_at


@pytest.mark.django_db(transaction=True)
def test_a_refresh_and_the_nights_closing_at_once_both_finish(monkeypatch) -> None:
    """A refresh holds the open night (shared), then locks the chronicle's characters; the
    next night's opening locks the chronicle, then closes the night (waiting for the refresh).
    The refresh's lock of the characters must not wait for the chronicle's row: the two
    would wait for each other (a deadlock, one of them refused)."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    (janet,) = _night_with("Janet")
    chronicle = janet.chronicle
    real = services._open_night
    night_held, go = threading.Event(), threading.Event()

    def paused(c):
        night = real(c)
        if threading.current_thread().name == "refresh":
            night_held.set()
            go.wait(10)
        return night

    monkeypatch.setattr(services, "_open_night", paused)
    errors: list[BaseException] = []

    def run(work) -> None:
        try:
            work()
        except BaseException as error:  # reported by the test
            errors.append(error)
        finally:
            connection.close()

    refresh = threading.Thread(
        target=run,
        args=(lambda: services.game_night_refresh(chronicle=chronicle, by=None),),
        name="refresh",
    )
    refresh.start()
    assert night_held.wait(10)
    opening = threading.Thread(
        target=run,
        args=(lambda: services.game_night_open(chronicle=chronicle, by=None, expected_number=1),),
    )
    opening.start()
    for _ in range(100):  # until it holds the chronicle's row and waits for the refresh's hold
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
            if cursor.fetchone()[0]:
                break
        opening.join(0.1)
    go.set()
    refresh.join(20)
    opening.join(20)
    assert errors == []
    assert GameNight.objects.get(chronicle=chronicle, closed_at__isnull=True).number == 2
    assert LedgerEntry.objects.filter(character=janet, kind="refresh").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_players_sheets_counter_names_one_state_of_them() -> None:
    """A player's sheets in a scene are counted by their newest entry (``sheet_seq``, the
    phone's ``data-sheet-seq``: a push no newer than the one shown is the same sheets): two
    costs of two of a player's characters at once must not leave the counter where it was
    when the one committed last (its entry older than the other's) had not."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    from combat.selectors import sheet_seq
    from tests.factories import UserFactory

    one, two = _night_with("One", "Two")
    player = UserFactory()
    Character.objects.filter(pk__in=[one.pk, two.pk]).update(player=player)
    one.refresh_from_db()
    two.refresh_from_db()
    ids = [one.pk, two.pk]
    scene = SimpleNamespace(pk=0, chronicle_id=one.chronicle_id)
    hold, held, done = threading.Event(), threading.Event(), threading.Event()
    first = _cost_held_open(one, hold, held)
    first.start()
    seen: dict[str, int] = {}
    try:
        assert held.wait(10)
        second = _cost_thread(two, done)
        second.start()
        if done.wait(2):  # it committed while the first cost was in flight
            seen[sheet_seq(scene, ids)] = LedgerEntry.objects.filter(character__in=ids).count()
    finally:
        hold.set()
        first.join()
    second.join()
    now = sheet_seq(scene, ids)
    count = LedgerEntry.objects.filter(character__in=ids).count()
    assert count == 2
    assert seen.get(now, count) == count, (seen, now)
