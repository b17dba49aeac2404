"""Reads compiled once (combat/prepared.py): the same answers as the ORM's, for each value."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError
from django.http import Http404
from django.test import RequestFactory

from combat import access
from combat.models import Scene
from combat.prepared import Prepared
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _screen(user, pk: int, **post: str):
    request = RequestFactory().post("/", post)
    request.user = user
    return access.screen_for(request, pk)


def test_each_call_reads_its_own_values_and_the_rows_as_they_are_now(scene, player):
    reads = Prepared(lambda _shape, pk: Scene.objects.filter(pk=pk).select_related("chronicle"))
    other = Scene.objects.create(
        chronicle=scene.chronicle,
        name="Docks",
        join_code="ZZZZZZ",
        game_night_id=scene.game_night_id,
        storyteller_id=scene.storyteller_id,
    )
    first = reads.first("one", scene.pk)
    assert (first.pk, first.name, first.chronicle.name) == (
        scene.pk,
        "Elysium",
        "Chronicle of Tests",
    )
    assert reads.first("one", other.pk).name == "Docks"
    Scene.objects.filter(pk=scene.pk).update(name="Elysium at dawn")
    assert reads.first("one", scene.pk).name == "Elysium at dawn"  # no row is kept
    assert reads.first("one", 10**6) is None
    assert list(reads._shapes) == ["one"]  # one shape, compiled once


def test_a_shape_whose_sql_depends_on_its_value_is_refused(db):
    def build(_shape, pk):
        found = Scene.objects.filter(pk=pk)
        return found.filter(seq__gte=0) if pk % 2 else found

    with pytest.raises(ValueError, match="changes with its values"):
        Prepared(build).first("odd", 1)


def test_a_value_that_never_reaches_the_sql_is_refused(db):
    with pytest.raises(ValueError, match="does not reach"):
        Prepared(lambda _shape, pk: Scene.objects.filter(seq__gte=0)).first("none", 1)


@pytest.mark.skipif(
    not connection.features.has_select_for_update, reason="SQLite locks the whole file"
)
@pytest.mark.django_db(transaction=True)
def test_a_locked_read_outside_a_transaction_is_refused(scene):
    reads = Prepared(lambda _shape, pk: Scene.objects.filter(pk=pk).select_for_update())
    with transaction.atomic():
        assert reads.first("lock", scene.pk).pk == scene.pk
    with pytest.raises(TransactionManagementError):
        reads.first("lock", scene.pk)


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
    # a superuser runs every scene (the read names no user: allowed for this read alone)
    admin = UserFactory(username="admin", is_superuser=True)
    assert _screen(admin, scene.pk) == (scene, True)
    with pytest.raises(Http404):
        _screen(admin, scene.pk, **{"from": "phone"})  # and plays in none
    # taken out of the Storytellers group: runs nothing, at once
    storyteller.groups.clear()
    with pytest.raises(Http404):
        _screen(storyteller, scene.pk)


def test_a_prepared_update_sets_the_rows_its_values_name(scene, player, other_player):
    from characters.models import Character
    from combat.models import Participant
    from combat.prepared import PreparedUpdate

    cody = Character.objects.create(chronicle=scene.chronicle, name="Cody", player=other_player)
    Participant.objects.create(scene=scene, character=cody, name="Cody")
    own = PreparedUpdate(
        lambda _n, seq, scene_id, *players: (
            Participant.objects.filter(scene_id=scene_id, character__player_id__in=players),
            {"own_seq": seq},
        )
    )

    def seqs() -> dict[str, int]:
        return dict(Participant.objects.filter(scene=scene).values_list("name", "own_seq"))

    before = seqs()["Cody"]
    assert own.run(1, 41, scene.pk, player.pk) == 1
    assert seqs() == {"Janet": 41, "Cody": before}
    assert own.run(1, 42, scene.pk, other_player.pk) == 1  # the same SQL, its own values
    assert own.run(2, 43, scene.pk, player.pk, other_player.pk) == 2
    assert seqs() == {"Janet": 43, "Cody": 43}
    assert sorted(own._shapes) == [1, 2]


def test_save_row_writes_the_columns_named_and_no_other(scene):
    from combat.prepared import save_row

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


def test_save_row_of_a_model_with_receivers_sends_them(scene):
    from django.db.models.signals import post_save

    from combat.models import Participant
    from combat.prepared import save_row

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
    from combat.prepared import insert_rows

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
