"""Chase services: every start, rounds, maneuvers, obstacles, endings, and who may do what."""

from __future__ import annotations

import pytest

from chases import maneuvers, obstacles, running, starting
from chases.models import Chase, ChaseRoll, ChaseStep, Phase, Side
from chases.refusals import ChaseError
from chases.signals import chase_ended
from chases.tokens import token_of
from combat.models import SceneLogEntry
from tests.chases.conftest import Dice

pytestmark = pytest.mark.django_db


def key(participant) -> str:
    """The participant's side key in its latest chase (a hidden NPC's is drawn at random)."""
    side = Side.objects.filter(participant=participant).order_by("-pk").first()
    return side.key if side else f"p{participant.pk}"


@pytest.fixture
def ended(django_capture_on_commit_callbacks):
    """Every chase_ended sent, as (outcome, origin)."""
    heard: list[tuple[str, dict]] = []

    def receiver(sender, chase, outcome, origin, **kwargs):
        heard.append((outcome, origin))

    chase_ended.connect(receiver)
    yield heard
    chase_ended.disconnect(receiver)


def escape(scene, storyteller, prey, *predators, head_start=3, **extra) -> Chase:
    return starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=list(predators),
        prey=prey,
        start="escape",
        head_start=head_start,
        **extra,
    )


def lead(chase, predator) -> int:
    chase.refresh_from_db()
    return next(p["lead"] for p in chase.state["pursuits"] if p["predator"] == key(predator))


def round_(chase, by, prey_dice, **predator_dice):
    chase.refresh_from_db()
    dice = {"prey": prey_dice, **predator_dice}
    return running.chase_round(chase=chase, by=by, token=token_of(chase), dice=dice)


# Starts -----------------------------------------------------------------------------------


@pytest.mark.rules("K4", "D9")
def test_it_starts_from_an_escape_with_its_head_start(scene, storyteller, janet, hound, ended):
    seq = scene.seq
    chase = escape(scene, storyteller, janet, hound, head_start=3, origin={"round_id": 7})
    assert lead(chase, hound) == 3
    assert chase.phase == Phase.ROLL and chase.origin == {"round_id": 7}
    assert scene.seq > seq  # the caller's scene follows the new seq
    line = SceneLogEntry.objects.filter(scene=scene, kind="chase").last()
    assert line.public and "head start 3" in line.text and "Hound" in line.text
    assert ended == []


@pytest.mark.rules("K4")
def test_it_refuses_an_escape_without_a_head_start(scene, storyteller, janet, hound):
    with pytest.raises(ChaseError) as refused:
        escape(scene, storyteller, janet, hound, head_start=0)
    assert refused.value.rule == "K4" and "(K4)" in str(refused.value)
    assert not Chase.objects.exists()


@pytest.mark.rules("K3")
def test_a_cold_start_sets_the_head_start_from_the_preys_roll(scene, storyteller, janet, hound):
    chase = starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=[hound],
        prey=janet,
        start="cold",
        dice={"prey": [7, 9, 3, 2, 5]},
    )
    assert lead(chase, hound) == 3  # two successes at 6, + 1
    roll = ChaseRoll.objects.get(step__chase=chase)
    assert roll.pool == 5 and roll.difficulty == 6 and roll.typed and roll.successes == 2


@pytest.mark.rules("K3", "K10")
def test_a_botched_cold_start_is_a_catch_announced_on_commit(
    scene, storyteller, janet, hound, ended, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        chase = starting.start_chase(
            scene=scene,
            by=storyteller,
            predators=[hound],
            prey=janet,
            start="cold",
            rng=Dice(1, 3, 4, 2, 5),
            origin={"round_id": 3},
        )
    assert chase.outcome == "caught" and chase.phase == Phase.OVER and chase.ended_at
    assert ended == [("caught", {"round_id": 3})]
    assert SceneLogEntry.objects.filter(text__startswith="Chase over: Janet was caught").exists()


@pytest.mark.rules("K5")
def test_stalk_and_pounce_adds_the_preys_spare_successes_to_its_pool(
    scene, storyteller, janet, cody
):
    chase = starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=[cody],
        prey=janet,
        start="stalk",
        dice={
            "prey_stalk": [8, 9, 7],  # Perception + Alertness: 3
            f"predator_stalk:{cody.pk}": [8, 2, 3, 4],  # Manipulation + Subterfuge: 1
            f"predator:{cody.pk}": [6, 2, 3, 4, 5],  # 1 success
        },
        rng=Dice(6, 7, 8, 9, 2, 3, 4),  # the Prey's pool: 5 + 2 stalk dice, 4 successes
    )
    assert lead(chase, cody) == 3
    prey_roll = ChaseRoll.objects.get(step__chase=chase, purpose="start", side__role="prey")
    assert prey_roll.pool == 7 and not prey_roll.typed


@pytest.mark.rules("K5")
def test_a_pounce_that_lands_ends_the_chase_at_once(scene, storyteller, janet, cody):
    chase = starting.start_chase(
        scene=scene,
        by=storyteller,
        predators=[cody],
        prey=janet,
        start="stalk",
        dice={
            "prey_stalk": [2, 2, 2],
            f"predator_stalk:{cody.pk}": [9, 2, 2, 2],
            "prey": [2, 3, 2, 2, 2],
            f"predator:{cody.pk}": [9, 9, 2, 2, 2],
        },
    )
    assert chase.outcome == "caught"


def test_only_the_storyteller_starts_a_chase_unless_a_pursuer_elects_to(
    scene, storyteller, janet, cody, player, other_player
):
    with pytest.raises(ChaseError, match="Only the storyteller"):
        starting.start_chase(
            scene=scene,
            by=player,
            predators=[cody],
            prey=janet,
            start="cold",
            dice={"prey": [9, 2, 2, 2, 2]},
        )
    # K4: from an escape, the attacker (Cody's player) elects to pursue.
    chase = escape(scene, other_player, janet, cody, head_start=2)
    assert lead(chase, cody) == 2


def test_one_chase_at_a_time_and_a_double_tap_starts_one(scene, storyteller, janet, hound):
    first = escape(scene, storyteller, janet, hound, key="start-1")
    again = escape(scene, storyteller, janet, hound, key="start-1")
    assert first.pk == again.pk
    with pytest.raises(ChaseError, match="already running"):
        escape(scene, storyteller, janet, hound)


# Rounds, maneuvers, who acts --------------------------------------------------------------


@pytest.mark.rules("K6", "K7", "K12")
def test_the_prey_wins_a_round_and_only_its_player_picks_a_maneuver(
    scene, storyteller, janet, hound, player, other_player
):
    chase = escape(scene, storyteller, janet, hound, head_start=3)
    clock = scene.game_time
    round_(chase, storyteller, [8, 9, 7, 2, 2], **{key(hound): [2, 3, 2, 2, 2, 2, 2]})
    assert lead(chase, hound) == 6 and chase.phase == Phase.MANEUVER
    scene.refresh_from_db()
    assert scene.game_time == clock + 15
    step = chase.step
    with pytest.raises(ChaseError, match="not your character"):
        maneuvers.chase_maneuver(
            chase=chase, by=other_player, pursuit=key(hound), role="prey", maneuver="bait"
        )
    with pytest.raises(ChaseError, match="Only the winner") as refused:
        maneuvers.chase_maneuver(
            chase=chase, by=storyteller, pursuit=key(hound), role="predator", maneuver="tail"
        )
    assert refused.value.rule == "K6"
    chase.refresh_from_db()
    assert chase.step == step
    maneuvers.chase_maneuver(
        chase=chase,
        by=player,
        pursuit=key(hound),
        role="prey",
        maneuver="gun_it",
        token=token_of(chase),
    )
    assert lead(chase, hound) == 4 and chase.phase == Phase.ROLL
    assert ChaseStep.objects.filter(chase=chase, kind="maneuver", text__contains="Gun it!").exists()


def test_only_the_storyteller_rolls_a_round(scene, storyteller, janet, hound, player):
    chase = escape(scene, storyteller, janet, hound)
    with pytest.raises(ChaseError, match="Only the storyteller"):
        round_(chase, player, [9, 2, 2, 2, 2], **{key(hound): [2, 2, 2, 2, 2, 2, 2]})


def test_a_stale_step_is_refused_and_a_double_tap_counts_once(scene, storyteller, janet, hound):
    chase = escape(scene, storyteller, janet, hound, head_start=3)
    dice = {"prey": [2, 2, 2, 2, 2], key(hound): [2, 2, 2, 2, 2, 2, 2]}
    running.chase_round(chase=chase, by=storyteller, token=token_of(chase), dice=dice, key="r1")
    step = Chase.objects.get(pk=chase.pk).step
    running.chase_round(chase=chase, by=storyteller, token=token_of(chase), dice=dice, key="r1")
    assert Chase.objects.get(pk=chase.pk).step == step
    with pytest.raises(ChaseError, match="moved on"):
        running.chase_round(chase=chase, by=storyteller, token=token_of(chase), dice=dice)


@pytest.mark.rules("K8")
def test_a_prey_maneuver_that_costs_the_whole_lead_is_refused(
    scene, storyteller, janet, hound, player
):
    chase = escape(scene, storyteller, janet, hound, head_start=1)
    round_(chase, storyteller, [8, 9, 2, 2, 2], **{key(hound): [2, 2, 2, 2, 2, 2, 2]})  # Lead 3
    with pytest.raises(ChaseError) as refused:
        maneuvers.chase_maneuver(
            chase=chase, by=player, pursuit=key(hound), role="prey", maneuver="quick_reverse"
        )
    assert refused.value.rule == "K8"
    assert lead(chase, hound) == 3


@pytest.mark.rules("K7", "K8")
def test_the_tablet_asks_for_the_pick_of_a_new_course(scene, storyteller, janet, hound):
    """The engine takes In there! and Herd without a pick (the course is left as it was);
    the service still asks for it, and a refused Herd changes nothing."""
    chase = escape(scene, storyteller, janet, hound)
    round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(hound): [9, 2, 2, 2, 2, 2, 2]})
    step = Chase.objects.get(pk=chase.pk).step
    with pytest.raises(ChaseError, match="Pick the part") as refused:
        maneuvers.chase_maneuver(
            chase=chase, by=storyteller, pursuit=key(hound), role="predator", maneuver="herd"
        )
    assert refused.value.rule == "K8"
    assert lead(chase, hound) == 2 and Chase.objects.get(pk=chase.pk).step == step
    maneuvers.chase_maneuver(
        chase=chase,
        by=storyteller,
        pursuit=key(hound),
        role="predator",
        maneuver="herd",
        pick="wits",
    )
    chase.refresh_from_db()
    assert lead(chase, hound) == 4 and chase.state["course"]["pool"]["attribute"] == "wits"


def test_the_storyteller_moves_on_without_a_maneuver(scene, storyteller, janet, hound):
    chase = escape(scene, storyteller, janet, hound)
    round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(hound): [9, 2, 2, 2, 2, 2, 2]})
    maneuvers.chase_maneuver(
        chase=chase, by=storyteller, pursuit=key(hound), role="predator", maneuver="head_off"
    )
    assert lead(chase, hound) == 2 + 4 and chase.phase == Phase.ROLL
    round_(chase, storyteller, [9, 2, 2, 2, 2], **{key(hound): [2, 2, 2, 2, 2, 2, 2]})
    maneuvers.chase_maneuver(
        chase=chase, by=storyteller, pursuit=key(hound), role="prey", maneuver=None
    )
    chase.refresh_from_db()
    assert chase.phase == Phase.ROLL


@pytest.mark.rules("K2")
def test_on_foot_the_pool_switches_to_stamina_after_the_chosen_rounds(
    scene, storyteller, janet, hound
):
    chase = escape(scene, storyteller, janet, hound, head_start=3, sprint_rounds=5)
    for _ in range(5):
        round_(chase, storyteller, [5, 2, 2, 2, 2], **{key(hound): [5, 2, 2, 2, 2, 2, 2]})
    chase.refresh_from_db()
    running.chase_round(chase=chase, by=storyteller, token=token_of(chase), rng=Dice(*[5] * 9))
    rolls = ChaseRoll.objects.filter(step__chase=chase, step__round=6)
    assert {r.side.role: r.pool for r in rolls} == {"prey": 4, "predator": 3}  # Stamina 2 + 2


# Obstacles -----------------------------------------------------------------------------------


@pytest.mark.rules("K7", "K9", "K8")
def test_quick_reverse_puts_the_predator_before_an_obstacle_it_may_damnit(
    scene, storyteller, janet, cody, player, other_player
):
    chase = escape(scene, storyteller, janet, cody, head_start=5)
    round_(chase, storyteller, [9, 9, 2, 2, 2], **{key(cody): [2, 2, 2, 2, 2]})  # Lead 7
    maneuvers.chase_maneuver(
        chase=chase, by=player, pursuit=key(cody), role="prey", maneuver="quick_reverse"
    )
    chase.refresh_from_db()
    assert chase.phase == Phase.OBSTACLE and chase.pending["obstacle"]["facing"] == [key(cody)]
    assert lead(chase, cody) == 4
    with pytest.raises(ChaseError, match="first"):
        obstacles.chase_obstacle_roll(chase=chase, by=storyteller)
    obstacles.chase_obstacle_set(
        chase=chase, by=storyteller, label="A fence", difficulty=7, pool=("dexterity", "athletics")
    )
    with pytest.raises(ChaseError, match="not your character"):
        obstacles.chase_obstacle_choice(chase=chase, by=player, who=key(cody))
    obstacles.chase_obstacle_choice(chase=chase, by=other_player, who=key(cody))
    obstacles.chase_obstacle_roll(chase=chase, by=storyteller)
    assert lead(chase, cody) == 7 and chase.phase == Phase.ROLL


@pytest.mark.rules("K9")
def test_a_failed_obstacle_puts_the_prey_out(scene, storyteller, janet, hound, ended):
    chase = escape(scene, storyteller, janet, hound, head_start=5)
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="Traffic",
        difficulty=8,
        pool=("dexterity", "athletics"),
        facing=["prey"],
    )
    obstacles.chase_obstacle_roll(chase=chase, by=storyteller, dice={"prey": [2, 3, 4, 2, 2]})
    chase.refresh_from_db()
    assert chase.outcome == "prey_out"


@pytest.mark.rules("K8")
def test_nope_is_refused_when_it_would_cost_the_whole_lead(
    scene, storyteller, janet, hound, player
):
    chase = escape(scene, storyteller, janet, hound, head_start=3)
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="Wall",
        difficulty=6,
        pool=("dexterity", "athletics"),
        facing=["prey"],
    )
    with pytest.raises(ChaseError) as refused:
        obstacles.chase_obstacle_choice(chase=chase, by=player, who="prey")
    assert refused.value.rule == "K8"


# Endings ----------------------------------------------------------------------------------


@pytest.mark.rules("K10")
def test_the_prey_escapes_by_winning_with_a_lead_of_ten(
    scene, storyteller, janet, hound, ended, django_capture_on_commit_callbacks
):
    chase = escape(scene, storyteller, janet, hound, head_start=10, origin={"round_id": 1})
    with django_capture_on_commit_callbacks(execute=True):
        round_(chase, storyteller, [9, 2, 2, 2, 2], **{key(hound): [2, 2, 2, 2, 2, 2, 2]})
    chase.refresh_from_db()
    assert chase.outcome == "escaped" and ended == [("escaped", {"round_id": 1})]


@pytest.mark.rules("K1", "K10")
def test_with_two_predators_either_catching_ends_the_chase(
    scene, storyteller, janet, hound, cody, ended, django_capture_on_commit_callbacks
):
    chase = escape(scene, storyteller, janet, hound, cody, head_start=2)
    with django_capture_on_commit_callbacks(execute=True):
        round_(
            chase,
            storyteller,
            [9, 2, 2, 2, 2],
            **{key(hound): [9, 9, 9, 2, 2, 2, 2], key(cody): [2, 2, 2, 2, 2]},
        )
    chase.refresh_from_db()
    assert chase.outcome == "caught" and lead(chase, cody) == 3
    assert ended == [("caught", {})]
    assert SceneLogEntry.objects.filter(text__contains="was caught").exists()


# Course and calling off --------------------------------------------------------------------------


@pytest.mark.rules("K6")
def test_the_course_difficulty_changes_between_rounds_only(scene, storyteller, janet, hound):
    chase = escape(scene, storyteller, janet, hound)
    running.chase_set_course(chase=chase, by=storyteller, difficulty=9)
    chase.refresh_from_db()
    assert chase.state["course"]["difficulty"] == 9
    round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(hound): [9, 2, 2, 2, 2, 2, 2]})
    with pytest.raises(ChaseError) as refused:
        running.chase_set_course(chase=chase, by=storyteller, difficulty=4)
    assert refused.value.rule == "K6"


def test_the_storyteller_calls_a_chase_off_and_may_start_another(
    scene, storyteller, janet, hound, player, ended, django_capture_on_commit_callbacks
):
    chase = escape(scene, storyteller, janet, hound, origin={"round_id": 2})
    with pytest.raises(ChaseError, match="Only the storyteller"):
        running.chase_call_off(chase=chase, by=player)
    with django_capture_on_commit_callbacks(execute=True):
        running.chase_call_off(chase=chase, by=storyteller, token=token_of(chase))
    chase.refresh_from_db()
    assert chase.outcome == "called_off" and ended == [("called_off", {"round_id": 2})]
    assert escape(scene, storyteller, janet, hound).pk != chase.pk


@pytest.mark.rules("K1", "D9")
def test_a_catch_is_handed_back_to_the_round_by_the_preys_name(
    scene, storyteller, janet, hound, django_capture_on_commit_callbacks
):
    from combat.models import Combat

    combat = Combat.objects.create(scene=scene, ruleset="wod_dice")
    chase = escape(scene, storyteller, janet, hound, head_start=1, origin={"round_id": combat.pk})
    with django_capture_on_commit_callbacks(execute=True):
        round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(hound): [9, 2, 2, 2, 2, 2, 2]})
    chase.refresh_from_db()
    combat.refresh_from_db()
    assert chase.outcome == "caught"
    assert combat.reminders[0]["text"].startswith("Janet was caught in the chase")


@pytest.mark.rules("K1", "D9")
def test_a_hidden_preys_catch_is_handed_back_without_its_name_reaching_the_players(
    scene, storyteller, hound, lurker, django_capture_on_commit_callbacks
):
    from combat.models import Combat

    combat = Combat.objects.create(scene=scene, ruleset="wod_dice")
    chase = escape(scene, storyteller, lurker, hound, head_start=1, origin={"round_id": combat.pk})
    with django_capture_on_commit_callbacks(execute=True):
        round_(chase, storyteller, [2, 2, 2, 2], **{key(hound): [9, 2, 2, 2, 2, 2, 2]})
    chase.refresh_from_db()
    combat.refresh_from_db()
    assert chase.outcome == "caught"
    assert combat.reminders[0]["text"].startswith("Lurker was caught in the chase")
    public = SceneLogEntry.objects.filter(scene=scene, public=True)
    assert public.filter(text__contains="Hound after An unseen quarry").exists()
    assert not public.filter(text__contains="Lurker").exists()
    handed = SceneLogEntry.objects.get(scene=scene, text__startswith="Lurker was caught")
    assert not handed.public  # the storyteller's alone, as a round's lines naming it are
    # K4: the Predator is back in the fight too, in a line of its own (D9).
    assert public.filter(text="Hound is back in the fight from the chase (K1)").exists()


@pytest.mark.rules("K1", "D9")
def test_a_catch_by_a_hidden_predator_names_only_the_prey(
    scene, storyteller, janet, lurker, django_capture_on_commit_callbacks
):
    from combat.models import Combat

    combat = Combat.objects.create(scene=scene, ruleset="wod_dice")
    chase = escape(scene, storyteller, janet, lurker, head_start=1, origin={"round_id": combat.pk})
    with django_capture_on_commit_callbacks(execute=True):
        round_(chase, storyteller, [2, 2, 2, 2, 2], **{key(lurker): [9, 2, 2, 2]})
    chase.refresh_from_db()
    assert chase.outcome == "caught"
    public = SceneLogEntry.objects.filter(scene=scene, public=True)
    assert public.filter(text__contains="An unseen pursuer after Janet").exists()
    assert public.filter(text__startswith="Janet was caught in the chase").exists()
    assert not public.filter(text__contains="Lurker").exists()


# Typed dice (D1) ----------------------------------------------------------------------------


def _unchanged(chase):
    chase.refresh_from_db()
    return (
        chase.step,
        chase.phase,
        chase.state,
        ChaseRoll.objects.filter(step__chase=chase).count(),
        SceneLogEntry.objects.filter(scene=chase.scene).count(),
    )


@pytest.mark.rules("D1", "K6")
def test_typed_dice_other_than_the_pool_are_refused_and_change_nothing(
    scene, storyteller, janet, hound
):
    """D1: the table's dice are the whole pool the tablet shows (Janet's Dexterity 3 +
    Athletics 2, or the storyteller's other pool, K2); a refusal names it and changes nothing,
    the idempotency key included."""
    chase = escape(scene, storyteller, janet, hound)
    before = _unchanged(chase)
    dice = {"prey": [8, 9, 7], key(hound): [2] * 7}
    with pytest.raises(ChaseError) as refused:
        running.chase_round(chase=chase, by=storyteller, token=token_of(chase), dice=dice, key="r1")
    assert str(refused.value) == (
        "Janet's chase pool is 5 dice; 3 typed: type 5 or leave it blank (D1)"
    )
    assert refused.value.rule == "D1"
    with pytest.raises(ChaseError, match=r"Hound's chase pool is 7 dice; 8 typed: .* \(D1\)"):
        running.chase_round(
            chase=chase,
            by=storyteller,
            token=token_of(chase),
            dice={"prey": [2] * 5, key(hound): [2] * 8},
        )
    assert _unchanged(chase) == before
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice=dice,
        pools={"prey": 3},
        key="r1",
    )
    assert lead(chase, hound) == 6  # 3 successes on the storyteller's 3-dice pool


@pytest.mark.rules("D1", "K3", "K9")
def test_typed_start_and_obstacle_dice_must_be_the_whole_pool(scene, storyteller, janet, hound):
    with pytest.raises(ChaseError, match=r"Janet's chase pool is 5 dice; 2 typed: .* \(D1\)"):
        starting.start_chase(
            scene=scene,
            by=storyteller,
            predators=[hound],
            prey=janet,
            start="cold",
            dice={"prey": [9, 9]},
        )
    assert not Chase.objects.exists()
    chase = escape(scene, storyteller, janet, hound, head_start=5)
    obstacles.chase_obstacle_set(
        chase=chase,
        by=storyteller,
        label="Traffic",
        difficulty=8,
        pool=("dexterity", "athletics"),
        facing=["prey"],
    )
    before = _unchanged(chase)
    with pytest.raises(ChaseError, match=r"Janet's pool is 5 dice; 1 typed: .* \(D1\)"):
        obstacles.chase_obstacle_roll(chase=chase, by=storyteller, dice={"prey": [9]})
    assert _unchanged(chase) == before
    obstacles.chase_obstacle_roll(chase=chase, by=storyteller, dice={"prey": [9, 2, 2, 2, 2]})
    chase.refresh_from_db()
    assert chase.phase == Phase.ROLL and not chase.outcome
