"""A player's own finished challenge stays on its phone until the player puts it away, however
many other challenges finish in the scene meanwhile."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.urls import reverse

from characters.demo import CAST, _write_sheet
from combat import live
from combat import services as scenes
from combat.challenges import selectors
from combat.challenges.leaving import STILL_OPEN
from combat.challenges.reads import sides_for
from config.asgi import application
from tests.conftest import client_for
from tests.factories import CharacterFactory, UserFactory


def _pair(t, i: int):
    """Two more players in the table's scene (Marcus's and Sophia's sheets)."""
    joined = []
    for name in ("Marcus", "Sophia"):
        user = UserFactory(username=f"{name.lower()}_more_{i}")
        character = CharacterFactory(chronicle=t.scene.chronicle, name=f"{name} {i}", player=user)
        _write_sheet(character, "met_classic", CAST[name][1])
        joined.append(
            (user, scenes.scene_join(code=t.scene.join_code, user=user, character=character))
        )
    return joined


def _finish(t, attacker, defender) -> int:
    (a_user, a), (d_user, d) = attacker, defender
    ch = t.start(attacker=a, defender=d, by=a_user, category="physical", bid="Strong")
    t.do("answer", ch, d_user, side="defender", answer="bid", bid="Tough")
    t.do("throw", ch, a_user, side="attacker", throw="rock")
    t.do("throw", ch, d_user, side="defender", throw="scissors")
    done = t.do("accept", ch, d_user, side="defender")
    assert done.status == "over"
    return done.pk


def _leave(t, user, pk: int):
    url = reverse("challenge_leave", args=[t.scene.pk, pk])
    return client_for(user).post(url, {"key": f"leave-{pk}"}, HTTP_HX_REQUEST="true")


def test_it_keeps_a_players_finished_card_however_many_others_finish(classic):
    t = classic
    mine = _finish(t, (t.a_user, t.a), (t.d_user, t.d))
    others = [_pair(t, i) for i in range(2)]
    for pair in others * 2:  # four more finish in the scene: more than the board keeps
        _finish(t, *pair)
    assert f'id="challenge-{mine}-attacker"' in t.phone(t.a_user)
    assert f'id="challenge-{mine}-defender"' in t.phone(t.d_user)
    assert f'id="challenge-{mine}' in t.board()  # the board keeps every one of the night
    assert f"challenge-{mine}" not in t.phone(others[0][0][0])  # nobody else's phone


def test_it_puts_a_finished_card_away_when_its_player_leaves_it(classic):
    t = classic
    mine = _finish(t, (t.a_user, t.a), (t.d_user, t.d))
    assert _leave(t, t.a_user, mine).status_code == 200
    assert _leave(t, t.a_user, mine).status_code == 200  # twice: the same
    assert f'id="challenge-{mine}-attacker"' not in t.phone(t.a_user)
    assert f'id="challenge-{mine}-defender"' in t.phone(t.d_user)  # Sophia's until she leaves it
    before = t.refresh().scene
    players_seq, seq = before.players_seq, before.seq
    _leave(t, t.d_user, mine)
    after = t.refresh().scene
    assert after.players_seq == players_seq  # no other phone sees it or can count it
    assert after.seq == seq + 1  # the hubs do: Sophia's own part changed at it
    players = after.participants.filter(character__player__isnull=False)
    own = {p.character.player_id: p.own_seq for p in players.select_related("character")}
    assert own[t.d_user.pk] == after.seq and own[t.a_user.pk] < after.seq
    assert selectors.player_cards(t.scene, t.d_user)["cards"] == []


def test_it_refuses_to_put_away_a_challenge_still_open(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    answer = _leave(t, t.a_user, ch.pk)
    assert answer.status_code == 409 and STILL_OPEN in answer.content.decode()
    assert f'id="challenge-{ch.pk}-attacker"' in t.phone(t.a_user)
    assert sides_for(t.ch(ch), t.a_user) == ["attacker"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("stop_the_hub")
async def test_a_lost_push_of_a_card_put_away_is_caught_up_by_itself(classic, monkeypatch):
    """Putting a card away pushes that player's own part alone; lost, the hub sees the phone
    behind (``Participant.own_seq``) and sends it the whole state: the card goes."""
    t = classic
    mine = await sync_to_async(_finish)(t, (t.a_user, t.a), (t.d_user, t.d))
    client = await sync_to_async(client_for)(t.a_user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    headers = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
    phone = WebsocketCommunicator(
        application, f"/ws/scenes/{t.scene.pk}/", headers=[*headers, (b"cookie", cookie)]
    )
    assert (await phone.connect(timeout=5))[0]
    card = f'id="challenge-{mine}-attacker"'
    assert card in await phone.receive_from(timeout=5)
    kept = live._send
    with monkeypatch.context() as lost:
        lost.setattr(live, "_send", lambda g, html: None if ".user." in g else kept(g, html))
        assert (await sync_to_async(_leave)(t, t.a_user, mine)).status_code == 200
    while 'id="scene-private"' not in (state := await phone.receive_from(timeout=5)):
        pass  # the storytellers' part or nothing: no other phone hears of it
    assert card not in state
    await phone.disconnect()


def test_a_phones_cards_and_the_public_lines_never_compare_the_nights_rows_pairwise(
    classic, monkeypatch
):
    """Issue 21: which of a scene's challenges are finished is found by pk. Comparing each
    row with each open one (a model's ``==``) cost a shared scene's night of rows times its
    open challenges on every change, for each player's part and the public one."""
    from combat.models import Challenge

    t = classic
    others = [_pair(t, i) for i in range(2)]
    mine = _finish(t, (t.a_user, t.a), (t.d_user, t.d))
    _finish(t, *others[0])
    t.start(attacker=others[1][0][1], defender=others[1][1][1], by=others[1][0][0],
            category="physical", bid="Strong")  # fmt: skip
    open_one = t.start(category="physical", bid="Strong")
    compared = []
    monkeypatch.setattr(Challenge, "__eq__", lambda a, b: compared.append(1) or a is b)
    scene = t.refresh().scene
    cards = selectors.player_cards(scene, t.a_user)["cards"]
    lines = selectors.public_lines(scene)
    assert compared == []
    assert [c["ch"].pk for c in cards] == [open_one.pk, mine]  # the open one, then hers
    assert len(lines) == 4
