"""Login cards: one scan logs a player in for one game night and joins their scene.

The cast: the storyteller (runs the chronicle), Janet's player (has a card), Cody's player (a
second player of the chronicle), an anonymous phone.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from characters import cards
from characters import services as night_services
from characters.models import LoginCard
from combat.models import Participant
from tests.conftest import client_for
from tests.factories import CharacterFactory, SceneFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def night(chronicle):
    return chronicle.game_nights.get(closed_at__isnull=True)


@pytest.fixture
def cody(chronicle, other_player):
    return CharacterFactory(chronicle=chronicle, name="Cody", player=other_player)


def _print_cards(storyteller, chronicle, **post) -> tuple:
    response = client_for(storyteller).post(f"/chronicles/{chronicle.pk}/cards/print/", post)
    assert response.status_code == 200
    codes = re.findall(r'class="code">([A-Z0-9]{5}-[A-Z0-9]{5})<', response.content.decode())
    return response, codes


def _card_login(code: str, phone: Client | None = None):
    phone = phone or Client()
    return phone, phone.post("/card/", {"code": code})


def test_it_prints_one_card_per_player_with_a_qr_and_a_code(
    storyteller, chronicle, character, cody
) -> None:
    response, codes = _print_cards(storyteller, chronicle)
    assert len(codes) == 2
    page = response.content.decode()
    assert page.count("<svg") == 2
    assert "Janet" in page and "Cody" in page
    assert "no-store" in response["Cache-Control"]
    for code in codes:
        raw = code.replace("-", "")
        assert len(raw) == cards.CODE_LENGTH and set(raw) <= set(cards.ALPHABET)
        # the QR's address carries the code after "#", which no browser sends to the server
        assert f"/card/#{raw}" in page


def test_it_keeps_only_a_hash_of_the_code(storyteller, chronicle, character) -> None:
    _response, [code] = _print_cards(storyteller, chronicle)
    card = LoginCard.objects.get()
    raw = code.replace("-", "")
    assert raw not in str(card.__dict__)
    assert card.code_hash != raw and len(card.code_hash) == 64


def test_it_logs_the_player_in_and_joins_the_open_scene_of_the_night(
    storyteller, chronicle, character, player
) -> None:
    scene = SceneFactory(chronicle=chronicle, storyteller=storyteller)
    _response, [code] = _print_cards(storyteller, chronicle)
    phone, response = _card_login(code.lower().replace("-", " "))  # typed sloppily
    assert response.status_code == 302
    assert response["Location"] == f"/scenes/{scene.pk}/phone/"
    assert Participant.objects.filter(scene=scene, character=character).exists()
    assert phone.get(response["Location"]).status_code == 200
    card = LoginCard.objects.get()
    assert card.last_used_at is not None and card.session_keys == [phone.session.session_key]


def test_it_sends_the_player_to_the_join_page_when_there_are_several_scenes(
    storyteller, chronicle, character
) -> None:
    SceneFactory(chronicle=chronicle, storyteller=storyteller)
    SceneFactory(chronicle=chronicle, storyteller=storyteller)
    _response, [code] = _print_cards(storyteller, chronicle)
    _phone, response = _card_login(code)
    assert response["Location"] == "/join/"
    assert not Participant.objects.exists()


def test_it_refuses_a_wrong_code_with_a_plain_sentence(storyteller, chronicle, character) -> None:
    _print_cards(storyteller, chronicle)
    phone, response = _card_login("ABCDE-FGHJK")
    assert response.status_code == 400
    assert cards.WRONG_CODE.encode() in response.content
    assert "_auth_user_id" not in phone.session


def test_a_revoked_card_is_worth_nothing_and_its_phone_is_logged_out(
    storyteller, chronicle, character, django_capture_on_commit_callbacks
) -> None:
    _response, [code] = _print_cards(storyteller, chronicle)
    phone, response = _card_login(code)
    assert response.status_code == 302
    card = LoginCard.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        revoked = client_for(storyteller).post(
            f"/chronicles/{chronicle.pk}/cards/{card.pk}/revoke/"
        )
    assert revoked.status_code == 302
    assert phone.get("/").status_code == 302, "the session the card opened is gone"
    _again, response = _card_login(code)
    assert response.status_code == 400
    assert cards.WRONG_CODE.encode() in response.content


def test_a_card_is_worth_nothing_once_the_next_night_opens(
    storyteller, chronicle, character, django_capture_on_commit_callbacks
) -> None:
    _response, [code] = _print_cards(storyteller, chronicle)
    phone, _ = _card_login(code)
    with django_capture_on_commit_callbacks(execute=True):
        night_services.game_night_open(chronicle=chronicle, by=storyteller)
    assert phone.get("/").status_code == 302, "the session ended with its night"
    _again, response = _card_login(code)
    assert response.status_code == 400


def test_a_new_card_voids_the_players_older_one(storyteller, chronicle, character) -> None:
    _response, [first] = _print_cards(storyteller, chronicle)
    _response, [second] = _print_cards(storyteller, chronicle, player=str(character.player_id))
    assert _card_login(first)[1].status_code == 400
    assert _card_login(second)[1].status_code == 302


def test_a_password_still_logs_the_player_in(storyteller, chronicle, character, player) -> None:
    player.set_password("janet-password-1")
    player.save()
    _print_cards(storyteller, chronicle)
    response = Client().post(
        "/accounts/login/", {"username": player.username, "password": "janet-password-1"}
    )
    assert response.status_code == 302


def test_only_the_chronicles_storyteller_sees_or_makes_cards(
    chronicle, character, player, other_player, visitor
) -> None:
    for who in (client_for(player), client_for(other_player)):
        assert who.get(f"/chronicles/{chronicle.pk}/cards/").status_code == 404
        assert who.post(f"/chronicles/{chronicle.pk}/cards/print/").status_code == 404
    assert visitor.get(f"/chronicles/{chronicle.pk}/cards/").status_code == 302
    assert not LoginCard.objects.exists()


def test_the_cards_page_lists_each_players_card_with_a_revoke_button(
    storyteller, chronicle, character, cody
) -> None:
    _print_cards(storyteller, chronicle, player=str(character.player_id))
    response = client_for(storyteller).get(f"/chronicles/{chronicle.pk}/cards/")
    page = response.content.decode()
    assert page.count("Revoke") == 1 and "no card tonight" in page
    assert (
        "Login cards for night"
        in client_for(storyteller).get(f"/chronicles/{chronicle.pk}/").content.decode()
    )


def test_no_card_without_an_open_night(storyteller, chronicle, character) -> None:
    chronicle.game_nights.update(closed_at="2026-01-01T00:00Z")
    response = client_for(storyteller).post(f"/chronicles/{chronicle.pk}/cards/print/", follow=True)
    assert cards.NO_OPEN_NIGHT.encode() in response.content
    assert not LoginCard.objects.exists()


def test_a_staff_account_gets_no_card_and_a_card_never_opens_one(
    storyteller, chronicle, character, player
) -> None:
    CharacterFactory(chronicle=chronicle, name="Prince", player=storyteller)
    _response, codes = _print_cards(storyteller, chronicle)
    assert len(codes) == 1, "Janet's player only, not the storyteller who plays the Prince"
    player.is_staff = True  # made staff after the card was printed
    player.save()
    assert _card_login(codes[0])[1].status_code == 400


def test_wrong_codes_from_one_address_are_throttled_while_a_right_one_elsewhere_is_not(
    storyteller, chronicle, character, monkeypatch
) -> None:
    from types import SimpleNamespace

    from config import throttle

    # The 31 guesses within one instant, however slowly a loaded machine answers them (the
    # bucket refills a token a second: 31 answers in over a second would let the last through).
    monkeypatch.setattr(throttle, "time", SimpleNamespace(time=lambda: 1_800_000_000.0))
    _, codes = _print_cards(storyteller, chronicle)
    guesser = Client(REMOTE_ADDR="10.9.9.9")
    answers = [guesser.post("/card/", {"code": "ABCDE-FGHJK"}).status_code for _ in range(31)]
    assert answers[:30] == [400] * 30
    assert answers[30] == 429
    phone = Client(REMOTE_ADDR="10.9.9.10")
    assert phone.post("/card/", {"code": codes[0]}).status_code == 302
