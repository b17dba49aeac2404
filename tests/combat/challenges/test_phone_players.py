"""A change of a shared scene reads the phones' list for the players whose own parts it
renders, not for everyone present (issue 21, cheap taps): a pair's throw in a scene of many
players lists and reads whole the open challenges, the public part's last few and that pair's
own finished ones; another player's own finished ones are read when their phone is rendered.

The cast (conftest.py): Marcus's player (attacker) and Sophia's (defender), a third player who
joins with a character of their own, and two NPCs of the storyteller's.
"""

from __future__ import annotations

import pytest

from combat import fragments, live, render_cache
from combat import services as scenes
from combat.challenges import reads, selectors
from tests.combat.challenges.conftest import WRITES
from tests.combat.challenges.test_phone_rows import _copies, _finish, _forget_rows, _npcs
from tests.factories import CharacterFactory, UserFactory

pytestmark = pytest.mark.django_db


def _third(t):
    """A third player in the scene, with a character of their own."""
    user = UserFactory(username="third")
    character = CharacterFactory(chronicle=t.scene.chronicle, name="Third", player=user)
    part = scenes.scene_join(code=t.refresh().scene.join_code, user=user, character=character)
    return user, part


def _read() -> set[int]:
    from combat.challenges import finished

    return {pk for pk, _step in finished.rows.held()}


@pytest.fixture
def crowded(monkeypatch):
    """The scenes here count as crowded (more present players than ``reads.FEW``)."""
    monkeypatch.setattr(reads, "FEW", 2)


def test_a_pairs_change_reads_none_of_another_players_own_challenges(classic, crowded):
    t = classic
    mine = _finish(t)
    user, third = _third(t)
    ghoul, thrall = _npcs(t)
    theirs = _copies(mine, 4, attacker=third, defender=ghoul)  # on the third player's phone
    history = _copies(mine, 6, attacker=ghoul, defender=thrall)  # pushes theirs out of RECENT
    _forget_rows()
    parts = fragments.scene_change_parts(
        t.refresh().scene.pk, private_user_ids=[t.a_user.pk, t.d_user.pk], board=False
    )
    html = "".join(html for _audience, _user, html in parts)
    assert _read() == {mine.pk, *history[-selectors.RECENT :]}
    assert f'id="challenge-{mine.pk}-attacker"' in html
    assert f'id="challenge-{mine.pk}-defender"' in html
    # the third player's own change reads theirs, and their phone keeps them
    _forget_rows()
    parts = fragments.scene_change_parts(
        t.refresh().scene.pk, private_user_ids=[user.pk], board=False
    )
    html = "".join(html for _audience, _user, html in parts)
    assert set(theirs) <= _read()
    assert all(f'id="challenge-{pk}-attacker"' in html for pk in theirs)
    assert f'id="challenge-{mine.pk}-' not in html


def test_one_statement_lists_a_change_for_its_players_and_the_public_part(
    classic, crowded, monkeypatch
):
    """The public part takes the list made for the change's players (a superset of its own):
    the own parts are rendered first."""
    t = classic
    mine = _finish(t)
    _third(t)
    scene = t.refresh().scene
    calls = _listings(monkeypatch)
    parts = fragments.scene_change_parts(
        scene.pk, private_user_ids=[t.a_user.pk, t.d_user.pk], board=False
    )
    html = "".join(html for _audience, _user, html in parts)
    assert calls == [frozenset({t.a_user.pk, t.d_user.pk})]
    assert f'id="challenge-{mine.pk}-attacker"' in html


def _listings(monkeypatch) -> list:
    """The players each listing of the phones' list is read for, as they are read."""
    calls = []
    real = reads._phone_listed_for

    def listed(scene, players):
        calls.append(players)
        return real(scene, players)

    monkeypatch.setattr(reads, "_phone_listed_for", listed)
    return calls


def test_a_few_players_scene_lists_once_for_a_sheets_push_and_the_change(classic, monkeypatch):
    """A scene of few players lists them all: the loser's sheet push (their whole part)
    and the change's parts for both sides that follow in the same commit share the list."""
    t = classic
    _finish(t)
    scene = t.refresh().scene
    calls = _listings(monkeypatch)

    @render_cache.one_request  # a step's pushes share their reads
    def pushes() -> None:
        fragments.private_state(fragments.load(scene.pk), t.d_user)  # the sheet's push
        ids = [t.a_user.pk, t.d_user.pk]
        list(fragments.scene_change_parts(scene.pk, private_user_ids=ids, board=False))

    pushes()
    assert calls == [None]


@pytest.mark.parametrize("who", ["none", "attacker", "defender", "pair", "third"])
def test_the_rows_for_some_players_hold_what_the_rows_for_all_give_them(classic, who, crowded):
    """For a set of players, the rows hold the same open ones, the same public lines and, for
    each of them, the same own cards as the rows read for every present player."""
    t = classic
    mine = _finish(t)
    user, third = _third(t)
    ghoul, thrall = _npcs(t)
    _copies(mine, selectors.KEPT + 2)
    _copies(mine, 3, attacker=third, defender=t.a)
    _copies(mine, 5, attacker=ghoul, defender=thrall)
    t.start(category="physical", bid="Strong")
    users = {
        "none": [],
        "attacker": [t.a_user],
        "defender": [t.d_user],
        "pair": [t.a_user, t.d_user],
        "third": [user],
    }[who]
    players = frozenset(u.pk for u in users)
    scene = t.refresh().scene
    with render_cache.RenderCache().active():
        every = {c.pk for c in reads.phone_rows(scene)}
        public = [c.pk for c in selectors._challenges(scene)]
        cards = {u.pk: selectors.player_cards(scene, u)["cards"] for u in users}
        cards = {pk: [(c["ch"].pk, c["viewer"]) for c in found] for pk, found in cards.items()}
    with render_cache.RenderCache().active():
        # as a change of these players' parts notes them (fragments.scene_change_parts)
        render_cache.cached(("private_users", scene.pk), lambda: tuple(sorted(players)))
        some = {c.pk for c in reads.phone_rows(scene, players)}
        assert some <= every
        assert [c.pk for c in selectors._challenges(scene)] == public
        for u in users:
            index = selectors._phone_index(scene, players)
            assert index is selectors._phone_index(scene, players)
            found = selectors._player_cards(scene, u)["cards"]
            assert [(c["ch"].pk, c["viewer"]) for c in found] == cards[u.pk]
    if who == "none":
        assert len(some) == 1 + selectors.RECENT  # the open one and the public part's


def test_a_changes_other_side_gets_its_part_before_the_actor(
    classic, monkeypatch, django_capture_on_commit_callbacks
):
    """The player who tapped gets their part in the answer: the other side's own part is
    rendered and sent first, whoever's id is lower."""
    t = classic
    assert t.a_user.pk < t.d_user.pk  # sorted by id, the attacker's would come first
    ch = t.start(category="physical", bid="Strong")
    t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    sent = []
    monkeypatch.setattr(live, "_send", lambda group, html, *a, **kw: sent.append(group))
    with django_capture_on_commit_callbacks(execute=True):
        WRITES["challenge_throw"](
            scene=t.refresh().scene, challenge=t.ch(ch), by=t.a_user, side="attacker", throw="rock"
        )
    scene = t.scene.pk
    own = [g for g in sent if g in (live.player_group(scene, u.pk) for u in (t.a_user, t.d_user))]
    assert own == [live.player_group(scene, t.d_user.pk), live.player_group(scene, t.a_user.pk)]
    assert sent.index(own[-1]) < sent.index(live.players_group(scene))  # then the public part
