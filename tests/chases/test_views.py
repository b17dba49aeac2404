"""Chase pages: the tablet's and phones' posts, what each audience sees, hidden information,
and the sync test (a phone's state after pushes equals a fresh render)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chases import obstacles, running, starting
from chases.models import Chase, Phase, Side
from chases.tokens import token_of
from combat import fragments
from combat.models import Scene
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def key(participant) -> str:
    """The participant's side key in its latest chase (a hidden NPC's is drawn at random)."""
    side = Side.objects.filter(participant=participant).order_by("-pk").first()
    return side.key if side else f"p{participant.pk}"


def fresh(scene) -> Scene:
    return Scene.objects.select_related("chronicle", "storyteller", "game_night").get(pk=scene.pk)


def start_post(client, scene, prey, *predators, **extra):
    data = {
        "key": f"start-{scene.pk}",
        "start": "escape",
        "head_start": "3",
        "prey": str(prey.pk),
        "predators": [str(p.pk) for p in predators],
        "terrain": "foot",
        "difficulty": "6",
        "sprint_rounds": "6",
        **extra,
    }
    return client.post(f"/scenes/{scene.pk}/chase/start/", data, HTTP_HX_REQUEST="true")


def test_the_storyteller_starts_a_chase_from_the_tablet(scene, storyteller, janet, hound):
    response = start_post(client_for(storyteller), scene, janet, hound)
    body = response.content.decode()
    assert response.status_code == 200, body
    chase = Chase.objects.get()
    assert chase.phase == Phase.ROLL
    assert 'id="scene-board"' in body and "Roll round 1" in body
    assert f'id="chase-{chase.pk}-s{chase.step}-roll" data-keep' in body


def test_a_bad_start_says_why_and_starts_nothing(scene, storyteller, janet, hound):
    response = start_post(client_for(storyteller), scene, janet, hound, head_start="")
    assert response.status_code == 400
    assert "head start (K4)" in response.content.decode()
    assert not Chase.objects.exists()


def test_a_player_cannot_start_or_roll(scene, storyteller, janet, hound, player):
    client = client_for(player)
    assert start_post(client, scene, janet, hound).status_code == 404
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    response = client.post(
        f"/chases/{chase.pk}/round/",
        {"token": token_of(chase), "key": "k1"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409 and "Only the storyteller" in response.content.decode()
    chase.refresh_from_db()
    assert chase.state["rounds"] == 0


def test_the_tablet_rolls_typed_dice_and_the_winners_phone_is_offered_its_maneuvers(
    scene, storyteller, janet, hound, player, other_player, cody
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    tablet = client_for(storyteller)
    response = tablet.post(
        f"/chases/{chase.pk}/round/",
        {
            "token": token_of(chase),
            "key": "roll-1",
            "dice-prey": "8 9 7 2 2",  # Dexterity 3 + Athletics 2
            f"dice-{key(hound)}": "2 3 2 2 2 2 2",  # Dexterity 4 + Athletics 3
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    phone = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Janet won the round" in phone
    assert 'data-maneuver="gun_it"' in phone and "−2 Lead" in phone
    assert 'data-maneuver="nope"' not in phone  # K8: only when an obstacle is confronted
    other = client_for(other_player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "won the round" not in other and 'Lead <b class="lead">6</b>' in other
    chase.refresh_from_db()
    response = client_for(player).post(
        f"/chases/{chase.pk}/maneuver/",
        {
            "token": token_of(chase),
            "key": "m1",
            "pursuit": key(hound),
            "role": "prey",
            "maneuver": "bait",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and 'id="scene-private"' in response.content.decode()
    chase.refresh_from_db()
    assert chase.phase == Phase.ROLL


def test_a_late_tap_is_refused_with_a_message(scene, storyteller, janet, hound, player):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    response = client_for(storyteller).post(
        f"/chases/{chase.pk}/course/",
        {"token": "stale", "key": "c1", "difficulty": "8"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409 and "moved on" in response.content.decode()


def test_typed_dice_must_be_d10s(scene, storyteller, janet, hound):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    response = client_for(storyteller).post(
        f"/chases/{chase.pk}/round/",
        {"token": token_of(chase), "key": "r", "dice-prey": "3 11"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400 and "1 to 10" in response.content.decode()


@pytest.mark.rules("D1")
def test_typed_dice_other_than_the_pool_the_tablet_shows_are_refused(
    scene, storyteller, janet, hound
):
    """D1: the tablet shows Janet's pool (5) in its pool field; 3 dice typed against it are
    refused with the pool's size (409) and nothing is rolled; a pool set to 3 takes them."""
    from html import unescape

    from chases.models import ChaseRoll

    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    tablet = client_for(storyteller)
    board = tablet.get(f"/scenes/{scene.pk}/").content.decode()
    assert 'name="pool-prey" value="5"' in board
    data = {
        "token": token_of(chase),
        "key": "r",
        "pool-prey": "5",
        "dice-prey": "8 9 7",
        f"pool-{key(hound)}": "7",
        f"dice-{key(hound)}": "2 2 2 2 2 2 2",
    }
    response = tablet.post(f"/chases/{chase.pk}/round/", data, HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    assert "Janet's chase pool is 5 dice; 3 typed: type 5 or leave it blank (D1)" in unescape(
        response.content.decode()
    )
    before = chase.state
    chase.refresh_from_db()
    assert chase.state == before and chase.state["rounds"] == 0
    assert not ChaseRoll.objects.filter(step__chase=chase).exists()
    response = tablet.post(
        f"/chases/{chase.pk}/round/", {**data, "pool-prey": "3"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    chase.refresh_from_db()
    assert chase.state["rounds"] == 1


# Hidden information ------------------------------------------------------------------------


def test_a_hidden_pursuer_is_never_named_nor_its_dice_shown_to_the_players(
    scene, storyteller, janet, lurker, player
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[lurker], prey=janet, start="escape", head_start=3
    )
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [2, 2, 2, 2, 2], key(lurker): [7, 9, 4, 3]},
    )
    s = fresh(scene)
    public = fragments.players_state(s)
    private = fragments.private_state(s, player)
    phone = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    for html in (public, private, phone):
        assert "Lurker" not in html
    assert "An unseen pursuer" in public
    assert 'class="die' not in public.split("An unseen pursuer</b>")[1].split("</li>")[0]
    board = fragments.storyteller_state(s)
    assert "Lurker" in board


def test_the_prompts_reach_only_the_winners_phone(
    scene, storyteller, janet, cody, player, other_player
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[cody], prey=janet, start="escape", head_start=3
    )
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [2, 2, 2, 2, 2], key(cody): [9, 9, 2, 2, 2]},
    )
    s = fresh(scene)
    assert 'data-maneuver="head_off"' in fragments.private_state(s, other_player)
    assert "data-maneuver" not in fragments.private_state(s, player)
    assert "data-maneuver" not in fragments.players_state(s)


def test_no_phone_gets_an_id_of_the_hidden_pursuer(scene, storyteller, janet, lurker, player):
    """Its side key is drawn, not the participant's id: the phones' track and the Prey's
    maneuver against it (the form names the pursuit) carry nothing derived from it."""
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[lurker], prey=janet, start="escape", head_start=3
    )
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [9, 9, 2, 2, 2], key(lurker): [2, 2, 2, 2]},
    )
    s = fresh(scene)
    private = fragments.private_state(s, player)
    assert 'data-maneuver="bait"' in private  # Janet's maneuver against the unseen pursuer
    for html in (fragments.players_state(s), private):
        assert not re.search(rf"\bp{lurker.pk}\b", html)


def _forged(client, url: str, data: dict) -> tuple[int, str]:
    """A phone's post (htmx): its status and the private part it gets back."""
    response = client.post(url, data, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    return response.status_code, re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", body)


NOBODY = "p999999"


@pytest.mark.parametrize("form", ["predator_maneuver", "prey_maneuver", "obstacle_choice"])
def test_a_forged_side_key_of_a_hidden_predator_answers_as_one_that_names_nobody(
    form, scene, storyteller, janet, cody, lurker, other_player
):
    """A player posts the side key of a hidden NPC (here Cody's, who is not in this chase):
    status and sentence are those of a key that names nothing, whatever the hidden NPC is
    doing (its maneuver pending, the Prey's maneuver against it, an obstacle it faces)."""
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[lurker], prey=janet, start="escape", head_start=3
    )
    if form == "obstacle_choice":
        obstacles.chase_obstacle_set(
            chase=chase,
            by=storyteller,
            label="A fence",
            difficulty=6,
            pool=("dexterity", "athletics"),
            facing=["prey", key(lurker)],
            token=token_of(chase),
        )
        url, field, extra = f"/chases/{chase.pk}/obstacle/choice/", "who", {}
    else:
        wins = form == "predator_maneuver"
        running.chase_round(
            chase=chase,
            by=storyteller,
            token=token_of(chase),
            dice={
                "prey": [2] * 5 if wins else [9] * 5,
                key(lurker): [9, 9, 2, 2] if wins else [2] * 4,
            },
        )
        role = "predator" if wins else "prey"
        url, field = f"/chases/{chase.pk}/maneuver/", "pursuit"
        extra = {"role": role, "maneuver": "tail" if wins else "bait"}
    chase.refresh_from_db()
    client = client_for(other_player)
    base = {"token": token_of(chase), **extra}
    hidden = _forged(client, url, {**base, "key": "forge-1", field: key(lurker)})
    nobody = _forged(client, url, {**base, "key": "forge-2", field: NOBODY})
    assert hidden[0] == nobody[0] == 409
    assert hidden[1] == nobody[1]
    assert "Lurker" not in hidden[1]
    assert Chase.objects.get(pk=chase.pk).step == chase.step


# Sync: pushed fragments equal a fresh render ---------------------------------------------------


def _by_id(html: str, root: str) -> str:
    match = re.search(rf'<(\w+) id="{root}"', html)
    assert match, f"{root} not in fragment"
    return html[match.start() :]


def test_a_phone_after_pushes_shows_what_a_fresh_load_shows(
    scene, storyteller, janet, hound, player, monkeypatch, django_capture_on_commit_callbacks
):
    """Render the phone, act, apply the pushed fragments the way htmx swaps them by id,
    and compare with a fresh render of the same state."""
    pushed: list[tuple[str, str]] = []

    def capture(group, html):
        pushed.append((group, html))

    monkeypatch.setattr("combat.live._send", capture)
    with django_capture_on_commit_callbacks(execute=True):
        chase = starting.start_chase(
            scene=scene,
            by=storyteller,
            predators=[hound],
            prey=janet,
            start="escape",
            head_start=3,
        )
    with django_capture_on_commit_callbacks(execute=True):
        running.chase_round(
            chase=chase,
            by=storyteller,
            token=token_of(chase),
            dice={"prey": [9, 9, 2, 2, 2], key(hound): [2, 2, 2, 2, 2, 2, 2]},
        )
    players = [h for g, h in pushed if g.endswith(".players")]
    mine = [h for g, h in pushed if g.endswith(f".user.{player.pk}")]
    assert players and mine
    s = fresh(scene)
    assert players[-1] == fragments.players_state(s)
    assert mine[-1] == fragments.private_pieces(s, player)  # its prompts and log
    assert 'data-maneuver="bait"' in mine[-1] and 'Lead <b class="lead">5</b>' in players[-1]
    page = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    for html, root in ((players[-1], "chase-public"), (mine[-1], "chase-prompts")):
        part = _by_id(html, root)
        part = part[: part.index("</div>")]
        assert re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", part) in re.sub(
            r'<input type="hidden" name="csrfmiddlewaretoken" value="[^"]*">', "", page
        )


def test_the_chase_renders_in_the_same_queries_for_few_or_many_steps(
    scene, storyteller, janet, hound, player
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=9
    )
    counts = []
    for _ in range(2):
        s = fresh(scene)
        with CaptureQueriesContext(connection) as captured:
            fragments.storyteller_state(s)
            fragments.players_state(s)
            fragments.private_state(s, player)
        counts.append(len(captured))
        for _ in range(3):
            chase.refresh_from_db()
            running.chase_round(
                chase=chase,
                by=storyteller,
                token=token_of(chase),
                dice={"prey": [5, 2, 2, 2, 2], key(hound): [5, 2, 2, 2, 2, 2, 2]},
            )
    assert counts[0] == counts[1]


def test_the_storytellers_forms_keep_their_id_until_the_chase_moves(
    scene, storyteller, janet, hound
):
    """data-keep keeps a half-typed form across pushes of the same chase step (the clock,
    a join) and a new step draws a fresh one."""
    from combat import services as scenes

    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )

    def roll_form_id() -> str:
        board = fragments.storyteller_state(fresh(scene))
        return re.search(r'<form id="([^"]+-roll)" data-keep', board).group(1)

    before = roll_form_id()
    scenes.scene_advance_clock(scene=fresh(scene), by=storyteller, seconds=60)
    assert roll_form_id() == before
    running.chase_set_course(chase=chase, by=storyteller, difficulty=7)
    assert roll_form_id() != before


@pytest.fixture
def bystander(scene, chronicle):
    """A player in the scene whose character is not in the chase."""
    from combat import services as scenes
    from tests.factories import CharacterFactory, UserFactory

    user = UserFactory(username="bystander")
    character = CharacterFactory(chronicle=chronicle, name="Bea", player=user)
    scenes.scene_join(code=scene.join_code, user=user, character=character)
    return user


@pytest.mark.parametrize(
    ("who", "roll", "maneuver"),
    [
        ("storyteller", 200, 409),  # runs the chase, but a player character chooses for itself
        ("player", 409, 200),  # Janet's player: the Prey's maneuver, never the round
        ("other_player", 409, 409),  # Cody's player: not his maneuver
        ("bystander", 409, 409),  # in the scene, not in the chase
        ("stranger", 404, 404),  # not in the scene at all
    ],
)
def test_each_role_does_only_what_it_may(
    who, roll, maneuver, request, scene, storyteller, janet, cody, bystander
):
    from tests.factories import UserFactory

    user = UserFactory(username="stranger") if who == "stranger" else request.getfixturevalue(who)
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[cody], prey=janet, start="escape", head_start=3
    )
    client = client_for(user)
    response = client.post(
        f"/chases/{chase.pk}/round/",
        {
            "token": token_of(chase),
            "key": "r1",
            "dice-prey": "9 2 2 2 2",
            f"dice-{key(cody)}": "2 2 2 2 2",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == roll
    if roll != 200:
        running.chase_round(
            chase=chase,
            by=storyteller,
            token=token_of(chase),
            dice={"prey": [9, 2, 2, 2, 2], key(cody): [2, 2, 2, 2, 2]},
        )
    chase.refresh_from_db()
    response = client.post(
        f"/chases/{chase.pk}/maneuver/",
        {
            "token": token_of(chase),
            "key": "m1",
            "pursuit": key(cody),
            "role": "prey",
            "maneuver": "bait",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == maneuver
    chase.refresh_from_db()
    assert (chase.phase == Phase.ROLL) == (maneuver == 200)


# K11: attacks from the tablet ----------------------------------------------------------------


def attack_post(client, chase, **fields):
    data = {
        "token": token_of(chase),
        "key": f"attack-{chase.step}",
        "means": "weapon",
        "cover": "near",
        **fields,
    }
    return client.post(f"/chases/{chase.pk}/attack/", data, HTTP_HX_REQUEST="true")


@pytest.mark.rules("K11", "D11", "D12")
def test_the_tablet_rolls_an_attack_with_typed_dice_and_every_phone_sees_it(
    scene, storyteller, janet, hound, player, other_player, cody
):
    from characters.selectors import current_values

    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    tablet = client_for(storyteller)
    board = tablet.get(f"/scenes/{scene.pk}/").content.decode()
    assert f'action="/chases/{chase.pk}/attack/"' in board
    response = attack_post(
        tablet,
        chase,
        attacker=key(hound),
        target="prey",
        pool="6",
        damage="3",
        dice_attack="9 9 9",
        dice_dodge="2 2 2 2 2",
        dice_damage="6 6 6 2 2",
        dice_soak="2 2",
    )
    assert response.status_code == 200
    assert "Hound attacks Janet" in response.content.decode()
    # 3 net: damage 3 + 2 = 5 dice: 3; a vampire soaks lethal with Stamina 2: none.
    assert current_values(janet.character)["damage"] == 3
    phone = client_for(other_player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Hound attacks Janet" in phone and "hits, 3 lethal" in phone
    assert "attacks</span>" in phone  # the attack's dice shown die by die, named


@pytest.mark.rules("K11")
def test_a_bad_attack_form_says_why_and_changes_nothing(scene, storyteller, janet, hound, player):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    tablet = client_for(storyteller)
    response = attack_post(
        tablet, chase, attacker=key(hound), target="prey", pool="6", damage="3", dice_attack="x"
    )
    assert response.status_code == 400 and "Nothing changed" in response.content.decode()
    response = attack_post(tablet, chase, attacker=key(hound), target="prey")
    assert response.status_code == 409 and "(K11)" in response.content.decode()
    response = attack_post(
        client_for(player), chase, attacker="prey", target=key(hound), pool="6", damage="3"
    )
    assert response.status_code == 409
    chase.refresh_from_db()
    assert not chase.steps.filter(kind="attack").exists()


@pytest.mark.rules("K7", "K8")
@pytest.mark.parametrize(
    ("pick", "status", "said"),
    [
        ("zzz", 400, "zzz is not one (K7, K8)"),  # not a part of a chase pool
        ("wits", 409, "Only In there! and Herd pick"),  # Bait takes no pick
    ],
)
def test_a_pick_on_a_maneuver_that_takes_none_is_refused_and_changes_nothing(
    pick, status, said, scene, storyteller, janet, hound, player
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [8, 9, 7, 2, 2], key(hound): [2, 3, 2, 2, 2, 2, 2]},
    )
    chase.refresh_from_db()
    before = (chase.step, chase.state, chase.phase, chase.pending)
    response = client_for(player).post(
        f"/chases/{chase.pk}/maneuver/",
        {
            "token": token_of(chase),
            "key": f"m-{pick}",
            "pursuit": key(hound),
            "role": "prey",
            "maneuver": "bait",
            "pick": pick,
        },
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == status, body
    assert said.replace("'", "&#x27;") in body
    chase.refresh_from_db()
    assert (chase.step, chase.state, chase.phase, chase.pending) == before


@pytest.mark.rules("K7")
def test_in_there_picks_a_part_of_the_chase_pool_from_the_phone(
    scene, storyteller, janet, hound, player
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [8, 9, 7, 2, 2], key(hound): [2, 3, 2, 2, 2, 2, 2]},
    )
    chase.refresh_from_db()
    response = client_for(player).post(
        f"/chases/{chase.pk}/maneuver/",
        {
            "token": token_of(chase),
            "key": "m-in",
            "pursuit": key(hound),
            "role": "prey",
            "maneuver": "in_there",
            "pick": "wits",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200, response.content.decode()
    chase.refresh_from_db()
    assert chase.state["course"]["pool"] == {"attribute": "wits", "ability": "athletics"}


# Runs and the crash-out endings on the phones (K9, K10) ----------------------------------------


def _roll_post(client, chase, prey_dice, predator_key, predator_dice):
    chase.refresh_from_db()
    return client.post(
        f"/chases/{chase.pk}/round/",
        {
            "token": token_of(chase),
            "key": f"roll-{chase.step}",
            "dice-prey": prey_dice,
            f"dice-{predator_key}": predator_dice,
        },
        HTTP_HX_REQUEST="true",
    )


@pytest.mark.rules("K10")
def test_the_preys_run_counts_down_on_every_phone_and_pens_it_in(
    scene, storyteller, janet, hound, player
):
    tablet = client_for(storyteller)
    assert start_post(tablet, scene, janet, hound, prey_run="2", head_start="5").status_code == 200
    chase = Chase.objects.get()
    assert chase.state["prey_run"] == 2
    phone = client_for(player)
    assert (
        "Janet's Run: 2 of 2 rounds left (K10)"
        in phone.get(f"/scenes/{scene.pk}/phone/").content.decode()
    )
    assert (
        _roll_post(tablet, chase, "9 2 2 2 2", key(hound), "9 2 2 2 2 2 2").status_code == 200
    )  # a tie
    assert "Janet's Run: 1 of 2 rounds left (K10)" in fragments.players_state(fresh(scene))
    board = _roll_post(
        tablet, chase, "2 2 2 2 2", key(hound), "2 2 2 2 2 2 2"
    )  # the Run's last round: a tie
    assert board.status_code == 200
    chase.refresh_from_db()
    assert chase.outcome == "caught" and chase.state["pursuits"][0]["lead"] == 0
    page = phone.get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Janet was caught by Hound" in page and "rounds left" not in page
    assert "Janet was caught by Hound" in fragments.players_state(fresh(scene))


@pytest.mark.rules("K10")
def test_the_predators_run_counts_down_on_its_track_and_the_prey_escapes(
    scene, storyteller, janet, hound, player
):
    tablet = client_for(storyteller)
    assert start_post(tablet, scene, janet, hound, predator_run="2").status_code == 200
    chase = Chase.objects.get()
    assert chase.state["pursuits"][0]["run"] == 2
    assert _roll_post(tablet, chase, "9 2 2 2 2", key(hound), "9 2 2 2 2 2 2").status_code == 200
    phone = client_for(player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Run: 1 of 2 rounds left (K10)" in phone
    assert _roll_post(tablet, chase, "2 2 2 2 2", key(hound), "2 2 2 2 2 2 2").status_code == 200
    chase.refresh_from_db()
    assert chase.outcome == "escaped"
    assert "Janet escaped" in fragments.players_state(fresh(scene))


@pytest.mark.rules("K9")
@pytest.mark.parametrize(
    ("prey_dice", "outcome", "said"),
    [
        ([9, 2, 2, 2, 2], "predator_out", "Every pursuer crashed out: Janet got away"),
        ([2, 2, 2, 2, 2], "both_out", "Everyone crashed out: the chase is over"),
    ],
)
def test_crashing_out_is_announced_on_every_phone(
    prey_dice, outcome, said, scene, storyteller, janet, hound, player, other_player, cody
):
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=4
    )
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="A wall",
        difficulty=6,
        pool=("dexterity", "athletics"),
        facing=["prey", key(hound)],
        token=token_of(chase),
    )
    chase.refresh_from_db()
    obstacles.chase_obstacle_roll(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": prey_dice, key(hound): [2, 2, 2, 2, 2, 2, 2]},
    )
    chase.refresh_from_db()
    assert chase.outcome == outcome
    s = fresh(scene)
    assert said in fragments.players_state(s)
    for user in (player, other_player):
        assert said in client_for(user).get(f"/scenes/{scene.pk}/phone/").content.decode()


def test_a_storyteller_playing_the_prey_maneuvers_from_the_phone(
    scene, storyteller, janet, hound, character
):
    """One way of telling the screens apart (combat.access.screen_for): the phone's forms say
    ``from=phone``; a storyteller who plays Janet gets the phone's private part back."""
    character.player = storyteller
    character.save(update_fields=["player"])
    chase = starting.start_chase(
        scene=scene, by=storyteller, predators=[hound], prey=janet, start="escape", head_start=3
    )
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [8, 9, 7, 2, 2], key(hound): [2] * 7},
    )
    chase.refresh_from_db()
    client = client_for(storyteller)
    phone = client.get(f"/scenes/{scene.pk}/phone/").content.decode()
    prompts = phone[phone.index('id="scene-private"') :]
    assert 'data-maneuver="gun_it"' in prompts
    chase_forms = re.findall(r'<form[^>]*action="/chases/.*?</form>', prompts, re.S)
    assert chase_forms and all('name="from" value="phone"' in f for f in chase_forms)
    response = client.post(
        f"/chases/{chase.pk}/maneuver/",
        {
            "token": token_of(chase),
            "key": "st-m1",
            "pursuit": key(hound),
            "role": "prey",
            "maneuver": "gun_it",
            "from": "phone",
        },
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200, body
    assert 'id="scene-private"' in body and 'id="scene-board"' not in body
