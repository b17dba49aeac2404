"""A prepared query (``config.prepared``) reads what its queryset reads, builds it once per
connection and shape, and refuses a queryset that depends on more than its arguments."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest
from django.db import connections
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from characters.models import Character, GameNight, Trait
from config import prepared
from config.prepared import Prepared
from tests.factories import CharacterFactory, TraitFactory

pytestmark = pytest.mark.django_db


def characters(ids: list[int]):
    open_night = GameNight.objects.filter(
        chronicle_id=OuterRef("chronicle_id"), closed_at__isnull=True
    ).values("pk")[:1]
    return (
        Character.objects.filter(pk__in=ids)
        .select_related("player", "chronicle")
        .annotate(
            open_night=Subquery(open_night),
            strong=Exists(Trait.objects.filter(character=OuterRef("pk"), name="Strong")),
        )
    )


def _fields(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def _same(got: list[Character], want: list[Character]) -> None:
    assert [c.pk for c in got] == [c.pk for c in want]
    for a, b in zip(got, want, strict=True):
        assert _fields(a) == _fields(b)
        assert (a.open_night, a.strong) == (b.open_night, b.strong)
        assert type(a.strong) is bool
        assert _fields(a.chronicle) == _fields(b.chronicle)
        assert (a.player and _fields(a.player)) == (b.player and _fields(b.player))
        assert a._state.db == b._state.db and not a._state.adding


def test_its_rows_are_the_querysets(character, django_assert_num_queries) -> None:
    npc = CharacterFactory(chronicle=character.chronicle, name="Anton", player=None, npc=True)
    TraitFactory(character=npc, category="physical", name="Strong")
    query = Prepared(Character, characters)
    for ids in ([character.pk], [character.pk, npc.pk], [npc.pk, 10**9]):
        want = list(characters(ids))
        with django_assert_num_queries(1):
            got = query.run(ids)
            assert got[0].chronicle.name and isinstance(got[0].created_at, datetime)
        _same(got, want)
    assert timezone.is_aware(got[0].created_at)
    assert query.run([]) == []


def test_each_run_reads_the_rows_as_they_are_now(character) -> None:
    query = Prepared(Character, characters)
    assert query.run([character.pk])[0].strong is False
    TraitFactory(character=character, category="physical", name="Strong")
    Character.objects.filter(pk=character.pk).update(willpower=7, sheet_version=1)
    (now,) = query.run([character.pk])
    assert (now.strong, now.willpower) == (True, 7)


def test_it_is_built_once_per_shape(character, monkeypatch) -> None:
    built = []

    def build(ids):
        built.append(list(ids))
        return characters(ids)

    query = Prepared(Character, build)
    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    for _ in range(3):
        assert [c.pk for c in query.run([character.pk])] == [character.pk]
    assert len(built) == 2  # the two stand-ins of its first run, none after
    assert {c.pk for c in query.run([character.pk, other.pk])} == {character.pk, other.pk}
    assert len(built) == 4  # two ids: a shape of its own
    monkeypatch.setattr(prepared, "MAX_ITEMS", 1)
    assert {c.pk for c in query.run([character.pk, other.pk])} == {character.pk, other.pk}
    assert built[-1] == [character.pk, other.pk]  # the real ids: a plain queryset


def test_each_connection_has_its_own_plan(character) -> None:
    """A plan holds its connection's compiler (converters): another thread's connection,
    another plan."""
    built = []

    def build(ids):
        built.append(threading.get_ident())
        return characters(ids)

    query = Prepared(Character, build)
    query.run([character.pk])

    def elsewhere() -> None:
        try:
            query.run([character.pk])
        finally:
            connections.close_all()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert len(built) == 4 and len(set(built)) == 2
    query.run([character.pk])
    assert len(built) == 4


def test_a_query_that_depends_on_more_than_its_arguments_is_refused(character) -> None:
    def by_time(pk):
        return Character.objects.filter(pk=pk, updated_at__lte=timezone.now())

    def twice(pk):
        return Character.objects.filter(Q(pk=pk) | Q(chronicle_id=pk))

    def out_of_range(pk):  # a stand-in no small positive field holds: no SQL to keep
        return Character.objects.filter(pk=pk, willpower__lte=pk)

    def unused(pk):
        return Character.objects.filter(pk=character.pk)

    for build in (by_time, twice, unused, out_of_range):
        with pytest.raises(ValueError):
            Prepared(Character, build).run(character.pk)
    with pytest.raises(ValueError):
        Prepared(GameNight, lambda pk: Character.objects.filter(pk=pk)).run(character.pk)


def test_a_prepared_prefetch_fills_what_prefetch_related_objects_fills(
    character, django_assert_num_queries
) -> None:
    from django.db.models import prefetch_related_objects

    from characters.selectors import SHEET_PREFETCH
    from config.prepared import PreparedPrefetch
    from tests.factories import AbilityFactory

    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    for name in ("Strong", "Brawny", "Agile"):
        TraitFactory(character=other, category="physical", name=name)
    AbilityFactory(character=character, name="Dodge")
    ids = [character.pk, other.pk, 10**9]
    want = list(Character.objects.filter(pk__in=ids))
    prefetch_related_objects(want, *SHEET_PREFETCH)
    got = list(Character.objects.filter(pk__in=ids))
    prefetch = PreparedPrefetch(Character, SHEET_PREFETCH)
    with django_assert_num_queries(len(SHEET_PREFETCH)):
        prefetch.run(got)
    with django_assert_num_queries(0):
        for a, b in zip(got, want, strict=True):
            assert set(a._prefetched_objects_cache) == set(b._prefetched_objects_cache)
            for name, rows in b._prefetched_objects_cache.items():
                mine = list(getattr(a, name).all())
                assert [_fields(r) for r in mine] == [_fields(r) for r in rows]
                assert all(r.character is a for r in mine)
    cody = next(c for c in got if c.pk == other.pk)
    assert [t.name for t in cody.traits.all()] == ["Agile", "Brawny", "Strong"]
    with pytest.raises(ValueError):
        PreparedPrefetch(Character, ["chronicle"]).run(got)
