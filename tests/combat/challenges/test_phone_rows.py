"""What a change's phone parts read of a scene's challenges does not grow with the scene's
history (issue 21, cheap taps): the open ones, the public part's last few, and each player's
own finished ones still on its phone, read whole; every other finished challenge of the night
(the storyteller's board keeps them) only listed. A player's own finished card stays on its
phone until the player leaves it, however many others finish.

The cast (conftest.py): Marcus's player (attacker) and Sophia's (defender); two NPCs of the
storyteller's play the scene's history.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat import fragments
from combat import services as scenes
from combat.challenges import board_reads, finished, reads, selectors
from combat.models import Challenge
from tests.combat.challenges.conftest import note_started
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _finish(t) -> Challenge:
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    t.throw(ch, "rock", "scissors")
    done = t.do("accept", ch, t.d_user, side="defender")
    assert done.status == "over"
    return done


def _copies(of: Challenge, count: int, attacker=None, defender=None) -> list[int]:
    """``count`` finished challenges like ``of`` (its sides, or those given), newest last."""
    rows = []
    for _ in range(count):
        row = Challenge.objects.get(pk=of.pk)
        row.pk = None
        row.attacker = attacker or row.attacker
        row.defender = defender or row.defender
        rows.append(row)
    Challenge.objects.bulk_create(rows)
    board_reads.recount(of.scene_id)  # written outside the steps, which count
    note_started(of.scene_id)  # as the starts would have (Participant.last_started)
    return list(
        Challenge.objects.filter(scene=of.scene_id).order_by("-pk").values_list("pk", flat=True)
    )[:count][::-1]


def _npcs(t) -> tuple:
    return tuple(
        scenes.scene_add_npc(scene=t.refresh().scene, by=t.st, name=n, pools={"physical": 6})
        for n in ("Ghoul", "Thrall")
    )


def _forget_rows() -> None:
    finished.rows.clear()
    finished.cards.clear()


def _phone_parts(t) -> str:
    """A change's parts for the pair's phones (no board: no tablet is open)."""
    parts = fragments.scene_change_parts(
        t.refresh().scene.pk, private_user_ids=[t.a_user.pk, t.d_user.pk], board=False
    )
    return "".join(html for _audience, _user, html in parts)


def test_a_phone_change_reads_whole_none_of_the_history_it_does_not_show(classic):
    t = classic
    mine = _finish(t)
    ghoul, thrall = _npcs(t)
    history = _copies(mine, 40, attacker=ghoul, defender=thrall)
    _forget_rows()
    html = _phone_parts(t)
    read = {pk for pk, _step in finished.rows.held()}
    # the pair's own card and the public part's last few (all of them the NPCs')
    assert read == {mine.pk, *history[-selectors.RECENT :]}
    assert f'id="challenge-{mine.pk}-attacker"' in html
    assert f'id="challenge-{mine.pk}-defender"' in html
    # the board keeps the newest (board_reads.SHOWN), every other one of the night behind its
    # fold, which the storyteller opens (challenge_earlier)
    _forget_rows()
    board = fragments.board_regions(t.refresh().scene, ("challenges",))
    shown = history[-board_reads.SHOWN :]
    assert all(f'id="challenge-{pk}' in board for pk in shown)
    assert f"Earlier challenges ({len(history) + 1 - len(shown)})" in board
    url = reverse("challenge_earlier", args=[t.scene.pk])
    fold = client_for(t.st).get(url, {"through": mine.pk}).content.decode()
    earlier = (mine.pk, *history[: -board_reads.SHOWN])
    assert all(f'id="challenge-{pk}' in fold for pk in earlier)


def test_a_players_kept_cards_are_the_newest_they_have_not_left(classic):
    """KEPT at most, newest first, skipping those the player left (each player's own): the
    rows a phone reads hold them however many finish since."""
    t = classic
    first = _finish(t)
    own = [first.pk, *_copies(first, selectors.KEPT + 3)]
    left = own[-3:]  # Marcus's player left the three newest; Sophia's none
    for pk in left:
        ch = Challenge.objects.get(pk=pk)
        ch.options = {**ch.options, "left": [t.a_user.pk]}
        ch.save(update_fields=["options"])
    ghoul, thrall = _npcs(t)
    _copies(first, 30, attacker=ghoul, defender=thrall)
    _forget_rows()
    scene = t.refresh().scene
    for user, side, shown in (
        (t.a_user, "attacker", [pk for pk in own if pk not in left][-selectors.KEPT :]),
        (t.d_user, "defender", own[-selectors.KEPT :]),
    ):
        cards = selectors.player_cards(scene, user)["cards"]
        assert sorted(c["ch"].pk for c in cards) == sorted(shown)
        phone = t.phone(user)
        assert all(f'id="challenge-{pk}-{side}"' in phone for pk in shown)
        assert not any(f'id="challenge-{pk}-{side}"' in phone for pk in set(own) - set(shown))


def test_the_phone_rows_hold_the_open_ones_and_a_choice_waiting(classic):
    """An open challenge and a finished one waiting on a loser's choice (W8) are read however
    old they are."""
    t = classic
    done = _finish(t)
    waiting = _copies(done, 1)[0]
    Challenge.objects.filter(pk=waiting).update(options={**done.options, "choose": ["defender"]})
    ghoul, thrall = _npcs(t)
    _copies(done, 2 * selectors.KEPT, attacker=ghoul, defender=thrall)
    open_one = t.start(category="physical", bid="Strong")
    _copies(done, 2 * selectors.KEPT, attacker=ghoul, defender=thrall)
    _forget_rows()
    rows = {ch.pk for ch in reads.phone_rows(t.refresh().scene)}
    assert {waiting, open_one.pk} <= rows
    assert len(rows) <= 2 + selectors.RECENT + 2 * selectors.KEPT


def test_a_hidden_npcs_finished_challenge_pushes_no_public_line_out(classic):
    """The public part's last finished lines are the last ones players may see: a hidden
    NPC's challenge finishing leaves them as they were (no line gone, nothing to count)."""
    t = classic
    done = _finish(t)
    visible = [done.pk, *_copies(done, selectors.RECENT)]
    before = [line["ch"].pk for line in selectors.public_lines(t.refresh().scene)]
    assert before == visible[::-1][: selectors.RECENT]
    t.lost_to_a_hidden_npc()
    _forget_rows()
    assert [line["ch"].pk for line in selectors.public_lines(t.refresh().scene)] == before
    shown = fragments.players_state(t.scene).split('id="challenge-public"')[1]
    assert shown.split("</ul>")[0].count("<li>") == selectors.RECENT


def _picked(scene, listing) -> set[int]:
    return reads._phone_pks(scene, listing, selectors.RECENT, selectors.KEPT)


def _whole_listing(scene) -> list[tuple]:
    """Every challenge of the scene listed (the board's list), as the phones' picks were made
    from before they were bounded."""
    return reads._lists.run(scene.pk, phones=False)


def test_a_players_own_card_500_challenges_back_stays_on_its_phone(classic):
    """Issue 21: a player's own finished card stays until the player leaves it, however many
    others finish: 500 challenges of two NPCs since, its phone still shows it (and its start
    form's key still names the player's latest challenge); left, it goes."""
    t = classic
    mine = _finish(t)
    ghoul, thrall = _npcs(t)
    history = _copies(mine, 500, attacker=ghoul, defender=thrall)
    _forget_rows()
    scene = t.refresh().scene
    cards = selectors.player_cards(scene, t.a_user)
    assert [c["ch"].pk for c in cards["cards"]] == [mine.pk]
    assert cards["starts"][0]["key"] == f"start-{scene.pk}-{t.a.pk}-{mine.pk}"
    assert f'id="challenge-{mine.pk}-defender"' in t.phone(t.d_user)
    public = [line["ch"].pk for line in selectors.public_lines(scene)]
    assert public == history[::-1][: selectors.RECENT]
    # what the phones' parts read whole: their own card and the public part's, no more
    read = {pk for pk, _step in finished.rows.held()}
    assert read <= {mine.pk, *history[-selectors.RECENT :]}
    _leave(mine, t.a_user)
    _forget_rows()
    assert selectors.player_cards(t.refresh().scene, t.a_user)["cards"] == []
    assert f'id="challenge-{mine.pk}-defender"' in t.phone(t.d_user)  # Sophia's player's stays


def _leave(ch: Challenge, user) -> None:
    from combat.challenges.leaving import challenge_leave

    challenge_leave(scene=ch.scene, challenge=ch, by=user)


def test_the_phones_picks_from_the_bounded_list_are_those_from_the_whole_list(classic):
    """Every kind a phone keeps, at a long history: the picks from the rows the phones list
    (reads._phone_listing: bounded by what phones show) equal the picks from every challenge
    of the scene, and the list stays of the order open + RECENT + participants x KEPT."""
    t = classic
    first = _finish(t)
    ghoul, thrall = _npcs(t)
    lurker = scenes.scene_add_npc(
        scene=t.refresh().scene, by=t.st, name="Lurker", pools={"physical": 6}, hidden=True
    )
    own = _copies(first, 3 * selectors.KEPT)  # the pair's, the oldest of the night
    for pk in own[-4:]:  # Marcus's player left the four newest of them
        ch = Challenge.objects.get(pk=pk)
        ch.options = {**ch.options, "left": [t.a_user.pk]}
        ch.save(update_fields=["options"])
    choice = _copies(first, 1)[0]
    Challenge.objects.filter(pk=choice).update(options={**first.options, "choose": ["defender"]})
    _copies(first, 300, attacker=ghoul, defender=thrall)
    hidden = _copies(first, 2 * selectors.RECENT, attacker=lurker, defender=t.a)
    open_one = t.start(category="physical", bid="Strong")
    _copies(first, selectors.RECENT + 1, attacker=lurker, defender=thrall)  # all hidden, newest
    from combat import render_cache

    with render_cache.RenderCache().active():
        scene = t.refresh().scene
        listing = reads._phone_listing(scene)
        whole = _whole_listing(scene)
        picked = _picked(scene, listing)
        assert picked == _picked(scene, whole)
        assert {choice, open_one.pk, *hidden[-selectors.KEPT :]} <= picked
        assert len(listing) <= 2 + selectors.RECENT + 2 * (2 * selectors.KEPT + 1)
        assert len(whole) > 300
        # each present participant's latest as attacker, as the whole list says
        latest = {}
        for pk, _step, _status, _left, attacker, *_ in whole:
            latest[attacker] = max(latest.get(attacker, 0), pk)
        assert reads.phone_last_started(scene) == {p: latest[p] for p in (t.a.pk,)}


def test_a_crowded_scenes_phones_list_holds_every_players_cards(classic):
    """A convention's court scene: 200 players present (the fan-out bench's default scene).
    The phones' bounded list is one arm a side for each present player's participant; SQLite
    refuses a compound SELECT of more than 500 terms, so the list must not be one statement
    of them all. Its picks still equal those from every challenge of the scene."""
    from characters.models import Character
    from combat.models import Participant
    from tests.factories import UserFactory

    t = classic
    first = _finish(t)
    scene = t.refresh().scene
    users = [UserFactory() for _ in range(200)]
    characters = Character.objects.bulk_create(
        Character(chronicle=scene.chronicle, name=f"Courtier {n}", player=u, creature="vampire")
        for n, u in enumerate(users)
    )
    crowd = Participant.objects.bulk_create(
        Participant(scene=scene, character=c, name=c.name) for c in characters
    )
    _copies(first, 3, attacker=crowd[-1], defender=t.a)
    from combat import live, render_cache

    live._people_changed(scene.pk)
    with render_cache.RenderCache().active():
        scene = t.refresh().scene
        listing = reads._phone_listing(scene)
        assert _picked(scene, listing) == _picked(scene, _whole_listing(scene))
        assert reads.phone_last_started(scene)[crowd[-1].pk] == max(i[0] for i in listing)
    assert f'id="challenge-{first.pk}-attacker"' in t.phone(t.a_user)
