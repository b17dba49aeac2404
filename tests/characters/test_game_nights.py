"""Opening a game night: a double tap, ten parallel posts or the admin action open one."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from characters import services
from characters.models import GameNight
from tests.conftest import client_for
from tests.factories import ChronicleFactory, StorytellerFactory


@pytest.fixture
def dark(db, storyteller):
    """A chronicle with no game night open yet."""
    chronicle = ChronicleFactory(name="Dark Chronicle")
    chronicle.storytellers.add(storyteller)
    return chronicle


@pytest.mark.django_db
def test_it_opens_the_first_night_once_when_the_caller_saw_none(dark) -> None:
    services.game_night_open(chronicle=dark, by=None, expected_number=0)
    with pytest.raises(services.LedgerError, match="opened meanwhile"):
        services.game_night_open(chronicle=dark, by=None, expected_number=0)
    assert GameNight.objects.filter(chronicle=dark).count() == 1


@pytest.mark.django_db
def test_it_opens_one_night_for_a_double_tap_on_the_chronicle_page(dark, storyteller) -> None:
    client = client_for(storyteller)
    page = client.get(f"/chronicles/{dark.pk}/").content.decode()
    assert 'name="expected" value="0"' in page
    client.post(f"/chronicles/{dark.pk}/nights/open/", {"expected": "0"})
    again = client.post(f"/chronicles/{dark.pk}/nights/open/", {"expected": "0"}, follow=True)
    assert "opened meanwhile" in again.content.decode()
    assert GameNight.objects.filter(chronicle=dark).count() == 1


@pytest.mark.django_db
def test_it_opens_nothing_for_a_post_that_says_nothing(dark, storyteller) -> None:
    page = client_for(storyteller).post(f"/chronicles/{dark.pk}/nights/open/", {}, follow=True)
    assert "not understood" in page.content.decode()
    assert not GameNight.objects.exists()


@pytest.mark.django_db
def test_it_opens_one_night_for_a_double_click_in_the_admin(dark, storyteller) -> None:
    client = client_for(storyteller)
    confirm = client.post(
        "/admin/characters/chronicle/",
        {"action": "open_next_game_night", "_selected_action": [dark.pk]},
    )
    assert "the first game night opens" in confirm.content.decode()
    confirmed = {
        "action": "open_next_game_night",
        "_selected_action": [dark.pk],
        "confirm": "yes",
        f"expected_{dark.pk}": "",
    }
    client.post("/admin/characters/chronicle/", confirmed)
    again = client.post("/admin/characters/chronicle/", confirmed, follow=True)
    assert "opened meanwhile" in again.content.decode()
    assert GameNight.objects.filter(chronicle=dark).count() == 1


@pytest.mark.django_db(transaction=True)
def test_it_opens_one_night_for_ten_parallel_posts() -> None:
    """PostgreSQL waits on the chronicle's row lock; SQLite (IMMEDIATE transactions, see
    settings) on the database's write lock: either way the openings run one at a time."""
    storyteller = StorytellerFactory(username="st_threads")
    chronicle = ChronicleFactory(name="Parallel Chronicle")
    chronicle.storytellers.add(storyteller)
    statuses: list[int] = []
    start = threading.Barrier(10)

    def post() -> None:
        try:
            client = client_for(storyteller)
            start.wait()
            response = client.post(f"/chronicles/{chronicle.pk}/nights/open/", {"expected": "0"})
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [302] * 10
    assert GameNight.objects.filter(chronicle=chronicle).count() == 1
