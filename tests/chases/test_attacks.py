"""K11: attacks during a chase are rolled and land on the health track.

The attacker splits its pool (D14: the attack and its chase roll this round lose 3 dice
each), the target dodges without spending an action, a landed attack rolls damage (D11), the
target soaks (D12) and the rest goes through the ledger (a quick NPC's on the chase).
"""

from __future__ import annotations

import pytest

from characters.models import Attribute, LedgerEntry, LedgerKind
from characters.selectors import current_values
from characters.sheet_versions import bump_sheets
from chases import attacks, maneuvers, running, selectors, starting
from chases.models import Chase, ChaseRoll, ChaseStep, Phase, Side
from chases.refusals import ChaseError
from chases.tokens import token_of
from combat.models import Combat
from tests.chases.conftest import Dice
from tests.factories import AbilityFactory, EquipmentFactory

pytestmark = pytest.mark.django_db


def key(participant) -> str:
    """The participant's side key in its latest chase (a hidden NPC's is drawn at random)."""
    side = Side.objects.filter(participant=participant).order_by("-pk").first()
    return side.key if side else f"p{participant.pk}"


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


def attack(chase, by, attacker, target, *, rng=None, **extra) -> Chase:
    chase.refresh_from_db()
    return attacks.chase_attack(
        chase=chase,
        by=by,
        attacker=attacker,
        target=target,
        token=token_of(chase),
        rng=rng,
        **{"means": "weapon", **extra},
    )


def wits(participant, value: int = 2):
    """D14: a sheet splits into at most Wits actions."""
    Attribute.objects.create(character=participant.character, name="Wits", value=value)
    return participant


@pytest.fixture
def gunman(cody):
    """Cody with Wits 2, Firearms 3 and a pistol (4 lethal, range 20)."""
    wits(cody)
    AbilityFactory(character=cody.character, name="Firearms", rating=3)
    EquipmentFactory(
        character=cody.character,
        name="Pistol",
        kind="weapon",
        damage=4,
        damage_type="lethal",
        range=20,
    )
    return cody


@pytest.mark.rules("K11", "D14", "D8", "D11", "D12")
def test_a_shot_from_the_sheet_splits_the_pool_and_lands_through_the_ledger(
    scene, storyteller, janet, gunman
):
    chase = escape(scene, storyteller, janet, gunman, head_start=3)
    # Attack: Dexterity 2 + Firearms 3 − 3 (split) = 2 dice: 2 successes. Janet dodges
    # with Dexterity 3 + Athletics 2 = 5 dice at 6 (cover in reach): 1. One net success:
    # damage 4 + 0 = 4 dice: 3. Janet is a vampire: she soaks lethal with Stamina 2: 1.
    dice = Dice(8, 9, 2, 3, 4, 5, 9, 6, 7, 8, 2, 6, 2)
    attack(chase, storyteller, key(gunman), "prey", rng=dice)
    assert dice.faces == []
    rolls = {r.purpose: r for r in ChaseRoll.objects.filter(step__chase=chase)}
    assert (rolls["attack"].pool, rolls["attack"].successes) == (2, 2)
    assert (rolls["dodge"].pool, rolls["dodge"].difficulty) == (5, 6)
    assert (rolls["damage"].pool, rolls["damage"].successes) == (4, 3)
    assert (rolls["soak"].pool, rolls["soak"].successes) == (2, 1)
    assert current_values(janet.character)["damage"] == 2
    entry = LedgerEntry.objects.get(character=janet.character, kind=LedgerKind.HEALTH_DAMAGE)
    assert (entry.amount, entry.category, entry.source) == (2, "lethal", f"chase {chase.pk}")
    step = ChaseStep.objects.get(chase=chase, kind="attack")
    assert "hits, 2 lethal" in step.text and step.data["taken"] == 2
    assert "Pistol (Dexterity 2 + Firearms 3 − 3 split): 2 against" in step.text


@pytest.mark.rules("K11", "D14", "D2")
def test_the_attacker_splits_its_chase_roll_that_round_only(
    scene, chronicle, storyteller, janet, gunman
):
    chronicle.ruleset = "wod_dice"  # the D2 track: Hurt −1 from the 2nd level
    chronicle.save()
    chase = escape(scene, storyteller, janet, gunman, head_start=3)
    # 2 successes, no dodge: damage 4 + 1 = 5 dice: 2; soak 2 dice: 0.
    attack(chase, storyteller, key(gunman), "prey", rng=Dice(8, 9, *[2] * 5, 6, 6, 2, 2, 2, 2, 2))
    chase.refresh_from_db()
    participants = [s.participant for s in chase.sides.all()]
    rolling = {r["key"]: r["pool"] for r in selectors.board_state(scene, participants)["rolling"]}
    assert rolling[key(gunman)].dice == 2  # Dexterity 2 + Athletics 3 − 3 split
    assert "split" in rolling[key(gunman)].text
    # Janet took 2 lethal (Hurt, −1): her chase pool is 5 − 1 = 4.
    assert rolling["prey"].dice == 4
    running.chase_round(
        chase=chase, by=storyteller, token=token_of(chase), rng=Dice(2, 2, 2, 2, 9, 9)
    )
    pools = {
        r.side.key: r.pool for r in ChaseRoll.objects.filter(step__chase=chase, purpose="round")
    }
    assert pools == {"prey": 4, key(gunman): 2}
    chase.refresh_from_db()
    maneuvers.chase_maneuver(
        chase=chase,
        by=cody_player(gunman),
        pursuit=key(gunman),
        role="predator",
        maneuver=None,
        token=token_of(chase),
    )
    chase.refresh_from_db()
    rolling = {r["key"]: r["pool"] for r in selectors.board_state(scene, participants)["rolling"]}
    assert rolling[key(gunman)].dice == 5  # the next round is whole again


def cody_player(cody):
    return cody.character.player


@pytest.mark.rules("K11", "D12")
def test_a_power_rolls_the_storytellers_pool_and_the_target_soaks_bashing(
    scene, storyteller, janet, hound
):
    chase = escape(scene, storyteller, janet, hound, head_start=6)  # powers below 7
    # Power pool 6 − 3 = 3 dice: 3 successes; Janet's dodge: none. Damage 3 + 2 = 5 dice:
    # 4; soak Stamina 2 against bashing: 1. She takes 3 bashing.
    dice = Dice(7, 8, 9, 2, 3, 4, 5, 2, 6, 6, 6, 6, 2, 6, 3)
    attack(
        chase,
        storyteller,
        key(hound),
        "prey",
        rng=dice,
        means="power",
        pool=6,
        damage=3,
        damage_type="bashing",
    )
    assert dice.faces == []
    assert current_values(janet.character)["damage"] == 3
    soak = ChaseRoll.objects.get(step__chase=chase, purpose="soak")
    assert (soak.pool, soak.successes) == (2, 1)


@pytest.mark.rules("K11", "D8")
def test_a_dodge_that_matches_the_attack_negates_it(scene, storyteller, janet, hound):
    wits(janet)
    chase = escape(scene, storyteller, janet, hound, head_start=4)
    # Janet's 5 − 3 = 2 dice: 1 success; the Hound dodges with 7 dice: 1. Nothing lands.
    dice = Dice(6, 2, 6, 2, 2, 2, 2, 2, 2)
    attack(chase, storyteller, "prey", key(hound), rng=dice, pool=5, damage=3)
    assert dice.faces == []
    chase.refresh_from_db()
    assert chase.npc_damage == {}
    assert not ChaseRoll.objects.filter(step__chase=chase, purpose__in=["damage", "soak"]).exists()
    assert "does not land (D8)" in ChaseStep.objects.get(chase=chase, kind="attack").text


@pytest.mark.rules("K11", "D2")
def test_a_quick_npc_hit_is_kept_on_the_chase_and_on_the_fight_it_came_from(
    scene, storyteller, janet, hound
):
    wits(janet)
    combat = Combat.objects.create(scene=scene, ruleset="wod_dice")
    chase = escape(scene, storyteller, janet, hound, head_start=4, origin={"round_id": combat.pk})
    # 2 dice: 2; the Hound's dodge: 0; damage 3 + 1 = 4 dice: 3 (a 1 cancels nothing, D1).
    dice = Dice(9, 9, 2, 2, 2, 2, 2, 2, 2, 6, 6, 6, 1)
    attack(chase, storyteller, "prey", key(hound), rng=dice, pool=5, damage=3)
    assert dice.faces == []
    chase.refresh_from_db()
    combat.refresh_from_db()
    assert chase.npc_damage == {str(hound.pk): 3}
    assert combat.npc_damage == {str(hound.pk): 3}


@pytest.mark.rules("K11")
@pytest.mark.parametrize(
    ("head_start", "means", "allowed"),
    [(4, "weapon", True), (5, "weapon", False), (6, "power", True), (7, "power", False)],
)
def test_attacks_only_as_the_lead_allows(
    scene, storyteller, janet, hound, head_start, means, allowed
):
    chase = escape(scene, storyteller, janet, hound, head_start=head_start)
    step = chase.step
    shot = {"means": means, "pool": 4, "damage": 2, "rng": Dice(*[2] * 20)}
    if allowed:
        attack(chase, storyteller, key(hound), "prey", **shot)
        assert ChaseStep.objects.filter(chase=chase, kind="attack").exists()
    else:
        with pytest.raises(ChaseError) as refused:
            attack(chase, storyteller, key(hound), "prey", **shot)
        assert refused.value.rule == "K11"
        chase.refresh_from_db()
        assert chase.step == step and not ChaseRoll.objects.filter(step__chase=chase).exists()


@pytest.mark.rules("K11", "K8")
def test_attack_run_lets_a_predator_shoot_from_further_away(scene, storyteller, janet, gunman):
    chase = escape(scene, storyteller, janet, gunman, head_start=7)
    with pytest.raises(ChaseError) as refused:
        attack(chase, storyteller, key(gunman), "prey", rng=Dice(*[2] * 20))
    assert refused.value.rule == "K11"
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [2, 2, 2, 2, 2], key(gunman): [9, 2, 2, 2, 2]},
    )
    chase.refresh_from_db()  # Lead 6; Attack Run: 7, counted as 3 for Cody's attacks
    maneuvers.chase_maneuver(
        chase=chase,
        by=cody_player(gunman),
        pursuit=key(gunman),
        role="predator",
        maneuver="attack_run",
        token=token_of(chase),
    )
    attack(chase, storyteller, key(gunman), "prey", rng=Dice(*[2] * 20))
    assert ChaseStep.objects.filter(chase=chase, kind="attack").count() == 1
    # K8: until the end of the next round only; once it is rolled, the Lead 7 counts again.
    chase.refresh_from_db()
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={"prey": [2, 2, 2, 2, 2], key(gunman): [2, 2]},
    )
    chase.refresh_from_db()
    assert chase.state["pursuits"][0]["lead"] == 7 and chase.phase == Phase.ROLL
    step = chase.step
    with pytest.raises(ChaseError) as refused:
        attack(chase, storyteller, key(gunman), "prey", rng=Dice(*[2] * 20))
    assert refused.value.rule == "K11"
    chase.refresh_from_db()
    assert chase.step == step


@pytest.mark.rules("D14")
def test_one_attack_per_attacker_a_round_and_wits_allows_the_split(
    scene, storyteller, janet, gunman, hound
):
    chase = escape(scene, storyteller, janet, gunman, hound, head_start=3)
    attack(chase, storyteller, key(gunman), "prey", rng=Dice(*[2] * 20))
    with pytest.raises(ChaseError) as refused:
        attack(chase, storyteller, key(gunman), "prey", rng=Dice(*[2] * 20))
    assert refused.value.rule == "D14"
    # Another attacker still may.
    attack(chase, storyteller, key(hound), "prey", rng=Dice(*[2] * 20), pool=4, damage=2)
    # Janet has no Wits on her sheet: she cannot split into two actions (D14)...
    with pytest.raises(ChaseError) as refused:
        attack(chase, storyteller, "prey", key(gunman), rng=Dice(*[2] * 20), pool=4, damage=2)
    assert refused.value.rule == "D14"
    # ...with Wits 2 she shoots back at a Predator.
    wits(janet)
    attack(chase, storyteller, "prey", key(gunman), rng=Dice(*[2] * 20), pool=4, damage=2)
    assert ChaseStep.objects.filter(chase=chase, kind="attack").count() == 3


@pytest.mark.rules("D14")
def test_a_sheet_with_wits_1_cannot_split_to_attack(scene, storyteller, janet, gunman):
    Attribute.objects.filter(character=gunman.character, name="Wits").update(value=1)
    bump_sheets([gunman.character_id])  # a bulk write sends no signal
    chase = escape(scene, storyteller, janet, gunman, head_start=3)
    with pytest.raises(ChaseError) as refused:
        attack(chase, storyteller, key(gunman), "prey", rng=Dice(*[2] * 20))
    assert refused.value.rule == "D14"


@pytest.mark.rules("K11")
def test_refusals_name_their_rule_and_change_nothing(scene, storyteller, janet, cody, hound):
    wits(cody)
    chase = escape(scene, storyteller, janet, cody, hound, head_start=3)
    step = chase.step
    with pytest.raises(ChaseError) as refused:  # Cody has no gun on his sheet
        attack(chase, storyteller, key(cody), "prey")
    assert refused.value.rule == "K11" and "ranged weapon" in str(refused.value)
    with pytest.raises(ChaseError) as refused:  # two Predators do not fight here
        attack(chase, storyteller, key(cody), key(hound), pool=3, damage=2)
    assert refused.value.rule == "K11"
    with pytest.raises(ChaseError, match="Only the storyteller"):
        attack(chase, cody_player(cody), key(cody), "prey", pool=3, damage=2)
    running.chase_round(
        chase=chase,
        by=storyteller,
        token=token_of(chase),
        dice={
            "prey": [2, 2, 2, 2, 2],
            key(cody): [9, 2, 2, 2, 2],
            key(hound): [2, 2, 2, 2, 2, 2, 2],
        },
    )
    chase.refresh_from_db()
    assert chase.phase == Phase.MANEUVER
    with pytest.raises(ChaseError) as refused:  # between a round and its maneuvers
        attack(chase, storyteller, key(hound), "prey", pool=3, damage=2)
    assert refused.value.rule == "K11"
    assert not ChaseStep.objects.filter(chase=chase, kind="attack").exists()
    assert chase.step == step + 1


@pytest.mark.rules("K11")
def test_a_hidden_attackers_dice_are_not_shown_to_the_players(scene, storyteller, janet, lurker):
    chase = escape(scene, storyteller, janet, lurker, head_start=3)
    attack(chase, storyteller, key(lurker), "prey", rng=Dice(*[2] * 20), pool=5, damage=2)
    public = selectors.chase_state(scene, public=True)
    shown = {r["purpose"]: r for r in public["last_rolls"]}
    assert shown["attack"]["name"] == selectors.UNSEEN and shown["attack"]["dice"] == []
    assert "Lurker" not in public["steps"][0].text
    assert shown["dodge"]["dice"]  # Janet's own dodge is hers to see


@pytest.mark.rules("D1", "K11", "D11")
def test_typed_attack_dodge_and_damage_dice_must_be_their_pools(scene, storyteller, janet, hound):
    """D1: the Hound's power (6 dice, split −3: 3), Janet's dodge (Dexterity 3 + Athletics 2)
    and the damage (3 + 2 successes over one: 5 dice) are typed whole or refused, nothing
    rolled, logged or wounded."""
    chase = escape(scene, storyteller, janet, hound)
    shot = {"means": "power", "pool": 6, "damage": 3, "damage_type": "bashing"}
    with pytest.raises(ChaseError, match=r"Janet's dodge pool is 5 dice; 1 typed: .* \(D1\)"):
        attack(
            chase,
            storyteller,
            key(hound),
            "prey",
            dice={"attack": [9, 9, 9], "dodge": [2]},
            **shot,
        )
    with pytest.raises(ChaseError, match=r"Hound's damage pool is 5 dice; 1 typed: .* \(D1\)"):
        attack(
            chase,
            storyteller,
            key(hound),
            "prey",
            dice={"attack": [9, 9, 9], "dodge": [2] * 5, "damage": [6]},
            **shot,
        )
    assert not ChaseStep.objects.filter(chase=chase, kind="attack").exists()
    assert not ChaseRoll.objects.filter(step__chase=chase).exists()
    assert current_values(janet.character)["damage"] == 0
    attack(
        chase,
        storyteller,
        key(hound),
        "prey",
        dice={"attack": [9, 9, 9], "dodge": [2] * 5, "damage": [6, 6, 2, 2, 2], "soak": [2, 2]},
        **shot,
    )
    assert current_values(janet.character)["damage"] == 2
