"""Issue 11 end to end in real browsers: a storyteller's tablet and three phones (separate
browser contexts) play a wod_dice round with a haste phase, a block, a grapple and damage with
soak, and a met_bns turn with a Celerity round and a fair escape; a phone reloads mid-round
and shows the same state. Every phone follows by the scene's pushes, never by a reload.
"""

from __future__ import annotations

import pytest

from characters.models import Attribute, Character
from combat import services as scene_services
from tests.browser.threads import off_loop
from tests.factories import (
    AbilityFactory,
    CharacterFactory,
    ChronicleFactory,
    EquipmentFactory,
    GameNightFactory,
    PowerFactory,
    StorytellerFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)
TABLET = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
PUSH = 8_000  # ms: how long a phone waits for a push before the test fails


def _log_in(page, live_url: str, username: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(f"{username}-pw")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")


def _sheet(character: Character, dots: dict[str, int], abilities: dict[str, int]) -> None:
    for name, value in dots.items():
        Attribute.objects.create(character=character, name=name, value=value)
    for name, rating in abilities.items():
        AbilityFactory(character=character, name=name, rating=rating)


def _wod_scene() -> int:
    st = StorytellerFactory(username="st", password="st-pw")
    chronicle = ChronicleFactory(name="Dice", ruleset="wod_dice")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scene_services.scene_open(chronicle=chronicle, by=st, name="Warehouse")
    sheets = {
        "jane": ("mortal", {"Dexterity": 4, "Wits": 4, "Strength": 2, "Stamina": 2}, {"Brawl": 2}),
        "frank": ("mage", {"Dexterity": 2, "Wits": 3, "Stamina": 2}, {"Athletics": 1}),
        "teddy": (
            "werewolf",
            {"Strength": 4, "Dexterity": 3, "Stamina": 4, "Wits": 3},
            {"Brawl": 4},
        ),
    }
    for name, (creature, dots, abilities) in sheets.items():
        user = UserFactory(username=name, password=f"{name}-pw")
        c = CharacterFactory(
            chronicle=chronicle, player=user, name=name.capitalize(), creature=creature, rage=3
        )
        _sheet(c, dots, abilities)
        scene_services.scene_join(code=scene.join_code, user=user, character=c)
    thug = CharacterFactory(chronicle=chronicle, name="Thug", player=None, npc=True)
    _sheet(thug, {"Strength": 3, "Dexterity": 2, "Wits": 2, "Stamina": 2}, {"Melee": 2})
    EquipmentFactory(character=thug, name="Club", kind="weapon", damage=2, damage_type="bashing")
    scene_services.scene_add_npc(scene=scene, by=st, character=thug)
    return scene.pk


def _open(browser, live_url: str, scene_pk: int, players: tuple[str, ...]):
    contexts, pages = {}, {}
    for name in ("st", *players):
        context = browser.new_context(viewport=TABLET if name == "st" else PHONE)
        page = context.new_page()
        _log_in(page, live_url, name)
        page.goto(f"{live_url}/scenes/{scene_pk}/" + ("" if name == "st" else "phone/"))
        contexts[name], pages[name] = context, page
    return contexts, pages


def _live(pages) -> None:
    from playwright.sync_api import expect

    for page in pages.values():
        expect(page.locator("#scene-freshness")).to_contain_text("live", timeout=PUSH)


def _declare(phone, action: str, target: str | None = None, **extra: str) -> None:
    form = phone.locator("#round-prompts form.declare-form")
    form.locator("select[name=action]").select_option(action)
    if target:
        form.locator("select[name=target]").select_option(label=target)
    for name, value in extra.items():
        form.locator(f"[name={name}]").fill(value)
    form.get_by_role("button", name="Declare").click()


def _resolve(tablet, who: str, **dice: str) -> None:
    form = tablet.locator(f"form.resolve-form[data-who='{who}']")
    for label, value in dice.items():
        form.get_by_label(label.replace("_", " ")).fill(value)
    form.locator("button[type=submit]").click()


def test_a_push_while_the_storyteller_types_keeps_the_digits_and_the_focus(
    live_url: str, browser
) -> None:
    """A player's initiative pushed while the storyteller types the NPC's die redraws the board:
    what was typed stays, and so does the focus, so the next keystroke lands in the same field.
    What was typed in a form the push took away (the player's own die came first) is said."""
    from playwright.sync_api import expect

    scene_pk = off_loop(_wod_scene)
    contexts, pages = _open(browser, live_url, scene_pk, ("jane",))
    tablet, jane = pages["st"], pages["jane"]
    try:
        _live(pages)
        tablet.get_by_text("Start a fight").click()
        tablet.get_by_role("button", name="Combat! Roll initiative").click()
        tablet.get_by_label("Initiative die of Jane").fill("7")
        field = tablet.get_by_label("Initiative die of Thug")
        field.click()
        tablet.keyboard.type("1")
        expect(jane.locator("#round-prompts")).to_contain_text("Roll initiative", timeout=PUSH)
        # Jane's answer is held back until her own push has redrawn her phone: the form she
        # sent is gone before its answer comes, and it is no "not sent" for all that.
        answers = []
        jane.route("**/combat/initiative/", lambda route: answers.append((route, route.fetch())))
        jane.get_by_label("or the die I rolled").fill("5")
        jane.get_by_role("button", name="Send").click()
        expect(tablet.locator("#combat .initiative")).to_contain_text("Jane 13", timeout=PUSH)
        expect(jane.locator("#round-prompts")).not_to_contain_text("Roll initiative", timeout=PUSH)
        while not answers:  # the handler's fetch may still be reading the answer
            jane.wait_for_timeout(20)
        route, answer = answers[0]
        route.fulfill(response=answer)
        jane.unroute("**/combat/initiative/")
        expect(tablet.locator("#scene-notices")).to_contain_text(
            "Not sent, the scene moved on: what you typed in “Initiative die of Jane”"
        )
        tablet.keyboard.type("0")
        expect(field).to_have_value("10")
        expect(field).to_be_focused()
        tablet.keyboard.press("Enter")
        expect(tablet.locator("#combat .initiative")).to_contain_text("Thug 14", timeout=PUSH)
        expect(tablet.locator("#combat .initiative")).to_contain_text("die 10, typed")
        # A form nobody typed in (its selects as drawn) that a push takes away says nothing:
        # the storyteller passes over Jane while her declare form waits untouched (Frank's and
        # Teddy's players are not at the table: out of this fight).
        for name in ("Frank", "Teddy"):
            tablet.get_by_role("button", name=f"Take {name} out of the fight").click()
            expect(tablet.locator("#combat .initiative")).to_contain_text(
                "out of the fight", timeout=PUSH
            )
        expect(tablet.get_by_role("button", name="Bring Teddy back into the fight")).to_be_visible()
        tablet.get_by_role("button", name="Start the round").click()
        expect(tablet.locator("#combat")).to_contain_text("Waiting on Jane", timeout=PUSH)
        expect(jane.locator("#round-prompts form.declare-form")).to_be_visible(timeout=PUSH)
        tablet.get_by_role("button", name="Pass over Jane").first.click()
        expect(jane.locator("#round-prompts")).to_contain_text(
            "Jane declared: Nothing", timeout=PUSH
        )
        expect(jane.locator("#scene-notices li")).to_have_count(0)  # nor after her sent die
    finally:
        for context in contexts.values():
            context.close()


def test_a_wod_dice_round_with_haste_block_grapple_and_soaked_damage(
    live_url: str, browser
) -> None:
    from playwright.sync_api import expect

    scene_pk = off_loop(_wod_scene)
    contexts, pages = _open(browser, live_url, scene_pk, ("jane", "frank", "teddy"))
    tablet, jane, frank, teddy = (pages[n] for n in ("st", "jane", "frank", "teddy"))
    try:
        _live(pages)
        tablet.get_by_text("Start a fight").click()
        tablet.get_by_role("button", name="Combat! Roll initiative").click()
        # D3: each phone types the die it rolled by hand; the storyteller sets the NPC's.
        for phone, die in ((jane, "5"), (frank, "1"), (teddy, "4")):
            expect(phone.locator("#round-prompts")).to_contain_text("Roll initiative", timeout=PUSH)
            phone.get_by_label("or the die I rolled").fill(die)
            phone.get_by_role("button", name="Send").click()
        # The phones' pushes all in before the storyteller types: one landing mid-tap would
        # redraw the form under the click (typing through a push: its own test below).
        for who in ("Frank 6", "Teddy 10", "Jane 13"):
            expect(tablet.locator("#combat .initiative")).to_contain_text(who, timeout=PUSH)
        tablet.get_by_label("Initiative die of Thug").fill("3")
        tablet.get_by_role("button", name="Set Thug's initiative").click()
        for who in ("Frank 6", "Thug 7", "Teddy 10", "Jane 13"):
            expect(tablet.locator("#combat .initiative")).to_contain_text(who, timeout=PUSH)
        tablet.get_by_role("button", name="Start the round").click()

        # Main Phase, slowest first: Frank 6, Thug 7, Teddy 10, Jane 13.
        expect(frank.locator("#round-prompts")).to_contain_text("Declare now: Frank", timeout=PUSH)
        expect(teddy.locator("#scene-public")).to_contain_text("Now Frank")
        # D14: Frank (Wits 3) splits: a dodge and an attack on the Thug, each 3 dice down.
        frank.locator("#round-prompts form.declare-form").get_by_text(
            "Split into more actions"
        ).click()  # folded until asked for
        split = frank.locator("#round-prompts form.declare-form select[name=also]")
        expect(split).to_have_count(2)
        split.first.select_option(label="+ attack on Thug")
        _declare(frank, "dodge")
        expect(tablet.locator("#combat")).to_contain_text("Waiting on Thug", timeout=PUSH)
        expect(tablet.locator("#combat .order")).to_contain_text(
            "Dodge, + attack on Thug (split in 2)"
        )
        expect(teddy.locator("#round-prompts")).to_contain_text("You're next: Teddy")
        waiting = tablet.locator("#combat .waiting form.declare-form")
        waiting.locator("select[name=action]").select_option("attack")
        waiting.locator("select[name=target]").select_option(label="Jane")
        waiting.locator("input[name=weapon]").fill("Club")
        waiting.get_by_role("button", name="Declare for Thug").click()
        expect(jane.locator("#scene-public")).to_contain_text("Attack on Jane", timeout=PUSH)
        expect(teddy.locator("#round-prompts")).to_contain_text("Declare now", timeout=PUSH)
        # A push while Teddy picks (the storyteller pauses, then resumes the round) re-renders
        # his prompts but keeps his half-filled form (data-keep, an id per round state).
        form = teddy.locator("#round-prompts form.declare-form")
        form.locator("select[name=action]").select_option("grapple")
        form.locator("select[name=target]").select_option(label="Thug")
        controls = tablet.locator("#combat")
        controls.get_by_role("button", name="Pause", exact=True).click()
        expect(teddy.locator("#round-prompts")).to_contain_text("paused", timeout=PUSH)
        controls.get_by_role("button", name="Resume", exact=True).click()
        expect(teddy.locator("#round-prompts")).not_to_contain_text("paused", timeout=PUSH)
        expect(form.locator("select[name=action]")).to_have_value("grapple")
        expect(form.locator("select[name=target] option:checked")).to_have_text("Thug")
        form.locator("summary", has_text="Haste actions").click()  # folded until asked for
        form.locator("[name=haste]").fill("1")
        form.get_by_role("button", name="Declare").click()
        expect(jane.locator("#round-prompts")).to_contain_text("Declare now", timeout=PUSH)
        _declare(jane, "block")

        # A phone reloads mid-round and shows the same state it was pushed.
        expect(frank.locator("#scene-public")).to_contain_text("Block", timeout=PUSH)
        before = frank.locator("#scene-public").inner_text(), frank.locator("#prompts").inner_text()
        frank.reload()
        after = frank.locator("#scene-public").inner_text(), frank.locator("#prompts").inner_text()
        assert before == after

        # Resolution, fastest first, on the tablet with the table's dice typed in.
        expect(tablet.locator("#combat")).to_contain_text("Resolve Jane", timeout=PUSH)
        _resolve(tablet, "Jane")
        # Strength 4 + Brawl 4 = 8 dice, 3 successes; the Thug attacks Jane: no defense.
        _resolve(tablet, "Teddy", attack_dice="8 9 10 2 2 2 2 2")
        expect(teddy.locator("#scene-public .grapple-track")).to_contain_text(
            "Control 3", timeout=PUSH
        )
        # Club 4 dice, 4 successes; Jane's block 6 dice, 1 (D8); damage 3 + 2 + 2 = 7 dice, 5
        # successes; soak Stamina 2, none (D12): 5 bashing on Jane's track.
        _resolve(
            tablet,
            "Thug",
            attack_dice="8 8 8 8",
            defense_dice="9 2 2 2 2 2",
            damage_dice="7 7 7 7 7 2 2",
            soak_dice="1 3",
        )
        expect(tablet.locator("#scene-log")).to_contain_text(
            "Thug hits Jane (3 net), 5 bashing", timeout=PUSH
        )
        expect(jane.locator(".health .count")).to_have_text("5 / 7", timeout=PUSH)
        expect(tablet.locator("form.resolve-form[data-who='Frank']")).to_contain_text(
            "Resolve Frank: Attack on Thug (split in 2)", timeout=PUSH
        )
        _resolve(tablet, "Frank")

        # Haste phase 1: only Teddy declares and resolves; he holds the grapple.
        expect(teddy.locator("#round-prompts")).to_contain_text("Declare now", timeout=PUSH)
        expect(jane.locator("#scene-public")).to_contain_text("Haste 1")
        _declare(teddy, "sustain")
        # Teddy's 8 dice, 2 successes, against the Thug's Strength 3 + Brawl 0: none.
        _resolve(tablet, "Teddy", attack_dice="8 8 2 2 2 2 2 2", defense_dice="3 2 2")
        expect(frank.locator("#scene-public .grapple-track")).to_contain_text(
            "Control 5", timeout=PUSH
        )

        tablet.get_by_role("button", name="Book keeping (+15 s)").click()
        expect(jane.locator("#phone-clock")).to_have_text("15s", timeout=PUSH)
        tablet.get_by_role("button", name="Next round").click()
        expect(jane.locator("#round-prompts")).to_contain_text("Roll initiative", timeout=PUSH)
        expect(jane.locator("#scene-public")).to_contain_text("Round 2")
        # The engine, the log and the health track agree.
        from characters.selectors import current_values

        assert current_values(Character.objects.get(name="Jane"))["damage"] == 5
        expect(tablet.locator("#scene-log")).to_contain_text("Thug hits Jane (3 net), 5 bashing")
    finally:
        for context in contexts.values():
            context.close()


def _bns_scene() -> int:
    st = StorytellerFactory(username="st", password="st-pw")
    chronicle = ChronicleFactory(name="Pools", ruleset="met_bns")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scene_services.scene_open(chronicle=chronicle, by=st, name="Docks")
    for name, (phys, ment, soc, cel) in {
        "ana": (8, 6, 5, 2),
        "bo": (5, 7, 4, 0),
        "cy": (6, 6, 3, 0),
    }.items():
        user = UserFactory(username=name, password=f"{name}-pw")
        c = CharacterFactory(chronicle=chronicle, player=user, name=name.capitalize())
        for attr, value in (("Physical", phys), ("Mental", ment), ("Social", soc)):
            Attribute.objects.create(character=c, name=attr, value=value)
        if cel:
            PowerFactory(character=c, name="Celerity", level=cel)
        scene_services.scene_join(code=scene.join_code, user=user, character=c)
    return scene.pk


def _play_out(attacker, defender, name: str, health: str) -> None:
    """The challenge an attack opened, on the two phones: the defender answers with Physical,
    rock beats scissors, the defender takes the result and the damage (B3)."""
    from playwright.sync_api import expect

    card = defender.locator("#challenge-prompts")
    expect(card).to_contain_text("Nothing to bid", timeout=PUSH)
    card.locator("form.cc-answer").get_by_label("Attribute").select_option("Physical")
    card.locator("form.cc-answer").get_by_role("button", name="Bid").click()
    mine = attacker.locator("#challenge-prompts")
    expect(mine).to_contain_text("to throw", timeout=PUSH)
    mine.get_by_role("button", name="Rock", exact=True).click()
    expect(card).to_contain_text("locked in", timeout=PUSH)
    card.get_by_role("button", name="Scissors", exact=True).click()
    expect(card.get_by_role("button", name="Take the result")).to_be_visible(timeout=PUSH)
    card.get_by_role("button", name="Take the result").click()
    expect(card).to_contain_text(f"{name} takes 1 damage (B3)", timeout=PUSH)
    expect(defender.locator("#scene-private")).to_contain_text(f"Health {health}", timeout=PUSH)


def test_a_met_bns_turn_with_a_celerity_round_and_a_fair_escape(live_url: str, browser) -> None:
    from playwright.sync_api import expect

    scene_pk = off_loop(_bns_scene)
    contexts, pages = _open(browser, live_url, scene_pk, ("ana", "bo", "cy"))
    tablet, ana, bo, cy = (pages[n] for n in ("st", "ana", "bo", "cy"))
    try:
        _live(pages)
        tablet.get_by_text("Start a fight").click()
        tablet.get_by_role("button", name="Start the conflict").click()
        tablet.get_by_role("button", name="No agreement: freeze the scene").click()
        expect(ana.locator("#scene-public")).to_contain_text("frozen", timeout=PUSH)
        ana.get_by_label("Celerity rounds (kept until changed)").select_option("1")
        ana.get_by_role("button", name="Set").click()
        tablet.get_by_role("button", name="Order of action").click()

        # B4: Ana 8, Bo 7, Cy 6.
        expect(ana.locator("#round-prompts")).to_contain_text("Act now: Ana", timeout=PUSH)
        expect(bo.locator("#round-prompts")).to_contain_text("You're next: Bo")
        ana.locator("#round-prompts").get_by_label("Standard action").select_option("attack")
        ana.locator("#round-prompts select[name=target]").select_option(label="Cy")
        ana.locator("#round-prompts").get_by_label("Attribute").select_option("Physical")
        ana.get_by_role("button", name="Act", exact=True).click()
        expect(cy.locator("#scene-public")).to_contain_text("Attack", timeout=PUSH)

        # B1-B3: the attack is a met_bns challenge on both phones: Cy answers with her pool,
        # both throw, Ana wins and Cy's health track takes the damage.
        _play_out(ana, cy, "Cy", "1 / 4")

        # B9: Bo tries a fair escape; Cy, yet to act, intends to attack; on hold.
        expect(bo.locator("#round-prompts")).to_contain_text("Act now: Bo", timeout=PUSH)
        bo.get_by_role("button", name="Fair escape").click()
        cy.get_by_role("button", name="I intend to attack Bo").click(timeout=PUSH)
        expect(tablet.locator("#combat")).to_contain_text("Intents to attack: Cy", timeout=PUSH)
        tablet.get_by_role("button", name="Close the intents (B9)").click()
        expect(ana.locator("#scene-public")).to_contain_text("escape on hold", timeout=PUSH)
        expect(cy.locator("#round-prompts")).to_contain_text("Act now: Cy", timeout=PUSH)
        cy.locator("#round-prompts").get_by_label("Simple action").select_option("move")
        cy.get_by_role("button", name="Act", exact=True).click()
        # The tablet's buttons carry the state they were drawn on: wait for the push first.
        expect(tablet.locator("#scene-log")).to_contain_text("Cy: Move", timeout=PUSH)
        tablet.get_by_role("button", name="End the round").click()

        # B5: a Celerity round for Ana alone, physical actions only; Bo has escaped.
        expect(ana.locator("#scene-public")).to_contain_text("Celerity 1 round", timeout=PUSH)
        expect(tablet.locator("#scene-log")).to_contain_text("Bo escapes (B9)")
        ana.locator("#round-prompts").get_by_label("Standard action").select_option("attack")
        ana.locator("#round-prompts select[name=target]").select_option(label="Cy")
        ana.get_by_role("button", name="Act", exact=True).click()
        expect(tablet.locator("#combat .order")).to_contain_text("Ana 8 · Attack", timeout=PUSH)
        _play_out(ana, cy, "Cy", "2 / 4")
        expect(tablet.locator("#scene-log li", has_text="Ana: Attack on Cy")).to_have_count(2)
        tablet.get_by_role("button", name="End the round").click()
        expect(cy.locator("#scene-public")).to_contain_text("Turn 2", timeout=PUSH)
        expect(cy.locator("#phone-clock")).to_have_text("3s")
    finally:
        for context in contexts.values():
            context.close()
