"""K1: a group fleeing together is one Prey.

Decision: the group runs at its slowest member's pace (its chase and obstacle rolls use the
member with the smallest pool); any member may notice a stalker (the stalk's Perception +
Alertness uses the most alert member). Every member's player sees the chase as the Prey and
may choose the group's maneuver; the first choice counts.
"""

from __future__ import annotations

import pytest

from characters.models import Attribute
from characters.selectors import current_values
from chases import attacks, maneuvers, obstacles, running, selectors, starting
from chases.models import Chase, ChaseRoll, Phase, Side
from chases.refusals import ChaseError
from chases.tokens import token_of
from combat import services as scenes
from tests.chases.conftest import Dice, _sheet
from tests.conftest import client_for
from tests.factories import CharacterFactory, UserFactory

pytestmark = pytest.mark.django_db


def key(participant) -> str:
    return f"p{participant.pk}"


@pytest.fixture
def bob_player():
    return UserFactory(username="bob")


@pytest.fixture
def bob(scene, chronicle, bob_player):
    """Slower than Janet (Dexterity 2 + Athletics 1 = 3 against her 5) and less alert
    (Perception 1 against her Perception 2 + Alertness 1)."""
    bob = CharacterFactory(chronicle=chronicle, name="Bob", player=bob_player)
    _sheet(bob, dexterity=2, athletics=1, stamina=2, perception=1)
    return scenes.scene_join(code=scene.join_code, user=bob_player, character=bob)


def group_escape(scene, storyteller, prey, *predators, head_start=4) -> Chase:
    return starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=list(predators),
        prey=list(prey),
        start="escape",
        head_start=head_start,
    )


@pytest.mark.rules("K1")
def test_a_group_is_one_prey_named_together(scene, storyteller, janet, bob, hound):
    chase = group_escape(scene, storyteller, [janet, bob], hound)
    sides = {s.key: s.participant for s in Side.objects.filter(chase=chase, role="prey")}
    assert sides == {"prey": janet, f"prey-{key(bob)}": bob}
    assert len(chase.state["pursuits"]) == 1  # one Prey: one Lead per Predator
    assert selectors.names(chase, public=True)["prey"] == "Janet and Bob"
    assert Chase.objects.get(pk=chase.pk).prey.name == "Janet and Bob"
    assert "after Janet and Bob" in chase.steps.get(kind="start").text


@pytest.mark.rules("K1")
def test_unseen_members_of_a_group_are_counted_not_named(scene, storyteller, janet, hound):
    shades = [
        scenes.scene_add_npc(
            scene=scene, by=storyteller, name=name, pools={"Dexterity": 3}, hidden=True
        )
        for name in ("Shade", "Wisp")
    ]
    chase = group_escape(scene, storyteller, [janet, *shades], hound)
    assert selectors.names(chase, public=True)["prey"] == "Janet and 2 unseen quarries"
    assert selectors.names(chase, public=False)["prey"] == "Janet, Shade and Wisp"
    unseen = selectors.UNSEEN_PREY
    assert selectors.joined([unseen, unseen]) == "2 unseen quarries"
    assert selectors.joined(["Janet", unseen]) == "Janet and An unseen quarry"


@pytest.mark.rules("K1", "K6")
def test_the_group_rolls_at_its_slowest_members_pace(scene, storyteller, janet, bob, hound):
    chase = group_escape(scene, storyteller, [janet, bob], hound)
    participants = [s.participant for s in chase.sides.all()]
    rolling = {r["key"]: r for r in selectors.board_state(scene, participants)["rolling"]}
    assert rolling["prey"]["pool"].dice == 3 and rolling["prey"]["runner"] == "Bob"
    assert rolling["prey"]["name"] == "Janet and Bob"
    dice = Dice(9, 9, 9, *[2] * 7)  # Bob's 3 dice, then the Hound's 7
    running.chase_round(chase=chase, by=storyteller, token=token_of(chase), rng=dice)
    assert dice.faces == []
    prey_roll = ChaseRoll.objects.get(step__chase=chase, purpose="round", side__role="prey")
    assert (prey_roll.side.participant, prey_roll.pool) == (bob, 3)


@pytest.mark.rules("K1", "K3")
def test_a_cold_start_rolls_the_slowest_member(scene, storyteller, janet, bob, hound):
    dice = Dice(9, 9, 2)  # Bob's 3 dice at 6: 2 successes, head start 3
    chase = starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=[hound],
        prey=[janet, bob],
        start="cold",
        rng=dice,
    )
    assert dice.faces == []
    assert chase.state["pursuits"][0]["lead"] == 3
    assert ChaseRoll.objects.get(step__chase=chase).side.participant == bob


@pytest.mark.rules("K1", "K5")
def test_a_stalk_is_noticed_by_the_most_alert_member(scene, storyteller, janet, bob, cody):
    # Janet notices (Perception 2 + Alertness 1 = 3 dice: 2); Cody hides (Manipulation 2 +
    # Subterfuge 2 = 4 dice: 0): +2 dice to the group's chase roll, by Bob (3 + 2 = 5).
    # Cody rolls Dexterity 2 + Athletics 3 = 5 dice: 0. Head start 2.
    dice = Dice(9, 9, 2, *[2] * 4, 9, 9, 2, 2, 2, *[2] * 5)
    chase = starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=[cody],
        prey=[janet, bob],
        start="stalk",
        rng=dice,
    )
    assert dice.faces == []
    rolls = ChaseRoll.objects.filter(step__chase=chase, side__role="prey")
    assert {(r.purpose, r.side.participant.name, r.pool) for r in rolls} == {
        ("stalk", "Janet", 3),
        ("start", "Bob", 5),
    }
    assert chase.state["pursuits"][0]["lead"] == 2


@pytest.mark.rules("K1", "K7")
def test_every_members_player_sees_the_prey_and_one_choice_counts(
    scene, storyteller, janet, bob, cody, player, bob_player, other_player
):
    chase = group_escape(scene, storyteller, [janet, bob], cody)
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [9, 2, 2], key(cody): [2, 2, 2, 2, 2]},
    )
    chase.refresh_from_db()
    for user, other in ((player, "Bob"), (bob_player, "Janet")):
        phone = client_for(user).get(f"/scenes/{scene.pk}/phone/").content.decode()
        assert f"you flee as the Prey, with {other} (K1)" in phone
        assert "Janet and Bob won the round" in phone and 'data-maneuver="bait"' in phone
    cody_phone = client_for(other_player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "you chase Janet and Bob as a Predator" in cody_phone
    assert "won the round" not in cody_phone
    with pytest.raises(ChaseError, match="not your character"):
        maneuvers.chase_maneuver(
            chase=chase,
            by=other_player,
            pursuit=key(cody),
            role="prey",
            maneuver="bait",
            token=token_of(chase),
        )
    maneuvers.chase_maneuver(
        chase=chase,
        by=bob_player,
        pursuit=key(cody),
        role="prey",
        maneuver="bait",
        token=token_of(chase),
    )
    with pytest.raises(ChaseError, match="moved on"):
        maneuvers.chase_maneuver(
            chase=chase,
            by=player,
            pursuit=key(cody),
            role="prey",
            maneuver="gun_it",
            token=token_of(chase),
        )
    chase.refresh_from_db()
    assert chase.phase == Phase.ROLL and chase.steps.filter(kind="maneuver").count() == 1


@pytest.mark.rules("K1", "K9")
def test_the_group_faces_an_obstacle_with_its_slowest_member(scene, storyteller, janet, bob, hound):
    chase = group_escape(scene, storyteller, [janet, bob], hound)
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="A fence",
        difficulty=6,
        pool=("dexterity", "athletics"),
        facing=["prey"],
        token=token_of(chase),
    )
    chase.refresh_from_db()
    participants = [s.participant for s in chase.sides.all()]
    [facing] = selectors.board_state(scene, participants)["obstacle_rolling"]
    assert (facing["name"], facing["pool"].dice) == ("Janet and Bob", 3)
    dice = Dice(2, 2, 2)  # Bob's 3 dice fail: the Prey is out (K9)
    obstacles.chase_obstacle_roll(chase=chase, by=storyteller, token=token_of(chase), rng=dice)
    assert dice.faces == []
    chase.refresh_from_db()
    assert chase.outcome == "prey_out"


@pytest.mark.rules("K1", "K11")
def test_an_attack_hits_one_member_and_a_member_attacking_splits_the_groups_roll(
    scene, storyteller, janet, bob, hound
):
    Attribute.objects.create(character=janet.character, name="Wits", value=2)
    chase = group_escape(scene, storyteller, [janet, bob], hound, head_start=3)
    # The Hound (power 6 − 3 = 3 dice: 3) at Bob (dodge 3 dice: 0); damage 3 + 2 = 5: 2;
    # Bob soaks bashing with Stamina 2: 0.
    dice = Dice(9, 9, 9, 2, 2, 2, 6, 6, 2, 2, 2, 2, 2)
    attacks.chase_attack(
        chase=chase,
        by=storyteller,
        attacker=key(hound),
        target=f"prey-{key(bob)}",
        means="power",
        pool=6,
        damage=3,
        damage_type="bashing",
        token=token_of(chase),
        rng=dice,
    )
    assert dice.faces == []
    assert current_values(bob.character)["damage"] == 2
    assert current_values(janet.character)["damage"] == 0
    chase.refresh_from_db()
    attacks.chase_attack(
        chase=chase,
        by=storyteller,
        attacker="prey",
        target=key(hound),
        means="weapon",
        pool=4,
        damage=2,
        token=token_of(chase),
        rng=Dice(*[2] * 20),
    )
    chase.refresh_from_db()
    participants = [s.participant for s in chase.sides.all()]
    rolling = {r["key"]: r for r in selectors.board_state(scene, participants)["rolling"]}
    # Bob's pool 3 (no wound penalty on the met track yet) − 3 split: the group runs on 0.
    assert rolling["prey"]["pool"].dice == 0 and "split" in rolling["prey"]["pool"].text


@pytest.mark.rules("K1")
def test_one_side_each_and_a_prey_is_needed(scene, storyteller, janet, bob, hound):
    with pytest.raises(ChaseError) as refused:
        group_escape(scene, storyteller, [janet, bob], bob)
    assert refused.value.rule == "K1"
    with pytest.raises(ChaseError) as refused:
        group_escape(scene, storyteller, [], hound)
    assert refused.value.rule == "K1"
    assert not Chase.objects.exists()


@pytest.mark.rules("K1")
def test_the_tablet_starts_a_chase_for_a_group(scene, storyteller, janet, bob, hound, bob_player):
    tablet = client_for(storyteller)
    board = tablet.get(f"/scenes/{scene.pk}/").content.decode()
    assert "a group fleeing together" in board
    response = tablet.post(
        f"/scenes/{scene.pk}/chase/start/",
        {
            "key": "start-group",
            "start": "escape",
            "head_start": "4",
            "prey": [str(janet.pk), str(bob.pk)],
            "predators": [str(hound.pk)],
            "terrain": "foot",
            "difficulty": "6",
            "sprint_rounds": "6",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Chase: Janet and Bob" in response.content.decode()
    phone = client_for(bob_player).get(f"/scenes/{scene.pk}/phone/").content.decode()
    assert "Chase: Janet and Bob" in phone and "you flee as the Prey, with Janet" in phone
