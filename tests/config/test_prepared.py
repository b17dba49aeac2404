"""A prepared query (``config.prepared``) reads what its queryset reads, builds it once per
process and shape, and refuses a queryset that depends on more than its values; its UPDATE and
INSERT helpers write what the ORM would, and never a sheet without its signals."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime

import pytest
from django.db import DataError, connection, connections, transaction
from django.db.models import Case, Exists, F, OuterRef, Q, Subquery, When
from django.db.transaction import TransactionManagementError
from django.http import Http404
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from characters.models import Character, GameNight, Trait
from combat import access
from combat.models import Participant, Scene
from config import prepared
from config.prepared import Prepared, PreparedUpdate, insert_rows, save_row
from tests.factories import CharacterFactory, TraitFactory, UserFactory

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
    query = Prepared(characters, model=Character)
    for ids in ([character.pk], [character.pk, npc.pk], [npc.pk, 10**9]):
        want = list(characters(ids))
        with django_assert_num_queries(1):
            got = query.run(ids)
            assert got[0].chronicle.name and isinstance(got[0].created_at, datetime)
        _same(got, want)
    assert timezone.is_aware(got[0].created_at)
    assert query.run([]) == []


def test_a_value_no_64_bit_column_holds_is_the_orms_no_row(character) -> None:
    """A 30-digit id typed into a URL: the ORM compiles its lookup to nothing, where the
    database would refuse the parameter (SQLite: OverflowError)."""
    query = Prepared(lambda pk: Character.objects.filter(pk=pk), model=Character)
    assert query.run(10**30) == [] and query.run(-(10**30)) == []
    assert not query._plans  # the ORM answered: no plan was built for it
    assert query.run(2**63 - 1) == [] and query.run(character.pk)[0].pk == character.pk


def test_each_run_reads_the_rows_as_they_are_now(character) -> None:
    query = Prepared(characters, model=Character)
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

    query = Prepared(build, model=Character)
    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    for _ in range(3):
        assert [c.pk for c in query.run([character.pk])] == [character.pk]
    assert len(built) == 2  # the two stand-ins of its first run, none after
    assert {c.pk for c in query.run([character.pk, other.pk])} == {character.pk, other.pk}
    assert len(built) == 4  # two ids: a shape of its own
    monkeypatch.setattr(prepared, "MAX_ITEMS", 1)
    assert {c.pk for c in query.run([character.pk, other.pk])} == {character.pk, other.pk}
    assert built[-1] == [character.pk, other.pk]  # the real ids: a plain queryset


@pytest.mark.django_db(transaction=True)
def test_one_plan_serves_every_connection_of_the_process(character) -> None:
    """Plans are per process: another thread's connection runs the plan already built (its
    converters given that connection), and answers the same rows."""
    built = []

    def build(ids):
        built.append(threading.get_ident())
        return characters(ids)

    query = Prepared(build, model=Character)
    want = [_fields(c) for c in query.run([character.pk])]
    got = []

    def elsewhere() -> None:
        try:
            got.extend(_fields(c) for c in query.run([character.pk]))
        finally:
            connections.close_all()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert len(built) == 2 and got == want


def test_a_plan_built_for_another_vendor_is_built_again(character) -> None:
    built = []

    def build(ids):
        built.append(ids)
        return characters(ids)

    query = Prepared(build, model=Character)
    query.run([character.pk])
    ((key, plan),) = query._plans.items()
    query._plans[key] = replace(plan, vendor="oracle", sql="not SQL")
    assert [c.pk for c in query.run([character.pk])] == [character.pk]
    assert len(built) == 4 and query._plans[key].vendor == connection.vendor


def test_a_query_that_depends_on_more_than_its_values_is_refused(character) -> None:
    def by_time(pk):
        return Character.objects.filter(pk=pk, updated_at__lte=timezone.now())

    def unused(pk):
        return Character.objects.filter(pk=character.pk)

    def arithmetic(pk, other):  # pk + 1 is another value's stand-in in one build, not both
        return Character.objects.filter(pk__in=[pk, pk + 1, other])

    for build, values in ((by_time, [1]), (unused, [1]), (arithmetic, [1, 2])):
        with pytest.raises(ValueError):
            Prepared(build, model=Character).run(*values)
    with pytest.raises(ValueError):
        Prepared(lambda pk: Character.objects.filter(pk=pk), model=GameNight).run(character.pk)
    with pytest.raises(TypeError):  # a string is no list of ids
        Prepared(lambda pks: Character.objects.filter(pk__in=pks)).run(str(character.pk))


def test_a_value_a_column_cannot_hold_is_refused(character, monkeypatch) -> None:
    """PostgreSQL compiles a lookup with a value out of its column's range away ("everything"
    here): the first stand-ins are beyond a small integer column, the second within it, so the
    two builds differ. SQLite's ranges are 64-bit: PostgreSQL's is put in its place."""

    def small(pk):
        return Character.objects.filter(pk=pk, willpower__lte=pk)

    if connection.vendor != "postgresql":
        monkeypatch.setattr(connection.ops, "integer_field_range", lambda internal_type: (0, 32767))
    with pytest.raises(ValueError):
        Prepared(small, model=Character).run(character.pk)


def test_a_user_id_lookup_is_prepared_on_every_database(player) -> None:
    """A user's id is a 32-bit column: stand-ins beyond it made PostgreSQL compile the lookup
    as plain False (no plan, or a wrong one). Both sets fit it."""
    from django.contrib.auth import get_user_model

    users = get_user_model()

    def named(uid):
        return users.objects.filter(pk=uid)

    got = Prepared(named, model=users).run(player.pk)
    assert [u.pk for u in got] == [u.pk for u in named(player.pk)] == [player.pk]


def test_a_value_used_twice_is_given_in_both_places(character) -> None:
    def twice(pk):
        return Character.objects.filter(Q(pk=pk) | Q(chronicle_id=pk))

    query = Prepared(twice, model=Character)
    for pk in (character.pk, character.chronicle_id, 10**9):
        assert [c.pk for c in query.run(pk)] == [c.pk for c in twice(pk)]


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


# -- reads keyed by options (a user's flags, a lock), as combat's taps make them ---------------


def _screen(user, pk: int, **post: str):
    request = RequestFactory().post("/", post)
    request.user = user
    return access.screen_for(request, pk)


def test_each_call_reads_its_own_values_and_the_rows_as_they_are_now(scene, player):
    reads = Prepared(
        lambda pk, *, kind: Scene.objects.filter(pk=pk).select_related("chronicle"), model=Scene
    )
    other = Scene.objects.create(
        chronicle=scene.chronicle,
        name="Docks",
        join_code="ZZZZZZ",
        game_night_id=scene.game_night_id,
        storyteller_id=scene.storyteller_id,
    )
    first = reads.first(scene.pk, kind="one")
    assert (first.pk, first.name, first.chronicle.name) == (
        scene.pk,
        "Elysium",
        "Chronicle of Tests",
    )
    assert reads.first(other.pk, kind="one").name == "Docks"
    Scene.objects.filter(pk=scene.pk).update(name="Elysium at dawn")
    assert reads.first(scene.pk, kind="one").name == "Elysium at dawn"  # no row is kept
    assert reads.first(10**6, kind="one") is None
    assert len(reads._plans) == 1  # one shape, compiled once
    reads.first(scene.pk, kind="two")
    assert len(reads._plans) == 2  # an option is part of the shape


def test_a_shape_whose_sql_depends_on_its_value_is_refused(db):
    def build(pk):
        found = Scene.objects.filter(pk=pk)
        return found.filter(seq__gte=0) if pk % 2 else found

    with pytest.raises(ValueError, match="changes with its values"):
        Prepared(build).first(1)


def test_a_value_that_never_reaches_the_sql_is_refused(db):
    with pytest.raises(ValueError, match="does not reach"):
        Prepared(lambda pk: Scene.objects.filter(seq__gte=0)).first(1)
    with pytest.raises(ValueError, match="does not reach"):  # an item of a list as well
        Prepared(lambda pks: Scene.objects.filter(pk__in=pks[:1])).run([1, 2])


@pytest.mark.skipif(
    not connection.features.has_select_for_update, reason="SQLite locks the whole file"
)
@pytest.mark.django_db(transaction=True)
def test_a_locked_read_outside_a_transaction_is_refused(scene):
    reads = Prepared(lambda pk: Scene.objects.filter(pk=pk).select_for_update())
    with transaction.atomic():
        assert reads.first(scene.pk).pk == scene.pk
    with pytest.raises(TransactionManagementError):
        reads.first(scene.pk)


@pytest.mark.skipif(
    not connection.features.has_select_for_update, reason="SQLite locks the whole file"
)
@pytest.mark.django_db(transaction=True)
def test_a_shared_read_takes_the_shared_lock_and_refuses_what_it_cannot_spell(scene):
    shared = Prepared(lambda pk: Scene.objects.filter(pk=pk).select_for_update(), share=True)
    with CaptureQueriesContext(connection) as seen, transaction.atomic():
        assert shared.first(scene.pk).pk == scene.pk
    assert any(q["sql"].endswith(" FOR SHARE") for q in seen.captured_queries)
    of = Prepared(
        lambda pk: Scene.objects.filter(pk=pk).select_for_update(of=("self",)), share=True
    )
    with pytest.raises(ValueError, match="shared lock"), transaction.atomic():
        of.first(scene.pk)


def test_the_scene_read_answers_each_user_with_the_same_flags_for_themselves(
    scene, player, other_player, storyteller
):
    # the player's read compiles the players' shape; another player's answer is their own
    assert _screen(player, scene.pk) == (scene, False)
    assert _screen(player, scene.pk)[0].present is True
    with pytest.raises(Http404):
        _screen(other_player, scene.pk)
    # a storyteller of another chronicle (same flags as the scene's own) runs nothing here
    assert _screen(storyteller, scene.pk) == (scene, True)
    stranger = UserFactory(username="other_st", is_staff=True)
    stranger.groups.set(storyteller.groups.all())
    with pytest.raises(Http404):
        _screen(stranger, scene.pk)
    # a superuser runs every scene (their read asks whether they play: the id is in its SQL)
    admin = UserFactory(username="admin", is_superuser=True)
    assert _screen(admin, scene.pk) == (scene, True)
    with pytest.raises(Http404):
        _screen(admin, scene.pk, **{"from": "phone"})  # and plays in none
    # taken out of the Storytellers group: runs nothing, at once
    storyteller.groups.clear()
    with pytest.raises(Http404):
        _screen(storyteller, scene.pk)


# -- writes --------------------------------------------------------------------------------------


def _own_seq() -> PreparedUpdate:
    return PreparedUpdate(
        lambda seq, scene_id, players: (
            Participant.objects.filter(scene_id=scene_id, character__player_id__in=players),
            {"own_seq": seq},
        )
    )


def _seqs(scene) -> dict[str, int]:
    return dict(Participant.objects.filter(scene=scene).values_list("name", "own_seq"))


def test_a_prepared_update_sets_the_rows_its_values_name(scene, player, other_player):
    cody = Character.objects.create(chronicle=scene.chronicle, name="Cody", player=other_player)
    Participant.objects.create(scene=scene, character=cody, name="Cody")
    own = _own_seq()

    def seqs() -> dict[str, int]:
        return _seqs(scene)

    before = seqs()["Cody"]
    assert own.run(41, scene.pk, [player.pk]) == 1
    assert seqs() == {"Janet": 41, "Cody": before}
    assert own.run(42, scene.pk, [other_player.pk]) == 1  # the same SQL, its own values
    assert own.run(43, scene.pk, [player.pk, other_player.pk]) == 2
    assert seqs() == {"Janet": 43, "Cody": 43}
    assert own.run(44, scene.pk, []) == 0
    assert set(own._plans) == {(None, None, 1), (None, None, 2)}  # a shape by number of players


def test_save_row_writes_the_columns_named_and_no_other(scene):
    scene.situation, scene.seq, scene.name = "Rain", scene.seq + 5, "Renamed in memory only"
    save_row(scene, ("situation", "seq"))
    fresh = Scene.objects.get(pk=scene.pk)
    assert (fresh.situation, fresh.seq, fresh.name) == ("Rain", scene.seq, "Elysium")
    save_row(scene)  # every column
    assert Scene.objects.get(pk=scene.pk).name == "Renamed in memory only"
    scene.pk = 10**6
    with pytest.raises(RuntimeError, match="not there"):
        save_row(scene)
    fresh.pk, fresh._state.adding, fresh.join_code = None, True, "NEWONE"
    save_row(fresh)  # a row not saved yet: inserted, as save() does
    assert Scene.objects.filter(pk=fresh.pk, join_code="NEWONE").exists()


def test_save_row_makes_another_update_along_in_its_statement_on_postgresql(
    scene, player, other_player, monkeypatch
):
    """``along``: the other update's rows are written as its own run writes them, in the
    row's statement on PostgreSQL (a data-modifying ``WITH``), after it elsewhere; with no
    rows to name (an empty list) it makes no statement; a row not there is still refused."""
    from django.test.utils import CaptureQueriesContext

    cody = Character.objects.create(chronicle=scene.chronicle, name="Cody", player=other_player)
    Participant.objects.create(scene=scene, character=cody, name="Cody")
    own, before = _own_seq(), _seqs(scene)["Cody"]
    one = 1 if connection.vendor == "postgresql" else 2
    scene.situation = "Fog"
    with CaptureQueriesContext(connection) as captured:
        save_row(scene, ("situation",), along=(own, (51, scene.pk, [player.pk])))
    assert len(captured) == one, [q["sql"] for q in captured]
    assert Scene.objects.get(pk=scene.pk).situation == "Fog"
    assert _seqs(scene) == {"Janet": 51, "Cody": before}
    with CaptureQueriesContext(connection) as captured:
        save_row(scene, ("situation",), along=(own, (52, scene.pk, [player.pk, cody.player_id])))
    assert len(captured) == one and _seqs(scene) == {"Janet": 52, "Cody": 52}
    with CaptureQueriesContext(connection) as captured:
        save_row(scene, ("situation",), along=(own, (53, scene.pk, [])))
    assert len(captured) == 1 and _seqs(scene) == {"Janet": 52, "Cody": 52}
    monkeypatch.setattr(prepared, "MAX_ITEMS", 1)  # a list too long for a plan: by the ORM
    save_row(scene, ("situation",), along=(own, (54, scene.pk, [player.pk, cody.player_id])))
    assert _seqs(scene) == {"Janet": 54, "Cody": 54}
    scene.pk = 10**6
    with pytest.raises(RuntimeError, match="not there"):
        save_row(scene, ("situation",), along=(own, (55, scene.pk, [player.pk])))


def test_save_row_saves_other_rows_in_its_statement_on_postgresql(
    scene, player, chronicle, storyteller
):
    """``rows``: each saved (every column) as its own save_row saves it, in the row's
    statement on PostgreSQL, before it elsewhere; a row with receivers by ``save()`` (its
    signals sent), before it; a row of them not there is refused."""
    from django.test.utils import CaptureQueriesContext

    from combat import services

    other = Scene.objects.get(
        pk=services.scene_open(chronicle=chronicle, by=storyteller, name="Annex").pk
    )
    scene.situation, other.situation = "Hail", "Sleet"
    with CaptureQueriesContext(connection) as captured:
        save_row(
            scene, ("situation",), rows=[other], along=(_own_seq(), (61, scene.pk, [player.pk]))
        )
    assert len(captured) == (1 if connection.vendor == "postgresql" else 3)
    situations = dict(Scene.objects.values_list("pk", "situation"))
    assert situations == {scene.pk: "Hail", other.pk: "Sleet"}
    assert _seqs(scene) == {"Janet": 61}
    janet = Participant.objects.get(scene=scene)
    janet.name = "Janet the Wet"
    save_row(scene, ("situation",), rows=[janet])  # Participant has receivers: by save()
    assert Participant.objects.get(pk=janet.pk).name == "Janet the Wet"
    same = Scene.objects.get(pk=scene.pk)
    same.situation, scene.situation = "Snow", "Thaw"
    with CaptureQueriesContext(connection) as captured:
        save_row(scene, ("situation",), rows=[same])  # a row twice: apart, in order
    assert len(captured) == 2 and Scene.objects.get(pk=scene.pk).situation == "Thaw"
    gone = Scene.objects.get(pk=other.pk)
    gone.pk = 10**6
    with transaction.atomic(), pytest.raises(RuntimeError, match="Scene 1000000 is not"):
        save_row(scene, ("situation",), rows=[other, gone])


def test_save_row_of_a_model_with_receivers_sends_them(scene):
    from django.db.models.signals import post_save

    sent = []

    def heard(sender, instance, **kwargs):
        sent.append(instance.pk)

    janet = Participant.objects.get(scene=scene)
    post_save.connect(heard, sender=Participant)
    try:
        janet.name = "Janet the Bold"
        save_row(janet, ("name",))
    finally:
        post_save.disconnect(heard, sender=Participant)
    assert sent == [janet.pk]
    assert Participant.objects.get(pk=janet.pk).name == "Janet the Bold"


def test_insert_rows_inserts_as_bulk_create_does(scene, storyteller, character):
    from combat.models import SceneLogEntry

    lines = [
        SceneLogEntry(scene=scene, seq=9, game_time=0, kind="note", text=f"line {n}", data={"n": n})
        for n in range(2)
    ]
    insert_rows(lines)
    through = SceneLogEntry.characters.through
    insert_rows([through(scenelogentry_id=e.pk, character_id=character.pk) for e in lines])
    read = SceneLogEntry.objects.filter(pk__in=[e.pk for e in lines]).order_by("pk")
    assert [(e.text, e.data, e.created_at is not None) for e in read] == [
        ("line 0", {"n": 0}, True),
        ("line 1", {"n": 1}, True),
    ]
    assert [list(e.characters.all()) for e in read] == [[character], [character]]
    assert not any(e._state.adding for e in lines)


def test_the_writes_without_signals_never_leave_a_sheet_stale(character, monkeypatch) -> None:
    """A sheet's version changes through its models' signals: save_row saves a sheet row by
    ``save()`` (even were its receivers gone), insert_rows and PreparedUpdate refuse it."""
    from django.db.models.signals import post_save

    from characters.sheet_versions import SHEET_ROWS

    assert {Character, *SHEET_ROWS} <= prepared._KEEP_SIGNALS
    trait = TraitFactory(character=character, category="physical", name="Strong")
    before = Character.objects.get(pk=character.pk).sheet_version
    monkeypatch.setattr(post_save, "has_listeners", lambda sender=None: False)
    trait.name = "Brawny"
    save_row(trait, ("name",))
    assert Trait.objects.get(pk=trait.pk).name == "Brawny"
    assert Character.objects.get(pk=character.pk).sheet_version != before
    traits = sorted(Trait.objects.values_list("pk", "name"))
    with pytest.raises(ValueError, match="keep_signals"):
        insert_rows([Trait(character=character, category="physical", name="Lithe")])
    for model, field in ((Trait, "name"), (Character, "name")):
        update = PreparedUpdate(lambda pk, m=model, f=field: (m.objects.filter(pk=pk), {f: "X"}))
        with pytest.raises(ValueError, match="keep_signals"):
            update.run(character.pk)
    assert sorted(Trait.objects.values_list("pk", "name")) == traits
    assert Character.objects.get(pk=character.pk).name != "X"


def _server_prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_on_postgresql_its_statements_are_prepared_once_and_logged_with_their_values(
    character, settings
) -> None:
    """PostgreSQL parses and plans a built-once statement once per connection (a prepared
    statement of the server), and the query log still shows it with its values; with
    ``DATABASE_PREPARE`` off nothing is prepared."""
    if connection.vendor != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    from django.test.utils import CaptureQueriesContext

    def named(pk):
        return Character.objects.filter(pk=pk, npc=False)

    query = Prepared(named, model=Character)
    with CaptureQueriesContext(connection) as captured:
        assert [c.pk for c in query.run(character.pk)] == [character.pk]
    assert f'"characters_character"."id" = {character.pk}' in captured[0]["sql"]
    assert [c.pk for c in query.run(character.pk)] == [character.pk]
    assert [s for s in _server_prepared() if 'FROM "characters_character"' in s]

    settings.DATABASE_PREPARE = False

    def other(pk):
        return Trait.objects.filter(character_id=pk)

    Prepared(other, model=Trait).run(character.pk)
    assert not [s for s in _server_prepared() if 'FROM "characters_trait"' in s]


def test_rows_and_their_links_are_inserted_in_one_statement_on_postgresql(scene, character):
    """``insert_linked_rows``: the new rows get their ids in order, and each links every id
    named, as two inserts would; on PostgreSQL in one statement."""
    from django.test.utils import CaptureQueriesContext

    from combat.models import SceneLogEntry

    other = CharacterFactory(chronicle=character.chronicle, name="Other")
    entries = [
        SceneLogEntry(scene=scene, seq=7, game_time=0, kind="note", text=t, public=True, data={})
        for t in ("one", "two", "three")
    ]
    through = SceneLogEntry.characters.through
    with CaptureQueriesContext(connection) as captured:
        prepared.insert_linked_rows(
            entries, through, "scenelogentry_id", "character_id", [character.pk, other.pk]
        )
    assert len(captured) == (1 if connection.vendor == "postgresql" else 2)
    for entry in entries:
        stored = SceneLogEntry.objects.get(pk=entry.pk)
        assert stored.text == entry.text
        assert sorted(c.pk for c in stored.characters.all()) == sorted([character.pk, other.pk])
    assert [e.pk for e in entries] == sorted(e.pk for e in entries)


def test_a_row_inserted_noting_its_id_on_another_in_one_statement_on_postgresql(scene):
    """``insert_noting``: the new row is inserted as ``insert_rows`` inserts it and the other
    row's column (that one column: the row's others stay as they are in the database) holds
    its id, in one statement on PostgreSQL; a row to note that is not there refuses it."""
    from django.test.utils import CaptureQueriesContext

    from combat.models import Challenge

    a = Participant.objects.filter(scene=scene).first()
    stale = Participant.objects.get(pk=a.pk)
    Participant.objects.filter(pk=a.pk).update(name="Renamed", own_seq=7)
    for _ in range(2):
        challenge = Challenge(scene=scene, attacker=a, mode="static", options={})
        with CaptureQueriesContext(connection) as captured:
            prepared.insert_noting(challenge, stale, "last_started")
        assert len(captured) == (1 if connection.vendor == "postgresql" else 2)
        assert challenge.pk and not challenge._state.adding
        assert Challenge.objects.get(pk=challenge.pk).attacker_id == a.pk
        assert stale.last_started == challenge.pk
        stored = Participant.objects.get(pk=a.pk)
        assert (stored.last_started, stored.name, stored.own_seq) == (challenge.pk, "Renamed", 7)
    gone = Participant(pk=10**9, scene=scene, name="Gone")
    with pytest.raises(RuntimeError, match="not there"), transaction.atomic():
        prepared.insert_noting(Challenge(scene=scene, attacker=a, options={}), gone, "last_started")


def test_save_row_inserts_new_rows_and_their_links_in_its_statement_on_postgresql(
    scene, character, player
):
    """``then``: the new rows (a step's log lines) and their links inserted as
    ``insert_linked_rows`` inserts them, their ids set in order, in the row's statement with
    ``along`` on PostgreSQL (the step's writes one round trip), after it elsewhere; without
    links, the rows alone; a row of ``rows`` not there still refuses the whole statement."""
    from django.test.utils import CaptureQueriesContext

    from combat.models import SceneLogEntry

    other = CharacterFactory(chronicle=character.chronicle, name="Other")
    through = SceneLogEntry.characters.through

    def lines(*texts: str) -> list[SceneLogEntry]:
        return [
            SceneLogEntry(scene=scene, seq=9, game_time=0, kind="note", text=t, public=True)
            for t in texts
        ]

    entries = lines("one", "two")
    scene.situation = "Mist"
    linked = prepared.Linked(
        entries, through, "scenelogentry_id", "character_id", [character.pk, other.pk]
    )
    with CaptureQueriesContext(connection) as captured:
        save_row(
            scene, ("situation",), along=(_own_seq(), (71, scene.pk, [player.pk])), then=linked
        )
    assert len(captured) == (1 if connection.vendor == "postgresql" else 4), (
        captured.captured_queries
    )
    assert Scene.objects.get(pk=scene.pk).situation == "Mist" and _seqs(scene) == {"Janet": 71}
    assert [e.pk for e in entries] == sorted(e.pk for e in entries)
    for entry in entries:
        stored = SceneLogEntry.objects.get(pk=entry.pk)
        assert stored.text == entry.text and not entry._state.adding
        assert sorted(c.pk for c in stored.characters.all()) == sorted([character.pk, other.pk])
    alone = lines("three")
    save_row(
        scene,
        ("situation",),
        then=prepared.Linked(alone, through, "scenelogentry_id", "character_id", []),
    )
    assert SceneLogEntry.objects.get(pk=alone[0].pk).characters.count() == 0
    gone = Scene.objects.get(pk=scene.pk)
    gone.pk = 10**6
    refused = lines("four")
    with pytest.raises(RuntimeError, match="not there"), transaction.atomic():
        save_row(
            scene,
            ("situation",),
            rows=[gone],
            then=prepared.Linked(
                refused, through, "scenelogentry_id", "character_id", [character.pk]
            ),
        )
    assert not SceneLogEntry.objects.filter(text="four").exists()  # rolled back with it


def _values_of(ids: list[int]):
    later = Case(When(npc=False, then=F("created_at")), default=None)
    return (
        Character.objects.filter(pk__in=ids)
        .order_by("pk")
        .annotate(joined=later, chronicle_name=F("chronicle__name"))
        .values_list("id", "notes", "created_at", "npc", "joined", "chronicle_name")
    )


def test_a_prepared_values_read_gives_the_tuples_values_list_gives(
    character, django_assert_num_queries
) -> None:
    npc = CharacterFactory(chronicle=character.chronicle, name="Bouncer", npc=True)
    values = prepared.PreparedValues(_values_of)
    ids = [character.pk, npc.pk]
    with django_assert_num_queries(1):
        rows = values.run(ids)
    assert rows == list(_values_of(ids))  # the database's converters applied (a datetime)
    assert isinstance(rows[0][2], datetime) and rows[0][4] == rows[0][2] and rows[1][4] is None
    assert values.names(ids) == ("id", "notes", "created_at", "npc", "joined", "chronicle_name")
    assert values.run([]) == []
    with pytest.raises(ValueError, match="values_list"):
        prepared.PreparedValues(characters).run(ids)


def _options_of(ids: list[int]):
    return (
        Character.objects.filter(pk__in=ids)
        .order_by("pk")
        .annotate(house=F("chronicle__options"))
        .values_list("id", "created_at", "house")
    )


def test_a_values_read_leaves_the_columns_from_raw_from_as_read_until_finished(character):
    """``raw_from``: the columns from it on come as the database gave them (a JSON field's
    text), the ones before converted; ``finish`` converts the rest, as the ORM would have."""
    character.chronicle.options = {"house": ["rule"], "n": 1}
    character.chronicle.save(update_fields=["options"])
    whole = list(_options_of([character.pk]))
    raw = prepared.PreparedValues(_options_of, raw_from=2)
    (row,) = raw.run([character.pk])
    assert row[:2] == whole[0][:2] and isinstance(row[1], datetime)
    assert isinstance(row[2], str) and row[2] != whole[0][2]  # the JSON as text
    assert raw.finish(row) == whole[0]
    assert raw.run([]) == []
    with pytest.raises(ValueError, match="needs a plan"):  # the ORM's rows are converted whole
        raw.run(list(range(1, prepared.MAX_ITEMS + 2)))


@pytest.mark.django_db(transaction=True)
def test_a_statement_prepared_before_a_column_changed_type_runs_after(settings) -> None:
    """A migration that changes the type of a column a prepared statement returns (another
    connection's ALTER) makes PostgreSQL refuse that statement ("cached plan must not change
    result type") on every connection that prepared it: outside a transaction nothing rolls
    back to make psycopg forget it, so every request (the session's read) would fail until
    the connection is replaced. It is prepared again instead."""
    if connection.vendor != "postgresql" or not settings.DATABASE_PREPARE:
        pytest.skip("server-side prepared statements are PostgreSQL's")
    import psycopg

    params = connection.get_connection_params()
    params.pop("pool", None)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE st_retyped (x varchar(10)); INSERT INTO st_retyped VALUES ('a')"
        )
    select = "SELECT x FROM st_retyped WHERE x = %s"

    def read() -> list[tuple[str]]:
        with prepared.statement_cursor(connection) as cursor:
            cursor.execute(select, ["a"])
            return cursor.fetchall()

    try:
        assert read() == read() == [("a",)]  # prepared on this connection
        with psycopg.connect(**params, autocommit=True) as migration:
            migration.execute("ALTER TABLE st_retyped ALTER x TYPE varchar(20)")
        assert read() == read() == [("a",)]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE st_retyped")


def test_on_postgresql_the_values_reads_and_the_sheets_counter_are_prepared(scene, character):
    """A values read (the challenges' list) and the sheets' counter (``sheet_seq``, on every
    push) are texts built once: PostgreSQL prepares them, as the model reads."""
    if connection.vendor != "postgresql":
        pytest.skip("server-side prepared statements are PostgreSQL's")
    from combat import selectors

    assert prepared.PreparedValues(_values_of).run([character.pk])[0][0] == character.pk
    assert selectors.sheet_seq(scene, [character.pk]).endswith(".0")
    texts = _server_prepared()
    assert [s for s in texts if s.startswith('SELECT "characters_character"."id" AS "id"')]
    assert [s for s in texts if 'FROM "characters_gamenight" WHERE "chronicle_id" = $1' in s]


@pytest.mark.django_db(transaction=True)
def test_a_connections_statements_take_its_one_cursor_again(settings, character) -> None:
    """On PostgreSQL a connection's prepared statements run on one psycopg cursor, taken
    again once the last statement closed it (its adapters know the parameters' types); one
    still open is never shared: a statement run meanwhile gets a cursor of its own. A new
    connection gets a new cursor, and every statement still answers as the ORM would."""
    if connection.vendor != "postgresql" or not settings.DATABASE_PREPARE:
        pytest.skip("server-side prepared statements are PostgreSQL's")
    query = Prepared(characters, model=Character)

    def raw(wrapper):
        return wrapper.cursor

    with prepared.statement_cursor(connection) as first:
        kept = raw(first)
        with prepared.statement_cursor(connection) as meanwhile:
            assert raw(meanwhile) is not kept  # the first is still open
            meanwhile.execute("SELECT 2")
            first.execute("SELECT 1")
            assert meanwhile.fetchone() == (2,) and first.fetchone() == (1,)
    with prepared.statement_cursor(connection) as again:
        assert raw(again) is kept
    assert [c.pk for c in query.run([character.pk])] == [character.pk]
    with pytest.raises(DataError), prepared.statement_cursor(connection) as failing:
        failing.execute("SELECT 1/0")
    assert query.run([character.pk])[0].name == character.name  # after a failed statement
    connection.close()
    with prepared.statement_cursor(connection) as fresh:
        assert raw(fresh) is not kept and not raw(fresh).connection.closed
    assert query.run([character.pk])[0].pk == character.pk


def test_a_long_statement_is_converted_once_and_answers_with_its_values(settings, db) -> None:
    """On PostgreSQL a statement of this module's with more than psycopg keeps (over 4 kB,
    or over 50 parameters: a step's write, the pushes' joined reads) has its ``%s`` turned
    into ``$n`` once per process, not on every run; each run still answers its own values."""
    if connection.vendor != "postgresql" or not settings.DATABASE_PREPARE:
        pytest.skip("server-side prepared statements are PostgreSQL's")
    kept = prepared._kept_query_class()
    assert kept is not None
    count = 60  # over psycopg's 50 parameters
    text = "SELECT " + ", ".join(f"%s::int + {n}" for n in range(count))
    text += " /* " + "x" * 4096 + " */"  # and over its 4 kB
    answers, misses = [], []
    for base in (1, 1000):
        before = kept.conversions.cache_info().misses
        with prepared.statement_cursor(connection) as cursor:
            cursor.execute(text, [base + n for n in range(count)])
            answers.append(cursor.fetchone())
        misses.append(kept.conversions.cache_info().misses - before)
    assert answers == [tuple(b + 2 * n for n in range(count)) for b in (1, 1000)]
    assert misses == [1, 0]  # converted the first time only


def _scene_read(scene_id: int):
    return Scene.objects.select_related("chronicle").filter(pk=scene_id).order_by()


def _people_read(scene_id: int):
    return Participant.objects.filter(scene_id=scene_id).values_list(
        "pk", "name", "npc", "joined_at", "character__player__username"
    )


def test_a_row_read_with_its_list_reads_what_each_reads_alone(scene, character) -> None:
    """``read_with``: the row and the list (in its own order, converters applied) as the two
    reads give them, in one statement on PostgreSQL; a row with no list, and no row."""
    from django.test.utils import CaptureQueriesContext

    one, many = Prepared(_scene_read, model=Scene), prepared.PreparedValues(_people_read)
    for name in ("Zed", "Abel", "Mia"):  # the list's order (npc, name, id) is not the ids'
        Participant.objects.create(scene=scene, name=name, npc=True)
    with CaptureQueriesContext(connection) as seen:
        row, rows = prepared.read_with(one, (scene.pk,), many, (scene.pk,))
    alone = one.first(scene.pk)
    assert (row.pk, row.name, row.chronicle.name) == (alone.pk, alone.name, alone.chronicle.name)
    assert rows == many.run(scene.pk) == [tuple(r) for r in _people_read(scene.pk)]
    assert [r[2] for r in rows] == [False, True, True, True]  # Janet, then the NPCs by name
    assert [r[1] for r in rows[1:]] == ["Abel", "Mia", "Zed"]
    assert isinstance(rows[0][3], datetime) and rows[0][3].tzinfo is not None
    assert len(seen.captured_queries) == (1 if connection.vendor == "postgresql" else 2)

    Participant.objects.filter(scene=scene).delete()
    row, rows = prepared.read_with(one, (scene.pk,), many, (scene.pk,))
    assert row.pk == scene.pk and rows == []
    assert prepared.read_with(one, (scene.pk + 1000,), many, (scene.pk + 1000,)) == (None, [])


def _people_by(scene_id: int, order: tuple[str, ...]):
    return (
        Participant.objects.filter(scene_id=scene_id)
        .order_by(*order)
        .values_list("pk", "name", "npc", "character__player__username")
    )


@pytest.mark.parametrize(
    "order",
    [
        ("-name",),  # a DESC term by position
        ("npc", "-pk"),  # and by the same expression as a column (the pk)
        (F("character__player__username").asc(nulls_first=True), "name"),  # NULLs placed
        ("-joined_at", "pk"),  # a term that is none of its columns: two statements
    ],
)
def test_a_list_read_with_a_row_is_numbered_by_its_own_order(scene, character, order) -> None:
    """``read_with`` gives the list in the order of its own ORDER BY, spelt over its columns
    in the statement (not the order a sorted subquery happens to give rows to the query
    around it, which the standard does not keep); a term not among them: read alone."""
    from django.test.utils import CaptureQueriesContext

    def people(scene_id: int):
        return _people_by(scene_id, order)

    one, many = Prepared(_scene_read, model=Scene), prepared.PreparedValues(people)
    for name in ("Zed", "Abel", "Mia", "Bo"):
        Participant.objects.create(scene=scene, name=name, npc=name != "Bo")
    with CaptureQueriesContext(connection) as seen:
        row, rows = prepared.read_with(one, (scene.pk,), many, (scene.pk,))
    assert row.pk == scene.pk
    assert rows == many.run(scene.pk) == [tuple(r) for r in people(scene.pk)]
    joined = [q["sql"] for q in seen.captured_queries if "UNION ALL" in q["sql"]]
    if connection.vendor != "postgresql":
        assert not joined
    elif "-joined_at" in order:
        assert not joined and len(seen.captured_queries) == 2
    else:
        assert len(joined) == 1 and "row_number() OVER (ORDER BY m.c" in joined[0]
