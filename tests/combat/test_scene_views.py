"""The scene pages walked by every role, and what each page shows and refuses.

The cast (tests/conftest.py and below): ``storyteller`` runs the chronicle and the scene;
``stranger_st`` storytells another chronicle and must reach nothing of this one; ``player``
plays Janet, who is in the scene; ``other_player`` plays Cody in another chronicle and must
see nothing of the scene; ``visitor`` is anonymous.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from characters import sheet_cache
from combat import fragments, selectors, services
from combat.models import Participant, Presence, Scene, SceneLogEntry
from combat.selectors import scene_token
from tests.conftest import client_for
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def quick_npc(scene, storyteller) -> Participant:
    return services.scene_add_npc(scene=scene, by=storyteller, name="Ghoul", pools={"Physical": 5})


@pytest.fixture
def stranger_st(db):  # storytells another chronicle
    other = StorytellerFactory(username="stranger_st")
    chronicle = ChronicleFactory(name="Someone Else's Chronicle")
    chronicle.storytellers.add(other)
    return other


@pytest.fixture
def cody(other_player):  # other_player's character, in another chronicle
    return CharacterFactory(name="Cody", player=other_player)


@pytest.fixture
def clients(storyteller, stranger_st, player, other_player, cody) -> dict[str, Client]:
    return {
        "storyteller": client_for(storyteller),
        "stranger_st": client_for(stranger_st),
        "player": client_for(player),
        "other_player": client_for(other_player),
        "visitor": Client(),
    }


def snapshot() -> tuple:
    """Everything a scene request could change."""
    return (
        list(
            Scene.objects.order_by("pk").values_list(
                "pk", "seq", "game_time", "situation", "ruleset", "closed_at"
            )
        ),
        list(Participant.objects.order_by("pk").values_list("pk", "removed_at", "hidden")),
        SceneLogEntry.objects.count(),
    )


ROLES = ("storyteller", "stranger_st", "player", "other_player", "visitor")
LOGIN = "login"  # a redirect to the login page


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    url: str  # formatted with pk, participant, code
    data: dict
    # role -> (status, where a redirect goes or None, whether the request changes the scene)
    expect: dict[str, tuple[int, str | None, bool]]


def _refused_post(ok: tuple[int, str | None, bool]) -> dict:
    return {
        "storyteller": ok,
        "stranger_st": (404, None, False),
        "player": (404, None, False),
        "other_player": (404, None, False),
        "visitor": (302, LOGIN, False),
    }


ENDPOINTS = [
    Endpoint(
        "overview",
        "get",
        "/scenes/",
        {},
        {
            "storyteller": (200, None, False),
            "stranger_st": (200, None, False),
            "player": (200, None, False),
            "other_player": (200, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "open",
        "post",
        "/scenes/open/",
        {"chronicle": "{chronicle}", "name": "The docks"},
        {
            "storyteller": (302, "/scenes/{new}/", True),
            "stranger_st": (302, "/scenes/", False),
            "player": (302, "/scenes/", False),
            "other_player": (302, "/scenes/", False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "tablet",
        "get",
        "/scenes/{pk}/",
        {},
        {
            "storyteller": (200, None, False),
            "stranger_st": (404, None, False),
            "player": (302, "/scenes/{pk}/phone/", False),
            "other_player": (404, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "phone",
        "get",
        "/scenes/{pk}/phone/",
        {},
        {
            "storyteller": (302, "/scenes/{pk}/", False),
            "stranger_st": (404, None, False),
            "player": (200, None, False),
            "other_player": (404, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "clock",
        "post",
        "/scenes/{pk}/clock/",
        {"seconds": "60", "key": "k3y-0f-a-tap", "token": "{token}"},
        _refused_post((302, "/scenes/{pk}/", True)),
    ),
    Endpoint(
        "situation",
        "post",
        "/scenes/{pk}/situation/",
        {"situation": "Rain on the skylight"},
        _refused_post((302, "/scenes/{pk}/", True)),
    ),
    Endpoint(
        "ruleset",
        "post",
        "/scenes/{pk}/ruleset/",
        {"ruleset": "met_bns"},
        _refused_post((302, "/scenes/{pk}/", True)),
    ),
    Endpoint(
        "npcs",
        "post",
        "/scenes/{pk}/npcs/",
        {"name": "Sheriff", "pools": "Physical 7, Social 5", "hidden": "on"},
        _refused_post((302, "/scenes/{pk}/", True)),
    ),
    Endpoint(
        "remove",
        "post",
        "/scenes/{pk}/participants/{participant}/remove/",
        {},
        _refused_post((302, "/scenes/{pk}/", True)),
    ),
    Endpoint(
        "close",
        "post",
        "/scenes/{pk}/close/",
        {},
        _refused_post((302, "/scenes/", True)),
    ),
    Endpoint(
        "log.json",
        "get",
        "/scenes/{pk}/log.json",
        {},
        {
            "storyteller": (200, None, False),
            "stranger_st": (404, None, False),
            "player": (200, None, False),
            "other_player": (404, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "log.txt",
        "get",
        "/scenes/{pk}/log.txt",
        {},
        {
            "storyteller": (200, None, False),
            "stranger_st": (404, None, False),
            "player": (200, None, False),
            "other_player": (404, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "join form",
        "get",
        "/join/{code}/",
        {},
        {
            "storyteller": (403, None, False),  # no character in the chronicle
            "stranger_st": (403, None, False),
            "player": (302, "/scenes/{pk}/phone/", False),  # in the scene already
            "other_player": (403, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
    Endpoint(
        "join",
        "post",
        "/join/",
        {"code": "{code}", "character": "{second}"},  # the player's second character
        {
            "storyteller": (400, None, False),
            "stranger_st": (400, None, False),
            "player": (302, "/scenes/{pk}/phone/", True),
            "other_player": (400, None, False),
            "visitor": (302, LOGIN, False),
        },
    ),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.name)
def test_it_lets_each_role_do_only_what_it_may(
    endpoint, role, clients, scene, quick_npc, chronicle, player
):
    second = CharacterFactory(chronicle=chronicle, player=player, name="Janet's cousin")
    values = {
        "pk": scene.pk,
        "participant": quick_npc.pk,
        "code": scene.join_code,
        "chronicle": chronicle.pk,
        "token": scene_token(Scene.objects.get(pk=scene.pk)),
        "second": second.pk,
    }
    url = endpoint.url.format(**values)
    data = {k: str(v).format(**values) for k, v in endpoint.data.items()}
    before = snapshot()

    response = getattr(clients[role], endpoint.method)(url, data)

    status, location, changes = endpoint.expect[role]
    assert response.status_code == status, response.content[:500]
    if location == LOGIN:
        assert response["Location"].startswith("/accounts/login/")
    elif location is not None:
        newest = Scene.objects.order_by("-pk").first()
        assert response["Location"] == location.format(**values, new=newest.pk)
    assert (snapshot() != before) is changes


# The overview --------------------------------------------------------------------------


def test_it_shows_every_open_scene_of_the_chronicles_run_with_their_storytellers(
    scene, chronicle, storyteller, stranger_st
):
    colleague = StorytellerFactory(username="colleague", first_name="Ada")
    chronicle.storytellers.add(colleague)
    services.scene_open(chronicle=chronicle, by=colleague, name="The docks")
    closed = services.scene_open(chronicle=chronicle, by=storyteller, name="Closed one")
    services.scene_close(scene=closed, by=storyteller)
    elsewhere = ChronicleFactory()
    elsewhere.storytellers.add(stranger_st)
    GameNightFactory(chronicle=elsewhere)
    services.scene_open(chronicle=elsewhere, by=stranger_st, name="Not yours")

    page = client_for(storyteller).get("/scenes/").content.decode()

    assert "Elysium" in page and "The docks" in page and "Ada" in page
    assert f"/scenes/{scene.pk}/" in page
    assert "Closed one" not in page and "Not yours" not in page


def test_it_opens_a_scene_with_another_ruleset_than_the_chronicles(chronicle, storyteller):
    response = client_for(storyteller).post(
        "/scenes/open/", {"chronicle": chronicle.pk, "name": "Chase", "ruleset": "wod_dice"}
    )
    scene = Scene.objects.get(name="Chase")
    assert response["Location"] == f"/scenes/{scene.pk}/"
    assert scene.ruleset == "wod_dice" and chronicle.ruleset == "met_classic"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": ""}, "This field is required"),
        ({"name": "x" * 121}, "at most 120"),
        ({"name": "Ok", "ruleset": "chess"}, "not one of the available choices"),
    ],
)
def test_it_refuses_a_bad_open_scene_form_and_opens_nothing(chronicle, storyteller, data, message):
    client = client_for(storyteller)
    response = client.post("/scenes/open/", {"chronicle": chronicle.pk, **data}, follow=True)
    assert message in response.content.decode()
    assert not Scene.objects.exists()


def test_it_says_a_scene_needs_an_open_night(storyteller):
    chronicle = ChronicleFactory(name="No Night Yet")
    chronicle.storytellers.add(storyteller)
    response = client_for(storyteller).post(
        "/scenes/open/", {"chronicle": chronicle.pk, "name": "Elysium"}, follow=True
    )
    assert "has no open game night" in response.content.decode()
    assert not Scene.objects.exists()


# The tablet ----------------------------------------------------------------------------


def test_it_shows_the_join_code_and_a_qr_code_of_the_lan_address_on_localhost(
    scene, storyteller, monkeypatch
):
    monkeypatch.setattr("combat.views.lan_addresses", lambda: ["192.168.1.20"])
    page = (
        client_for(storyteller)
        .get(f"/scenes/{scene.pk}/", HTTP_HOST="localhost:8000")
        .content.decode()
    )
    assert scene.join_code in page
    assert f"http://192.168.1.20:8000/join/{scene.join_code}/" in page
    assert "<svg" in page and 'class="qr"' in page


def test_it_keeps_the_host_the_tablet_was_reached_by(scene, storyteller, monkeypatch, settings):
    settings.ALLOWED_HOSTS = ["st.example.org"]
    monkeypatch.setattr("combat.views.lan_addresses", lambda: ["192.168.1.20"])
    page = (
        client_for(storyteller)
        .get(f"/scenes/{scene.pk}/", HTTP_HOST="st.example.org")
        .content.decode()
    )
    assert f"http://st.example.org/join/{scene.join_code}/" in page
    assert "192.168.1.20" not in page


def test_it_shows_presence_and_marks_hidden_npcs_on_the_board(scene, storyteller, player):
    services.scene_add_npc(scene=scene, by=storyteller, name="Lurker", hidden=True)
    Presence.objects.create(scene=scene, user=player, channel_name="ch-1")
    page = client_for(storyteller).get(f"/scenes/{scene.pk}/").content.decode()
    assert "1 of 1 phones connected" in page
    assert "connected now" in page
    assert "Lurker" in page and "hidden" in page


def test_it_mounts_the_scene_socket_instead_of_the_live_one(scene, storyteller, player):
    tablet = client_for(storyteller).get(f"/scenes/{scene.pk}/").content.decode()
    phone = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    for page in (tablet, phone):
        assert f'ws-connect="/ws/scenes/{scene.pk}/"' in page
        assert "/ws/live/" not in page
        assert "js/scene.js" in page


def test_it_leaves_room_for_the_challenge_board_combat_and_chase(scene, storyteller):
    page = client_for(storyteller).get(f"/scenes/{scene.pk}/").content.decode()
    for region in ("challenge-board", "combat", "chase"):
        assert f'id="{region}"' in page


# The game clock ------------------------------------------------------------------------


def _clock(client, scene, seconds="60", token=None, **extra):
    data = {"seconds": seconds, "key": "tap-key-123"}
    if token is not None:
        data["token"] = token
    return client.post(f"/scenes/{scene.pk}/clock/", data, **extra)


def test_it_counts_a_double_tap_once(scene, storyteller):
    client = client_for(storyteller)
    seen = scene_token(scene)
    first = _clock(client, scene, token=seen, HTTP_HX_REQUEST="true")
    second = _clock(client, scene, token=seen, HTTP_HX_REQUEST="true")  # same key: a replay
    scene.refresh_from_db()
    assert scene.game_time == 60
    # The answer is the clock panel only: the rest of the board comes with the push.
    assert first.status_code == 200 and first.content.decode().lstrip().startswith(
        '<section id="clock-panel"'
    )
    assert 'id="scene-board"' not in first.content.decode()
    assert second.status_code == 200 and f'data-seq="{scene.seq}"' in second.content.decode()
    # Another tap made on the same (now old) board: 409, the tablet swaps the sentence in; a
    # tap replayed after being offline is dropped with it.
    data = {"seconds": "60", "key": "another-tap", "token": seen}
    third = client.post(f"/scenes/{scene.pk}/clock/", data, HTTP_HX_REQUEST="true")
    assert third.status_code == 409
    assert "moved on since you loaded it" in third.content.decode()
    scene.refresh_from_db()
    assert scene.game_time == 60


@pytest.mark.parametrize("seconds", ["0", "-5", "abc", "", "86401", "1e3"])
def test_it_refuses_a_bad_clock_step_and_changes_nothing(scene, storyteller, seconds):
    before = snapshot()
    response = _clock(client_for(storyteller), scene, seconds=seconds, follow=True)
    assert "Clock not moved" in response.content.decode()
    assert snapshot() == before


def test_it_refuses_a_clock_post_without_a_key(scene, storyteller):
    before = snapshot()
    response = client_for(storyteller).post(
        f"/scenes/{scene.pk}/clock/", {"seconds": "60"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert "Key: This field is required" in response.content.decode()
    assert snapshot() == before


@pytest.mark.parametrize(
    ("ruleset", "turn"), [("wod_dice", 15), ("met_bns", 3), ("met_classic", 3)]
)
def test_it_offers_a_turn_of_the_scenes_ruleset(scene, storyteller, ruleset, turn):
    services.scene_set_ruleset(scene=scene, by=storyteller, ruleset=ruleset)
    page = client_for(storyteller).get(f"/scenes/{scene.pk}/").content.decode()
    assert f'<input type="hidden" name="seconds" value="{turn}">' in page


def test_it_formats_the_game_clock(scene, storyteller, player):
    services.scene_advance_clock(scene=scene, by=storyteller, seconds=3600 + 5 * 60 + 30)
    for client, url in ((client_for(storyteller), ""), (client_for(player), "phone/")):
        assert "1h 05m 30s" in client.get(f"/scenes/{scene.pk}/{url}").content.decode()


# NPCs, situation, ruleset, removal, closing --------------------------------------------


def test_it_adds_a_quick_npc_with_typed_in_pools(scene, storyteller):
    client_for(storyteller).post(
        f"/scenes/{scene.pk}/npcs/", {"name": "Thug", "pools": "Physical 7; Brawl: 3\nSocial=2"}
    )
    thug = Participant.objects.get(scene=scene, name="Thug")
    assert thug.npc and not thug.hidden
    assert thug.quick_pools == {"Physical": 7, "Brawl": 3, "Social": 2}


def test_it_adds_an_npc_from_the_chronicles_sheets(scene, storyteller, chronicle):
    prince = CharacterFactory(chronicle=chronicle, name="Prince", npc=True, player=None)
    page = client_for(storyteller).get(f"/scenes/{scene.pk}/").content.decode()
    assert f'<option value="{prince.pk}">Prince</option>' in page
    client_for(storyteller).post(f"/scenes/{scene.pk}/npcs/", {"character": prince.pk})
    assert Participant.objects.filter(scene=scene, character=prince, npc=True).exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "Thug", "pools": "lots of muscle"}, "is not"),
        ({"name": "Thug", "pools": "Physical 120"}, "0 to 99"),
        ({"name": ""}, "Pick an NPC sheet or type a quick NPC"),
        ({"name": "x" * 121}, "at most 120"),
        ({"character": "999999"}, "Select a valid choice"),
    ],
)
def test_it_refuses_a_bad_npc_and_adds_nothing(scene, storyteller, data, message):
    before = snapshot()
    response = client_for(storyteller).post(
        f"/scenes/{scene.pk}/npcs/", data, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert snapshot() == before


def test_it_refuses_a_player_character_or_another_chronicles_npc_as_npc(
    scene, storyteller, character
):
    stranger_npc = CharacterFactory(npc=True, player=None)
    for pk in (character.pk, stranger_npc.pk):
        before = snapshot()
        client_for(storyteller).post(f"/scenes/{scene.pk}/npcs/", {"character": pk})
        assert snapshot() == before


def test_it_refuses_a_situation_too_long_and_changes_nothing(scene, storyteller):
    before = snapshot()
    response = client_for(storyteller).post(
        f"/scenes/{scene.pk}/situation/", {"situation": "x" * 301}, follow=True
    )
    assert "at most 300" in response.content.decode()
    assert snapshot() == before


def test_it_refuses_an_unknown_ruleset(scene, storyteller):
    before = snapshot()
    client_for(storyteller).post(f"/scenes/{scene.pk}/ruleset/", {"ruleset": "chess"})
    assert snapshot() == before


def test_it_refuses_to_remove_a_participant_of_another_scene(scene, storyteller, chronicle):
    other = services.scene_open(chronicle=chronicle, by=storyteller, name="Other")
    npc = services.scene_add_npc(scene=other, by=storyteller, name="Elsewhere")
    before = snapshot()
    response = client_for(storyteller).post(
        f"/scenes/{scene.pk}/participants/{npc.pk}/remove/", follow=True
    )
    assert "not in this scene" in response.content.decode()
    assert snapshot() == before


def test_it_refuses_changes_to_a_closed_scene(scene, storyteller):
    services.scene_close(scene=scene, by=storyteller)
    client = client_for(storyteller)
    before = snapshot()
    response = client.post(f"/scenes/{scene.pk}/situation/", {"situation": "x"}, follow=True)
    assert "This scene is closed" in response.content.decode()
    assert snapshot() == before


def test_it_tells_a_removed_player_they_were_removed(scene, storyteller, player):
    janet = Participant.objects.get(scene=scene, character__player=player)
    client_for(storyteller).post(f"/scenes/{scene.pk}/participants/{janet.pk}/remove/")
    page = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "took Janet out of this scene" in page
    assert 'id="sheet-' not in page


# Joining -------------------------------------------------------------------------------


def test_it_joins_with_the_only_character_from_the_code_alone(chronicle, storyteller, player):
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    janet = CharacterFactory(chronicle=chronicle, player=player, name="Janet")
    response = client_for(player).post("/join/", {"code": f" {scene.join_code.lower()} "})
    assert response["Location"] == f"/scenes/{scene.pk}/phone/"
    assert Participant.objects.filter(scene=scene, character=janet).exists()


def test_it_asks_a_player_with_several_characters_to_pick_one(chronicle, storyteller, player):
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    CharacterFactory(chronicle=chronicle, player=player, name="Janet")
    CharacterFactory(chronicle=chronicle, player=player, name="Nettie")
    CharacterFactory(player=player, name="Elsewhere")  # another chronicle: not offered
    response = client_for(player).post("/join/", {"code": scene.join_code})
    page = response.content.decode()
    assert response.status_code == 200
    assert "Which character do you play tonight?" in page
    assert "Janet" in page and "Nettie" in page and "Elsewhere" not in page
    assert not Participant.objects.filter(scene=scene).exists()


def test_it_prefills_the_code_from_a_scanned_link(chronicle, storyteller, player):
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    CharacterFactory(chronicle=chronicle, player=player, name="Janet")
    page = client_for(player).get(f"/join/{scene.join_code.lower()}/").content.decode()
    assert f'name="code" value="{scene.join_code}"' in page
    assert "Elysium" in page


def test_it_says_why_a_player_without_a_character_cannot_join(scene, other_player, cody):
    response = client_for(other_player).post("/join/", {"code": scene.join_code})
    assert response.status_code == 403
    assert "You have no character in Chronicle of Tests" in response.content.decode()
    before = snapshot()
    response = client_for(other_player).post(
        "/join/", {"code": scene.join_code, "character": cody.pk}
    )
    assert response.status_code == 400
    assert "not in Chronicle of Tests" in response.content.decode()
    assert snapshot() == before


@pytest.mark.parametrize("code", ["ZZZZZZ", "", "TOO-LONG-CODE!"])
def test_it_refuses_an_unknown_code(scene, player, code):
    before = snapshot()
    response = client_for(player).post("/join/", {"code": code})
    assert response.status_code in (400, 404)
    assert snapshot() == before


def test_it_refuses_the_code_of_a_closed_scene(scene, storyteller, player, chronicle):
    services.scene_close(scene=scene, by=storyteller)
    nettie = CharacterFactory(chronicle=chronicle, player=player, name="Nettie")
    before = snapshot()
    response = client_for(player).post("/join/", {"code": scene.join_code, "character": nettie.pk})
    assert "No open scene has the code" in response.content.decode()
    assert snapshot() == before


# The phone -----------------------------------------------------------------------------


def test_it_never_shows_hidden_npcs_on_the_phone_not_even_as_a_count(scene, storyteller, player):
    services.scene_add_npc(scene=scene, by=storyteller, name="Lurker", hidden=True)
    services.scene_add_npc(scene=scene, by=storyteller, name="Bouncer")
    services.scene_set_situation(scene=scene, by=storyteller, situation="The music stops")
    page = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Lurker" not in page, page[page.find("Lurker") - 300 : page.find("Lurker") + 50]
    assert "Bouncer" in page and "The music stops" in page
    pushed = fragments.players_state(Scene.objects.get(pk=scene.pk))
    assert "Lurker" not in pushed
    assert pushed.count("<li") == 2  # Janet and the bouncer


def test_it_shows_the_characters_current_values(scene, player, character, storyteller):
    from characters.services import ledger_spend

    ledger_spend(
        character=character, kind="willpower_spent", amount=1, by=storyteller, reason="test"
    )
    page = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "2<small>/3</small>" in page
    assert '<div id="prompts" data-seq=' in page


# The log -------------------------------------------------------------------------------


def test_it_downloads_the_whole_log_for_the_storyteller(scene, storyteller):
    services.scene_add_npc(scene=scene, by=storyteller, name="Lurker", hidden=True)
    services.scene_advance_clock(scene=scene, by=storyteller, seconds=90)
    client = client_for(storyteller)
    body = json.loads(client.get(f"/scenes/{scene.pk}/log.json").content)
    texts = [e["text"] for e in body["entries"]]
    assert texts == [
        "Scene opened: Elysium",
        "Janet joined",
        "NPC Lurker added (hidden)",
        "Game clock +1m 30s",
    ]
    assert body["whole"] is True
    assert [e["seq"] for e in body["entries"]] == sorted(e["seq"] for e in body["entries"])
    text = client.get(f"/scenes/{scene.pk}/log.txt").content.decode()
    assert "1m 30s  Game clock +1m 30s" in text
    assert "Lurker" in text


def test_it_downloads_only_what_concerned_the_player(scene, storyteller, player):
    services.scene_add_npc(scene=scene, by=storyteller, name="Lurker", hidden=True)
    client = client_for(player)
    body = json.loads(client.get(f"/scenes/{scene.pk}/log.json").content)
    assert body["whole"] is False
    assert "Lurker" not in json.dumps(body)
    assert "Janet joined" in [e["text"] for e in body["entries"]]
    assert "Lurker" not in client.get(f"/scenes/{scene.pk}/log.txt").content.decode()


# Fragments: ids, seq and a fixed number of queries -------------------------------------


def test_it_gives_every_fragment_root_an_id_and_the_seq(scene, player):
    scene = Scene.objects.get(pk=scene.pk)
    for html, root in (
        (fragments.storyteller_state(scene), "scene-board"),
        (fragments.players_state(scene), "scene-public"),
        (fragments.private_state(scene, player), "scene-private"),
    ):
        assert html.lstrip().startswith(f'<div id="{root}"') or html.lstrip().startswith(
            f'<section id="{root}"'
        )
        assert f'data-seq="{scene.seq}"' in html.split(">", 1)[0]
        assert 'hx-swap-oob="true"' in html.split(">", 1)[0]


def _with_participants(scene, storyteller, chronicle, count):
    """The scene with ``count`` participants: players' characters (half connected) and NPCs,
    an NPC whatever the count (the board reads their latest challenges for their start
    forms: combat.challenges.selectors.board_cards)."""
    for i in range(count - 1):  # Janet is in already
        if i % 3 == 1:
            services.scene_add_npc(
                scene=scene, by=storyteller, name=f"NPC {count}-{i}", hidden=bool(i % 2)
            )
            continue
        character = CharacterFactory(chronicle=chronicle, name=f"PC {count}-{i}")
        services.scene_join(code=scene.join_code, user=character.player, character=character)
        if i % 2:
            Presence.objects.create(
                scene=scene, user=character.player, channel_name=f"c{count}-{i}"
            )
    return Scene.objects.select_related("chronicle", "storyteller", "game_night").get(pk=scene.pk)


def _count_queries(render) -> int:
    sheet_cache.clear()  # every sheet read as the first time (cached, one query for them all)
    with CaptureQueriesContext(connection) as captured:
        render()
    return len(captured)


@pytest.mark.parametrize("audience", ["board", "public", "private"])
def test_it_renders_each_audience_in_the_same_queries_for_3_or_30_participants(
    audience, chronicle, storyteller, player, character, django_assert_num_queries
):
    counts = []
    for size in (3, 30):
        scene = services.scene_open(chronicle=chronicle, by=storyteller, name=f"Size {size}")
        services.scene_join(code=scene.join_code, user=player, character=character)
        scene = _with_participants(scene, storyteller, chronicle, size)
        render = {
            "board": lambda s=scene: fragments.storyteller_state(s),
            "public": lambda s=scene: fragments.players_state(s),
            "private": lambda s=scene: fragments.private_state(s, player),
        }[audience]
        counts.append(_count_queries(render))
        if audience == "board":
            assert render().count('class="person') == size
    sheet_cache.clear()
    with django_assert_num_queries(counts[0]):
        render()
    assert counts[0] == counts[1]


def test_it_renders_a_whole_change_in_fixed_queries(
    chronicle, storyteller, player, character, django_assert_num_queries
):
    counts = []
    for size in (3, 30):
        scene = services.scene_open(chronicle=chronicle, by=storyteller, name=f"Size {size}")
        services.scene_join(code=scene.join_code, user=player, character=character)
        scene = _with_participants(scene, storyteller, chronicle, size)
        counts.append(
            _count_queries(
                lambda s=scene: fragments.scene_change_fragments(s.pk, private_user_ids=[player.pk])
            )
        )
    assert counts[0] == counts[1]


def test_the_page_and_the_push_render_the_same_board(scene, storyteller):
    page = client_for(storyteller).get(f"/scenes/{scene.pk}/").content.decode()
    pushed = fragments.storyteller_state(Scene.objects.get(pk=scene.pk))
    start = pushed.index("<section")
    assert pushed[start : start + 200] in page
    assert selectors.BOARD_LOG_LENGTH == 30


def test_it_sends_a_player_who_scans_again_back_to_their_phone(scene, player):
    response = client_for(player).get(f"/join/{scene.join_code}/")
    assert response["Location"] == f"/scenes/{scene.pk}/phone/"


def test_it_sends_a_player_who_types_the_code_again_back_to_their_phone(scene, player, chronicle):
    CharacterFactory(chronicle=chronicle, player=player, name="Nettie")  # two characters
    before = snapshot()
    response = client_for(player).post("/join/", {"code": scene.join_code})
    assert response["Location"] == f"/scenes/{scene.pk}/phone/"
    assert snapshot() == before


def test_it_shows_the_code_form_to_a_logged_in_player(player):
    page = client_for(player).get("/join/").content.decode()
    assert "Code on the storyteller's tablet" in page and 'name="code"' in page


def test_it_renders_one_state_the_same_way_twice(scene, player):
    """A push and a fresh render of the same state must agree (no random keys in fragments)."""
    scene = Scene.objects.get(pk=scene.pk)
    for render in (
        fragments.storyteller_state,
        fragments.players_state,
        lambda s: fragments.private_state(s, player),
    ):
        assert render(scene) == render(scene)


def test_it_keeps_public_lines_out_of_the_phones_private_log(scene, storyteller, player):
    services.scene_advance_clock(scene=scene, by=storyteller, seconds=75)
    private = fragments.private_state(Scene.objects.get(pk=scene.pk), player)
    assert "Janet joined" in private and "Game clock" not in private
