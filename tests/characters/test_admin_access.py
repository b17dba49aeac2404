"""One rule decides who storytells a chronicle: characters.access, asked on every request."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile

from characters import selectors
from characters.access import chronicles_run_by, is_storyteller_of
from characters.models import Character, LedgerEntry
from characters.roles import GROUP
from tests.conftest import client_for
from tests.factories import ChronicleFactory, UserFactory

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "grapevine"


def _out_of_the_group(user) -> None:
    user.groups.remove(Group.objects.get(name=GROUP))


def test_it_keeps_chronicles_run_by_importable_from_selectors() -> None:
    assert selectors.chronicles_run_by is chronicles_run_by


@pytest.mark.parametrize(
    ("change", "runs"),
    [
        ("nothing", True),
        ("out of the group", False),
        ("not staff", False),
        ("inactive", False),
    ],
)
def test_it_decides_who_storytells_a_chronicle(chronicle, storyteller, change, runs) -> None:
    if change == "out of the group":
        _out_of_the_group(storyteller)
    elif change == "not staff":
        storyteller.is_staff = False
        storyteller.save()
    elif change == "inactive":
        storyteller.is_active = False
        storyteller.save()
    assert is_storyteller_of(storyteller, chronicle) is runs
    assert is_storyteller_of(storyteller, chronicle.pk) is runs
    assert chronicles_run_by(storyteller).filter(pk=chronicle.pk).exists() is runs


def test_it_lets_an_active_superuser_storytell_every_chronicle() -> None:
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    chronicle = ChronicleFactory()
    assert is_storyteller_of(root, chronicle)
    root.is_active = False
    root.save()
    assert not is_storyteller_of(root, chronicle)


def test_it_never_lets_a_listed_player_storytell(chronicle, player) -> None:
    chronicle.storytellers.add(player)  # listed, but neither staff nor in the group
    assert not is_storyteller_of(player, chronicle)


def test_it_takes_the_desk_away_when_the_group_is_taken_away(
    character, chronicle, storyteller
) -> None:
    client = client_for(storyteller)
    assert client.get(f"/chronicles/{chronicle.pk}/").status_code == 200
    _out_of_the_group(storyteller)
    assert client.get(f"/chronicles/{chronicle.pk}/").status_code == 404
    response = client.post(
        f"/chronicles/{chronicle.pk}/ledger/",
        {
            "character": character.pk,
            "kind": "trait_lost",
            "subject": "Quick",
            "category": "physical",
            "amount": 1,
            "reason": "after the fact",
            "key": "late-1",
        },
    )
    assert response.status_code == 404
    assert not LedgerEntry.objects.exists()
    assert client.get(f"/characters/{character.pk}/").status_code == 404


def test_it_takes_the_upload_and_the_admin_away_when_the_group_is_taken_away(
    character, chronicle, storyteller
) -> None:
    _out_of_the_group(storyteller)
    client = client_for(storyteller)
    upload = SimpleUploadedFile(
        "five.gex", (DATA / "chronicle_camarilla_five_xml.gex").read_bytes()
    )
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    assert client.post(url, {"file": upload}).status_code == 404
    assert Character.objects.filter(chronicle=chronicle).count() == 1
    listing = client.get("/admin/characters/character/")
    assert "Janet" not in listing.content.decode()
    assert client.post(f"/admin/characters/character/{character.pk}/change/").status_code in (
        302,
        403,
    )


@pytest.mark.parametrize(
    "url",
    [
        "/admin/characters/character/",
        "/admin/characters/gamenight/",
        "/admin/characters/ledgerentry/",
    ],
)
def test_it_names_only_the_storytellers_chronicles_in_list_filters(
    character, storyteller, url
) -> None:
    from tests.factories import CharacterFactory, GameNightFactory

    stranger = CharacterFactory(name="Stranger", chronicle__name="Someone Else's Chronicle")
    GameNightFactory(chronicle=stranger.chronicle, number=1)
    ChronicleFactory(name="My Second Chronicle").storytellers.add(storyteller)
    page = client_for(storyteller).get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "My Second Chronicle" in html  # the filter shows, with the storyteller's own
    assert "Someone Else" not in html


def test_it_offers_only_its_own_players_and_newcomers_as_players(
    character, storyteller, player
) -> None:
    from tests.factories import CharacterFactory

    CharacterFactory(name="Stranger", player__username="their_player")
    UserFactory(username="newcomer")
    client = client_for(storyteller)
    for url in (
        "/admin/characters/character/add/",
        f"/admin/characters/character/{character.pk}/change/",
    ):
        html = client.get(url).content.decode()
        assert "janet_player" in html, url
        assert "newcomer" in html, url
        assert "their_player" not in html, url


def test_it_offers_only_storytellers_as_storytellers(chronicle, storyteller, player) -> None:
    from tests.factories import StorytellerFactory

    StorytellerFactory(username="co_storyteller")
    html = client_for(storyteller).get(f"/admin/characters/chronicle/{chronicle.pk}/change/")
    html = html.content.decode()
    assert "co_storyteller" in html
    assert "janet_player" not in html
