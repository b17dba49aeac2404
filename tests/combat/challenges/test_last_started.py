"""Each participant's latest challenge as attacker, kept on its row (``Participant.last_started``,
written by the start in its INSERT's statement): a start form's key names it. It says what
main's read of the challenges said (each attacker's newest, whatever became of it: voided,
left, finished) after any series of starts, voids and leaves; migration 0010 fills it for the
challenges there were, and goes back."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Max

from combat import render_cache
from combat import services as scenes
from combat.challenges import reads, start_form
from combat.challenges.leaving import challenge_leave
from combat.challenges.refusals import ChallengeError
from combat.models import Challenge, ChallengeStatus, Participant

pytestmark = pytest.mark.django_db


def _old(scene_pk: int) -> dict[int, int]:
    """main's answer: each attacker's newest challenge of the scene, by the challenges."""
    rows = Challenge.objects.filter(scene_id=scene_pk).values("attacker").annotate(last=Max("pk"))
    return {r["attacker"]: r["last"] for r in rows}


def _check(t) -> None:
    old = _old(t.scene.pk)
    rows = Participant.objects.filter(scene_id=t.scene.pk).values_list("pk", "last_started")
    assert dict(rows) == {pk: old.get(pk, 0) for pk, _ in rows}
    with render_cache.RenderCache().active():
        scene = t.refresh().scene
        assert start_form.last_started(scene) == old
        played = reads._played(scene)
        assert reads.phone_last_started(scene) == {p: old[p] for p in played if p in old}


@pytest.mark.parametrize("seed", range(3))
def test_the_column_says_what_the_challenges_said_after_random_starts_voids_and_leaves(
    classic, seed
):
    t = classic
    rng = random.Random(seed)
    npcs = [
        scenes.scene_add_npc(scene=t.refresh().scene, by=t.st, name=n, pools={"physical": 9})
        for n in ("Ghoul", "Thrall")
    ]
    cast = [(t.a, t.a_user, "Strong"), (t.d, t.d_user, "Tough")]
    cast += [(npc, t.st, "Physical") for npc in npcs]
    _check(t)
    made = {"start": 0, "void": 0, "leave": 0}
    for _ in range(40):
        roll = rng.random()
        every = list(Challenge.objects.filter(scene=t.scene))
        try:
            if roll < 0.5:
                attacker, by, bid = rng.choice(cast)
                defender = rng.choice([c for c in cast if c[0].pk != attacker.pk])[0]
                t.start(attacker=attacker, defender=defender, by=by, category="physical", bid=bid)
                made["start"] += 1
            elif roll < 0.6:
                t.finished()
                made["start"] += 1
            elif roll < 0.8 and every:
                ch = rng.choice([c for c in every if c.status != ChallengeStatus.VOID] or every)
                t.do("st", ch, t.st, action="void", text="a mistake")
                made["void"] += 1
            elif every:
                ch = rng.choice(every)
                user = rng.choice([t.a_user, t.d_user])
                challenge_leave(scene=t.refresh().scene, challenge=ch, by=user)
                made["leave"] += 1
        except ChallengeError:
            pass  # busy as attacker, still open, nothing left to bid: nothing written
        _check(t)
    assert made["start"] >= 6 and made["void"] >= 3 and made["leave"] >= 1, made


def test_a_mobs_first_attacker_dropping_out_keeps_its_latest(classic):
    """C16: the member who throws for the mob after its first attacker dropped out becomes
    the challenge's attacker; the one who started it still started it last. Its form's key
    does not go back to the one it started this challenge with (claimed: a start from it
    would be answered as a replay), as the earlier read of the challenges (by ``attacker``)
    made it go: the one place where the column and that read differ."""
    from tests.combat.challenges.test_mob import brute_led_mob

    t = classic
    brute, ch = brute_led_mob(t)
    marcus = t.a
    t.do("mob_drop", ch, t.st, member=brute)
    assert t.ch(ch).attacker_id == marcus.pk
    with render_cache.RenderCache().active():
        assert start_form.last_started(t.refresh().scene).get(brute.pk) == ch.pk


@pytest.mark.django_db(transaction=True)
def test_migration_0010_fills_each_participants_latest_and_goes_back(classic):
    t = classic
    first = t.finished()
    npc = scenes.scene_add_npc(
        scene=t.refresh().scene, by=t.st, name="Ghoul", pools={"physical": 9}
    )
    second = t.start(attacker=npc, defender=t.d, by=t.st, category="physical", bid="Physical")
    t.do("st", second, t.st, action="void", text="a mistake")
    third = t.finished()
    expected = {t.a.pk: third.pk, t.d.pk: 0, npc.pk: second.pk}
    assert first.pk < third.pk
    before = [("combat", "0009_log_characters_newest")]
    after = [("combat", "0010_participant_last_started")]
    executor = MigrationExecutor(connection)
    leaf = executor.loader.graph.leaf_nodes("combat")
    try:
        executor.migrate(before)
        columns = [c.name for c in connection.introspection.get_table_description(
            connection.cursor(), "combat_participant"
        )]  # fmt: skip
        assert "last_started" not in columns  # backward: the column goes
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        found = dict(Participant.objects.filter(scene=t.scene).values_list("pk", "last_started"))
        assert found == expected
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(leaf)
