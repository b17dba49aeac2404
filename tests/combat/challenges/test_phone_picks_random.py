"""The phones' bounded list of challenges (reads._phone_listing) against the whole listing it
replaced, on randomized (seeded) histories: every kind a phone keeps or shows mixed at random
(open, a loser's choice waiting, W8; a mob's, C16; voided; left by some players; a hidden
NPC's; NPC against NPC; a static opponent, no defender), with a player playing two characters,
a participant taken out and its character brought back (a new participant), a character given
to another player. The picks (reads._phone_pks), each player's latest challenge as attacker
(their start forms' key) and the blood kept (C5) equal what main's full reads say."""

from __future__ import annotations

import random

import pytest
from django.db.models import Max
from django.utils import timezone

from combat import render_cache
from combat import services as scenes
from combat.challenges import board_reads, reads, selectors, start_form
from combat.models import Challenge, ChallengeStatus, Participant
from tests.combat.challenges.conftest import note_started
from tests.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def _finish(t) -> Challenge:
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    t.throw(ch, "rock", "scissors")
    return t.do("accept", ch, t.d_user, side="defender")


def _cast(t) -> list[Participant]:
    """Marcus and Sophia, a second character of Marcus's player, two NPCs, a hidden one, a
    character taken out and brought back (both participants), one given to Sophia's player."""
    scene = t.refresh().scene
    second = CharacterFactory(chronicle=scene.chronicle, name="Second", player=t.a_user)
    twice = scenes.scene_join(code=scene.join_code, user=t.a_user, character=second)
    npcs = [
        scenes.scene_add_npc(scene=t.refresh().scene, by=t.st, name=n, pools={"physical": 6})
        for n in ("Ghoul", "Thrall")
    ]
    lurker = scenes.scene_add_npc(
        scene=t.refresh().scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    roamer = CharacterFactory(chronicle=scene.chronicle, name="Roamer", player=t.d_user)
    gone = scenes.scene_join(code=scene.join_code, user=t.d_user, character=roamer)
    Participant.objects.filter(pk=gone.pk).update(removed_at=timezone.now())
    back = Participant.objects.create(scene=scene, character=roamer, name="Roamer")
    given = CharacterFactory(chronicle=scene.chronicle, name="Given", player=t.a_user)
    handed = scenes.scene_join(code=scene.join_code, user=t.a_user, character=given)
    return [t.a, t.d, twice, *npcs, lurker, gone, back, handed]


def _history(t, rng: random.Random, model: Challenge, cast: list[Participant], n: int) -> None:
    users = [t.a_user.pk, t.d_user.pk]
    focus = rng.choice(cast)  # most of a stretch is one character's (a side's KEPT filled)
    weight, swap = rng.choice([(0.3, 0.3), (0.95, 0.05), (0.95, 0.95)])
    rows = []
    for _ in range(n):
        row = Challenge.objects.get(pk=model.pk)
        row.pk = None
        row.attacker = focus if rng.random() < weight else rng.choice(cast)
        row.defender = None if rng.random() < 0.1 else rng.choice(cast)
        if rng.random() < swap:
            row.attacker, row.defender = row.defender or row.attacker, row.attacker
        options = {k: v for k, v in row.options.items() if k not in ("left", "blood_traits")}
        roll = rng.random()
        row.status = ChallengeStatus.OVER
        if roll < 0.03:
            row.status = rng.choice([ChallengeStatus.ANSWER, ChallengeStatus.LIVE])
        elif roll < 0.06:
            options["choose"] = ["defender"]
        elif roll < 0.08:
            options["mob"] = {str(rng.choice(cast).pk): ""}
        elif roll < 0.09:
            options["mob_dropped"] = [rng.choice(cast).pk]
        elif roll < 0.2:
            row.status = ChallengeStatus.VOID
        if rng.random() < 0.3:
            options["left"] = rng.sample(users, rng.randint(1, 2))
        if rng.random() < 0.3:
            sides = [p for p in (row.attacker, row.defender) if p is not None]
            options["blood_traits"] = {str(p.pk): rng.randint(1, 3) for p in sides}
            options["blood_until"] = rng.randint(0, 600)
        row.options = options
        rows.append(row)
    Challenge.objects.bulk_create(rows)
    board_reads.recount(t.scene.pk)  # written outside the steps, which count
    note_started(t.scene.pk)  # as the starts would have (Participant.last_started)


def _old_blood(challenge: Challenge, participants: list[Participant]) -> dict[int, int]:
    """main's blood_kept_of: the scene's finished challenges that kept blood, any sides."""
    wanted = [p.pk for p in participants if p is not None and p.character_id is not None]
    if challenge.category != "physical" or not wanted:
        return {}
    scene = challenge.scene
    found = Challenge.objects.filter(
        scene_id=scene.pk, status=ChallengeStatus.OVER, options__has_key="blood_traits"
    )
    out: dict[int, int] = {}
    for (options,) in found.exclude(pk=challenge.pk or 0).order_by("-pk").values_list("options"):
        for pk in wanted:
            held = options.get("blood_traits", {}).get(str(pk))
            if held is not None and pk not in out:
                out[pk] = held if options.get("blood_until", -1) >= scene.game_time else 0
    return out


def _player_sets(t) -> list[frozenset[int]]:
    a, d = t.a_user.pk, t.d_user.pk
    return [frozenset(), frozenset({a}), frozenset({d}), frozenset({a, d})]


@pytest.mark.parametrize("seed", range(8))
def test_the_bounded_picks_equal_the_whole_listings_on_a_random_history(classic, seed, monkeypatch):
    t = classic
    if seed % 2:  # a crowded scene's list, a statement for each few participants, merged
        monkeypatch.setattr(reads, "PARTS", 2)
    rng = random.Random(seed)
    model = _finish(t)
    cast = _cast(t)
    given = cast[-1]
    for chunk in range(6):
        _history(t, rng, model, cast, 40)
        if chunk == 1:  # the character changes player halfway through the night
            given.character.player = t.d_user
            given.character.save(update_fields=["player"])
        with render_cache.RenderCache().active():
            scene = t.refresh().scene
            listing = reads._phone_listing(scene)
            whole = reads._lists.run(scene.pk, phones=False)
            args = (selectors.RECENT, selectors.KEPT)
            assert reads._phone_pks(scene, listing, *args) == reads._phone_pks(scene, whole, *args)
        for players in _player_sets(t):  # a change's players' own list (a shared scene's)
            with render_cache.RenderCache().active():
                scene = t.refresh().scene
                listing = reads._phone_listing(scene, players)
                picked = reads._phone_pks(scene, listing, *args, players)
                assert picked == reads._phone_pks(scene, whole, *args, players)
                assert picked <= reads._phone_pks(scene, whole, *args)
        with render_cache.RenderCache().active():
            scene = t.refresh().scene
            played = reads._played(scene)
            latest: dict[int, int] = {}
            for pk, _step, _status, _left, attacker, *_ in whole:
                latest[attacker] = max(latest.get(attacker, 0), pk)
            expected = {p: latest[p] for p in played if p in latest}
            assert reads.phone_last_started(scene) == expected
        with render_cache.RenderCache().active():
            scene = t.refresh().scene
            rows = Challenge.objects.filter(scene=scene).values("attacker").annotate(last=Max("pk"))
            present = set(
                Participant.objects.filter(scene=scene, removed_at__isnull=True).values_list(
                    "pk", flat=True
                )
            )
            expected = {r["attacker"]: r["last"] for r in rows if r["attacker"] in present}
            assert start_form.last_started(scene) == expected  # the present ones' forms
        scene = t.refresh().scene
        scene.game_time = rng.randint(0, 600)
        every = list(Challenge.objects.filter(scene=scene).order_by("pk"))
        for ch in rng.sample(every, 15):
            ch.scene = scene
            sides = rng.sample(cast, 3)
            assert reads.blood_kept_of(ch, sides) == _old_blood(ch, sides)
