"""The night report: every scene's log and each character's ledger for one game night, as a
page made to print and as JSON, for the chronicle's storytellers only."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from characters import services
from characters.models import GameNight, LedgerKind
from combat.models import SceneLogEntry
from tests.conftest import client_for
from tests.factories import ChronicleFactory, SceneFactory, StorytellerFactory

pytestmark = pytest.mark.django_db


def _log(scene, seq: int, text: str, *, public: bool = True) -> None:
    SceneLogEntry.objects.create(
        scene=scene, seq=seq, game_time=seq * 60, kind="scene", text=text, public=public
    )


@pytest.fixture
def night(chronicle, character, storyteller) -> GameNight:
    """Night 1: two scenes with their logs, Janet spends willpower and loses a trait (then
    the trait loss is reversed); night 2 opens after it with a scene of its own."""
    night = chronicle.game_nights.get(number=1)
    docks = SceneFactory(chronicle=chronicle, storyteller=storyteller, name="The docks")
    _log(docks, 1, "Janet joined.")
    _log(docks, 2, "A hidden Nosferatu watches.", public=False)
    elysium = SceneFactory(chronicle=chronicle, storyteller=storyteller, name="Elysium")
    _log(elysium, 1, "Janet challenges the Harpy.")
    services.ledger_spend(
        character=character, kind=LedgerKind.WILLPOWER_SPENT, by=storyteller, reason="Retest"
    )
    lost = services.ledger_spend(
        character=character,
        kind=LedgerKind.TRAIT_LOST,
        subject="Quick",
        category="physical",
        by=storyteller,
        reason="Lost a challenge",
    )
    services.ledger_reverse(entry=lost, by=storyteller, reason="Wrong trait")
    services.game_night_open(chronicle=chronicle, by=storyteller)
    later = SceneFactory(chronicle=chronicle, storyteller=storyteller, name="Next week")
    _log(later, 1, "Not this night.")
    return night


def test_it_shows_the_storyteller_every_scene_log_and_ledger_of_the_night(
    night, storyteller
) -> None:
    response = client_for(storyteller).get(f"/chronicles/{night.chronicle_id}/nights/1/report/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "css/report.css" in html
    for text in ("The docks", "Elysium", "Janet joined.", "A hidden Nosferatu watches."):
        assert text in html
    assert "Janet challenges the Harpy." in html
    assert "Next week" not in html and "Not this night." not in html
    assert "Willpower spent" in html and "Retest" in html
    assert "(reversed)" in html and "(reversal)" in html


def test_it_gives_the_same_as_json_with_the_net_per_character(night, storyteller):
    response = client_for(storyteller).get(f"/chronicles/{night.chronicle_id}/nights/1/report.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    report = json.loads(response.content)
    assert report["night"] == 1 and report["closed_at"] is not None
    assert [s["name"] for s in report["scenes"]] == ["The docks", "Elysium"]
    assert [row["text"] for row in report["scenes"][0]["log"]] == [
        "Janet joined.",
        "A hidden Nosferatu watches.",
    ]
    (janet,) = report["characters"]
    assert janet["name"] == "Janet" and janet["player"] == "janet_player"
    assert [e["kind"] for e in janet["ledger"]] == ["willpower_spent", "trait_lost", "trait_lost"]
    assert janet["ledger"][1]["reversed"] is True
    assert janet["net"] == [{"kind": "Willpower spent", "subject": "", "amount": 1}]


def test_it_is_linked_from_the_chronicle_page(night, storyteller) -> None:
    html = client_for(storyteller).get(f"/chronicles/{night.chronicle_id}/").content.decode()
    assert f"/chronicles/{night.chronicle_id}/nights/1/report/" in html
    assert f"/chronicles/{night.chronicle_id}/nights/2/report.json" in html


@pytest.mark.parametrize("suffix", ["report/", "report.json"])
def test_it_is_not_found_for_a_player_or_another_chronicles_storyteller(
    night, player, suffix: str
) -> None:
    url = f"/chronicles/{night.chronicle_id}/nights/1/{suffix}"
    other = ChronicleFactory()
    other_st = StorytellerFactory(username="other_st")
    other.storytellers.add(other_st)
    assert client_for(player).get(url).status_code == 404
    assert client_for(other_st).get(url).status_code == 404
    assert Client().get(url).status_code == 302  # to the login page


def test_it_answers_404_for_a_night_that_does_not_exist(night, storyteller) -> None:
    client = client_for(storyteller)
    assert client.get(f"/chronicles/{night.chronicle_id}/nights/9/report/").status_code == 404
    huge = "9" * 30
    assert client.get(f"/chronicles/{night.chronicle_id}/nights/{huge}/report/").status_code == 404
    assert client.get(f"/chronicles/{huge}/nights/1/report.json").status_code == 404


def test_it_costs_the_same_queries_however_many_scenes_and_entries(
    chronicle, character, storyteller
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = f"/chronicles/{chronicle.pk}/nights/1/report.json"
    client = client_for(storyteller)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured.captured_queries)

    scene = SceneFactory(chronicle=chronicle, storyteller=storyteller)
    _log(scene, 1, "One line.")
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=storyteller)
    few = queries()
    for n in range(4):
        more = SceneFactory(chronicle=chronicle, storyteller=storyteller)
        for seq in range(1, 6):
            _log(more, seq, f"Line {seq} of scene {n}.")
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=storyteller)
    assert queries() == few
