"""Issue 12 end to end in real browsers: the storyteller's tablet and two phones (separate
browser contexts, as separate people) run chases live.

1. A foot chase from an escape defense (D9, K4): Frank's attack in a wod_dice round meets
   Jane's escape, which survives and hands over to a chase; maneuvers, an obstacle passed by
   Damnit!, and the Prey escapes (K10).
2. Two Predators, each with its own Lead (K1): the Hound shoots Jane during the chase (K11,
   the damage on her sheet), and one Predator catches her.

The phones follow by pushes over /ws/scenes/<pk>/ (never a reload): every wait is on a
condition of the page.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser.threads import off_loop
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)
TABLET = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
PUSH = 8_000  # ms: a push reaches a phone well within this on a loaded machine
SHOTS = os.environ.get("CHASE_SHOTS")  # a folder: save screenshots there while developing


@dataclass
class Table:
    tablet: object
    phones: dict[str, object]
    contexts: list[object]
    scene_pk: int


def _shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def _log_in(page, live_url: str, username: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(f"{username}-pw")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")


def _table(browser, live_url: str, *, hound: bool = False) -> Table:
    """Jane and Frank's players join the storyteller's scene (Hound: a quick NPC)."""
    scene_pk = off_loop(lambda: _cast(hound))
    contexts = []
    tablet_context = browser.new_context(viewport=TABLET)
    contexts.append(tablet_context)
    tablet = tablet_context.new_page()
    _log_in(tablet, live_url, "st")
    tablet.goto(f"{live_url}/scenes/{scene_pk}/")
    phones = {}
    for name in ("jane", "frank"):
        context = browser.new_context(viewport=PHONE)
        contexts.append(context)
        phone = context.new_page()
        _log_in(phone, live_url, name)
        phone.goto(f"{live_url}/scenes/{scene_pk}/phone/")
        phones[name] = phone
    return Table(tablet, phones, contexts, scene_pk)


def _cast(hound: bool) -> int:
    from characters.models import Attribute
    from combat import services as scenes
    from tests.factories import AbilityFactory

    storyteller = StorytellerFactory(username="st", password="st-pw")
    chronicle = ChronicleFactory(name="Phoenix by Night", ruleset="wod_dice")
    chronicle.storytellers.add(storyteller)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scenes.scene_open(chronicle=chronicle, by=storyteller, name="Docks")
    for name, dexterity in (("jane", 3), ("frank", 2)):
        user = UserFactory(username=name, password=f"{name}-pw")
        character = CharacterFactory(chronicle=chronicle, player=user, name=name.capitalize())
        Attribute.objects.create(character=character, name="Dexterity", value=dexterity)
        AbilityFactory(character=character, name="Athletics", rating=2)
        scenes.scene_join(code=scene.join_code, user=user, character=character)
    if hound:
        scenes.scene_add_npc(
            scene=scene, by=storyteller, name="Hound", pools={"Dexterity": 4, "Athletics": 3}
        )
    return scene.pk


def _escape_in_a_round(scene_pk: int) -> int:
    """D9: a wod_dice round in which Jane declares an escape and Frank attacks her; the
    storyteller resolves Frank's attack with the table's dice (his 2 dice miss, her 5 hit)."""
    from combat.models import Participant, Scene
    from combat.rounds.declaring import combat_declare
    from combat.rounds.initiative import combat_begin_round, combat_initiative
    from combat.rounds.resolving import combat_resolve
    from combat.rounds.starting import combat_start

    scene = Scene.objects.select_related("storyteller").get(pk=scene_pk)
    st = scene.storyteller
    p = {x.name: x for x in Participant.objects.filter(scene=scene)}
    combat = combat_start(scene=scene, by=st, participants=[p["Jane"], p["Frank"]])
    combat_initiative(combat=combat, by=st, participant=p["Jane"], roll=1)
    combat_initiative(combat=combat, by=st, participant=p["Frank"], roll=10)
    combat_begin_round(combat=combat, by=st)
    combat_declare(combat=combat, by=st, participant=p["Jane"], action="escape")
    combat_declare(combat=combat, by=st, participant=p["Frank"], action="attack", target=p["Jane"])
    combat_resolve(
        combat=combat,
        by=st,
        participant=p["Frank"],
        attack_dice="2 3",
        defense_dice="8 8 9 9 10",
    )
    return combat.pk


def _damage_of(name: str) -> int:
    from characters.models import Character
    from characters.selectors import current_values

    return current_values(Character.objects.get(name=name))["damage"]


def _live(table: Table) -> None:
    from playwright.sync_api import expect

    for page in (table.tablet, *table.phones.values()):
        expect(page.locator("#scene-freshness")).to_contain_text("live", timeout=PUSH)


def _settle(tablet) -> None:
    """Wait until the tablet shows the scene's latest change (the board's highest
    ``data-seq`` reaches the scene's): no push of an earlier change is still on its way to
    replace, under the finger, a form about to be typed into."""
    from combat.models import Scene

    scene_pk = int(re.search(r"/scenes/(\d+)/", tablet.url).group(1))
    seq = off_loop(lambda: Scene.objects.get(pk=scene_pk).seq)
    tablet.wait_for_function(
        """(seq) => Math.max(0, ...[...document.querySelectorAll('#scene-board [data-seq]')]
          .map((e) => Number(e.dataset.seq))) >= seq""",
        arg=seq,
        timeout=PUSH,
    )


def _submit(tablet, button, path: str) -> None:
    """Tap a tablet button, then wait for its answer and for the pushes of the change."""
    with tablet.expect_response(lambda r: path in r.url and r.request.method == "POST"):
        button.click()
    _settle(tablet)


def _start(tablet, *, start: str, prey: str, predators: list[str], **fields: str) -> None:
    form = tablet.locator("#chase form[action$='/chase/start/']")
    form.locator("select[name=start]").select_option(start)
    form.locator("fieldset.prey").get_by_label(prey, exact=True).check()
    for name in predators:
        form.locator("fieldset.predators").get_by_label(name, exact=True).check()
    for name, value in fields.items():
        form.locator(f"[name={name}]").fill(value)
    _submit(tablet, form.get_by_role("button", name="Start the chase"), "/chase/start/")


def _roll(tablet, dice: dict[str, str], button: str = "Roll round") -> None:
    """Type the table's dice for each side (by name) and roll."""
    _settle(tablet)
    form = tablet.locator("#chase form.chase-roll")
    for name, faces in dice.items():
        form.locator(".roll-row", has_text=name).locator("input[name^=dice-]").fill(faces)
    _submit(tablet, form.get_by_role("button", name=button), "/chases/")


def _track(page, name: str):
    return page.locator("#chase-public .chase-track, #chase .chase-track").filter(has_text=name)


def test_a_foot_chase_from_an_escape_through_maneuvers_and_an_obstacle_ends_in_an_escape(
    live_url: str, browser
) -> None:
    from playwright.sync_api import expect

    from chases.models import Chase
    from combat import services as scenes
    from combat.models import Combat, Scene

    table = _table(browser, live_url)
    tablet, jane, frank = table.tablet, table.phones["jane"], table.phones["frank"]
    try:
        _live(table)
        # In a wod_dice round Frank attacks Jane, who escapes (D6): his 0 successes against
        # her 5 leave the escape 5 to spare; Frank's player elects to pursue and the
        # storyteller taps it: the chase starts with that head start (D9, K4).
        combat_pk = off_loop(lambda: _escape_in_a_round(table.scene_pk))
        pursue = tablet.locator("form.pursue-form")
        expect(pursue).to_contain_text("Does Frank pursue? (K4)", timeout=PUSH)
        _submit(tablet, pursue.get_by_role("button", name="Frank pursues Jane"), "/pursue")
        expect(tablet.locator("#chase .chase-turn")).to_have_text(
            "The storyteller rolls round 1.", timeout=PUSH
        )
        for phone in (jane, frank):
            expect(_track(phone, "Frank").locator(".lead")).to_have_text("5", timeout=PUSH)
            expect(phone.locator("#chase-prompts .chase-role")).to_be_visible(timeout=PUSH)
        expect(jane.locator("#chase-prompts .chase-role")).to_contain_text("you flee as the Prey")
        expect(frank.locator("#chase-prompts .chase-role")).to_contain_text("as a Predator")

        # A push while the storyteller types keeps what is typed (data-keep, stable id).
        dice = tablet.locator("#chase .roll-row", has_text="Jane").locator("input[name^=dice-]")
        dice.fill("9 9 8 8 7")
        scene = Scene.objects.select_related("storyteller").get(pk=table.scene_pk)
        off_loop(lambda: scenes.scene_advance_clock(scene=scene, by=scene.storyteller, seconds=60))
        expect(tablet.locator("#scene-clock")).to_have_text("1m 00s", timeout=PUSH)
        expect(dice).to_have_value("9 9 8 8 7")

        # Jane's 5 dice typed above, Frank's 4 (Dexterity 2 + Athletics 2): Jane 5, Frank 0,
        # Lead 5 + 5 = 10.
        _roll(tablet, {"Frank": "2 3 2 2"})
        expect(_track(jane, "Frank").locator(".lead")).to_have_text("10", timeout=PUSH)
        expect(jane.locator("#chase-public .die.hit")).to_have_count(5)
        prompt = jane.locator("#chase-prompts")
        expect(prompt).to_contain_text("Jane won the round", timeout=PUSH)
        expect(frank.locator("#chase-prompts")).not_to_contain_text("won the round")
        expect(frank.locator("#chase-public .chase-turn")).to_have_text("Jane chooses a maneuver.")
        _shot(jane, "1-jane-maneuvers")
        _shot(tablet, "1-tablet-maneuver")

        # Quick Reverse (−3 Lead): Frank faces an obstacle the storyteller sets.
        prompt.locator("button[data-maneuver=quick_reverse]").click()
        expect(_track(frank, "Frank").locator(".lead")).to_have_text("7", timeout=PUSH)
        obstacle = tablet.locator("#chase form[action$='/obstacle/']")
        expect(obstacle).to_contain_text("for Frank", timeout=PUSH)
        _settle(tablet)
        obstacle.locator("[name=label]").fill("A chain-link fence")
        obstacle.locator("[name=difficulty]").fill("7")
        _submit(tablet, obstacle.get_by_role("button", name="Set the obstacle"), "/obstacle/")

        # Frank's phone offers Damnit! (+3 Lead to the Prey); he takes it.
        damnit = frank.locator("#chase-prompts button[data-maneuver=damnit]")
        expect(damnit).to_be_visible(timeout=PUSH)
        expect(jane.locator("#chase-prompts button")).to_have_count(0)
        _shot(frank, "2-frank-damnit")
        damnit.click()
        expect(tablet.locator("#chase")).to_contain_text("Damnit!", timeout=PUSH)
        _settle(tablet)
        _submit(tablet, tablet.get_by_role("button", name="Roll the obstacle"), "/obstacle/roll/")
        for phone in (jane, frank):
            expect(_track(phone, "Frank").locator(".lead")).to_have_text("10", timeout=PUSH)

        # Round 2: Jane wins with a Lead of 10: she escapes (K10), on every phone.
        _roll(tablet, {"Jane": "8 7 2 2 2", "Frank": "6 2 2 2"})
        for page in (jane, frank):
            expect(page.locator("#chase-public .chase-ending")).to_have_text(
                "Jane escaped", timeout=PUSH
            )
        expect(tablet.locator("#chase .chase-ending")).to_have_text("Jane escaped")
        _shot(tablet, "3-tablet-escaped")
        _shot(frank, "3-frank-escaped")
        chase = Chase.objects.get()
        assert chase.outcome == "escaped" and chase.start == "escape"
        assert chase.origin["round_id"] == combat_pk  # and the fight's round (D13)
        assert Combat.objects.filter(pk=combat_pk).exists()
        assert list(chase.steps.values_list("kind", flat=True)) == [
            "start",
            "round",
            "maneuver",
            "obstacle_set",
            "maneuver",
            "obstacle",
            "round",
            "end",
        ]
    finally:
        for context in table.contexts:
            context.close()


def test_two_predators_each_with_its_own_lead_and_one_catches_the_prey(
    live_url: str, browser
) -> None:
    from playwright.sync_api import expect

    from chases.models import Chase

    table = _table(browser, live_url, hound=True)
    tablet, jane, frank = table.tablet, table.phones["jane"], table.phones["frank"]
    try:
        _live(table)
        # A cold start (K3): Jane's roll, typed in, has one success: a head start of 2 on each.
        _start(
            tablet, start="cold", prey="Jane", predators=["Frank", "Hound"], prey_dice="7 3 2 2 2"
        )
        for name in ("Frank", "Hound"):
            expect(_track(jane, name).locator(".lead")).to_have_text("2", timeout=PUSH)

        # Round 1: Jane 2 against Frank 0 (Lead 4), against the Hound's 3 (Lead 1).
        _roll(tablet, {"Jane": "8 8 2 2 2", "Frank": "2 2 2 2", "Hound": "8 8 8 2 2 2 2"})
        expect(_track(frank, "Frank").locator(".lead")).to_have_text("4", timeout=PUSH)
        expect(_track(frank, "Hound").locator(".lead")).to_have_text("1")
        prompt = jane.locator("#chase-prompts")
        expect(prompt).to_contain_text("against Frank", timeout=PUSH)
        # The Hound is an NPC: its maneuver is the storyteller's (Tail, +1 Lead to the Prey).
        step = prompt.locator("input[name=token]").first.input_value()
        _settle(tablet)
        _submit(
            tablet, tablet.locator("#chase .npc-maneuvers button[data-maneuver=tail]"), "/maneuver/"
        )
        expect(_track(jane, "Hound").locator(".lead")).to_have_text("2", timeout=PUSH)
        # Her prompt is her private part, a push of its own: tap it once it is the new step's.
        expect(prompt.locator("input[name=token]").first).not_to_have_value(step, timeout=PUSH)
        prompt.locator("button[data-maneuver=bait]").click()
        expect(_track(frank, "Frank").locator(".lead")).to_have_text("2", timeout=PUSH)
        expect(tablet.locator("#chase .chase-turn")).to_have_text(
            "The storyteller rolls round 2.", timeout=PUSH
        )

        # K11: with a Lead of 2 the Hound may attack. The storyteller rolls its claws as a
        # power (6 dice, split −3, D14): 3 successes against Jane's automatic dodge's 0;
        # damage 3 + 2 = 5 dice: 2 bashing, which Jane (Stamina 0, no armor) cannot soak.
        _settle(tablet)
        tablet.locator("#chase details.chase-more summary").click()
        attack = tablet.locator("#chase form.chase-attack")
        attack.locator("[name=attacker]").select_option(label="Hound")
        attack.locator("[name=target]").select_option(label="Jane")
        attack.locator("[name=means]").select_option("power")
        attack.locator("[name=pool]").fill("6")
        attack.locator("[name=damage]").fill("3")
        attack.locator("[name=damage_type]").select_option("bashing")
        attack.locator("[name=dice_attack]").fill("9 9 9")
        attack.locator("[name=dice_dodge]").fill("2 2 2 2 2")
        attack.locator("[name=dice_damage]").fill("6 6 2 2 2")
        _submit(tablet, attack.get_by_role("button", name="Attack"), "/attack/")
        for page in (jane, frank):
            expect(page.locator("#chase-public .chase-steps")).to_contain_text(
                "Hound attacks Jane", timeout=PUSH
            )
            expect(page.locator("#chase-public .chase-steps")).to_contain_text("hits, 2 bashing")
        _shot(jane, "4-jane-shot")
        _shot(tablet, "4-tablet-shot")
        jane_sheet = off_loop(lambda: _damage_of("Jane"))
        assert jane_sheet == 2

        # Round 2: the Hound's 3 against Jane's 0 takes its Lead to -1: caught (K1, K10).
        # Jane rolls 4 dice (Hurt, −1, D2), the Hound 4 (7 split −3 for its attack, D14).
        _roll(tablet, {"Jane": "2 2 2 2", "Frank": "2 2 2 2", "Hound": "9 9 9 2"})
        for page in (jane, frank):
            expect(page.locator("#chase-public .chase-ending")).to_have_text(
                "Jane was caught by Hound", timeout=PUSH
            )
        _shot(jane, "5-jane-caught")
        chase = Chase.objects.get()
        assert chase.outcome == "caught" and chase.start == "cold"
        leads = {p["predator"]: p["lead"] for p in chase.state["pursuits"]}
        assert sorted(leads.values()) == [-1, 2]
    finally:
        for context in table.contexts:
            context.close()
