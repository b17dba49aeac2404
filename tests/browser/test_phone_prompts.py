"""Issue 19 on 390 x 844 phones: every prompt a push brings (each kind of challenge, a mob's
invitation, a wod_dice round's declaration) is in view when it arrives, with the phone read
far down its sheet before; the phone buzzes once per turn of its own, never for its own tap or
another's move (navigator.vibrate intercepted); a refusal's sentence is in view; the declare
form starts on good defaults and shows only what the chosen action needs.

Screenshots of the main moments go to ``$SCREENSHOTS_DIR`` (default ``var/screenshots/``)."""

from __future__ import annotations

import re

import pytest

from combat import services as scenes
from combat.rounds import bookkeeping, declaring, initiative, reads, resolving, starting
from tests.browser.shots import shot
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}
PUSH = 8_000  # ms: how long a page waits for a push before the test fails
# ms: a prompt that arrived is brought into view at once (phone.js, tablet.js); the bound is a
# loaded CI machine's, not the goal (a second at the table; goals live in benchmarks).
IN_VIEW_WAIT = 3_000
YOUR_TURN = [300, 120, 300, 120, 600]
RECORD_BUZZES = """window.__buzzes = [];
Object.defineProperty(Navigator.prototype, "vibrate", {configurable: true,
  value: function (pattern) { window.__buzzes.push(pattern); return true; }});
window.__pushes = 0;  // the socket's messages swapped in so far
document.addEventListener("htmx:wsAfterMessage", () => { window.__pushes += 1; });"""
IN_VIEW = """(el) => { const b = el.getBoundingClientRect();
  return b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight && b.right <= innerWidth; }"""
# All of it on the screen and nothing over it (the sticky freshness badge, say).
SEEN = f"""(selector) => {{
  const el = document.querySelector(selector);
  if (!el || !({IN_VIEW})(el)) return false;
  const b = el.getBoundingClientRect(), y = b.top + b.height / 2;
  return [b.left + 4, b.left + b.width / 2, b.right - 4]
    .every(x => el.contains(document.elementFromPoint(x, y)));
}}"""
# The prompt's head and its primary action (what must be seen and tapped) are on the screen.
PROMPT_IN_VIEW = f"""(text) => {{
  const now = [...document.querySelectorAll('#prompts [data-now]')]
    .find(el => el.textContent.includes(text));
  if (!now) return false;
  const primary = now.querySelector('button.primary') || now;
  const head = now.querySelector('.cc-head, .prompt-title') || now;
  return [head, primary].every({IN_VIEW});
}}"""


def _phone(browser, live_url: str, username: str, scene_pk: int, *, sockets=None):
    """A player's phone on the scene; ``sockets``: a handler of its scene socket (Playwright's
    ``route_web_socket``), to hold the server's messages back."""
    context = browser.new_context(viewport=PHONE)
    context.add_init_script(RECORD_BUZZES)
    if sockets is not None:
        context.route_web_socket(re.compile(r"/ws/scenes/"), sockets)
    page = context.new_page()
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill("pw-for-tests")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")
    page.goto(f"{live_url}/scenes/{scene_pk}/phone/")
    return context, page


def _live(*pages) -> None:
    from playwright.sync_api import expect

    for page in pages:
        expect(page.locator("#scene-freshness")).to_contain_text("live", timeout=PUSH)


def _far_down(*pages) -> None:
    """Each player reads the sheet, at the foot of the page, when the next push comes."""
    for page in pages:
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")


def _buzzes(page) -> int:
    buzzes = page.evaluate("window.__buzzes")
    assert all(b == YOUR_TURN for b in buzzes), buzzes  # nothing else buzzes at all
    return len(buzzes)


def _prompt(page, text: str, *, buzzes: int, name: str = "") -> None:
    """The prompt waiting on this player arrived by a push: it is brought into view at once,
    and the phone has buzzed ``buzzes`` times in all."""
    from playwright.sync_api import expect

    now = page.locator("#prompts [data-now]").filter(has_text=text)
    expect(now).to_have_count(1, timeout=PUSH)
    page.wait_for_function(PROMPT_IN_VIEW, arg=text, timeout=IN_VIEW_WAIT)
    if name:
        shot(page, name)
    assert _buzzes(page) == buzzes


def _quiet(page, buzzes: int) -> None:
    """No buzz came (a push that was not this player's turn, or this phone's own tap)."""
    page.wait_for_timeout(400)
    assert _buzzes(page) == buzzes


def _tap(page, name: str) -> None:
    page.locator("#challenge-prompts").get_by_role("button", name=name, exact=True).first.click()


def _see(page, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#challenge-prompts")).to_contain_text(text, timeout=PUSH)


def _brute(t):
    from tests.combat.challenges.test_mob import _brute

    return _brute(t)


def test_classic_every_prompt_comes_into_view_and_buzzes_once_per_turn(browser, live_url):
    """C1 the answer, C2 the throws, C8 the loser's retests or the result, C4 sealed totals,
    C11 a static test's own bid, C16 a mob's invitation: each in view on arrival."""
    t = off_loop(make_table, "met_classic")
    brute_user, brute = off_loop(_brute, t)
    contexts = []
    try:
        pages = {}
        for who, user in (("a", t.a_user), ("d", t.d_user), ("b", brute_user)):
            context, pages[who] = _phone(browser, live_url, user.username, t.scene.pk)
            contexts.append(context)
        a, d, b = pages["a"], pages["d"], pages["b"]
        _live(a, d, b)

        # C1: Marcus challenges Sophia (from elsewhere): her answer comes into view.
        _far_down(a, d, b)
        off_loop(t.start, category="physical", bid="Strong")
        _prompt(d, "Nothing to bid", buzzes=1, name="classic-answer")
        _quiet(a, 0)
        # C2: her bid (her own tap: no buzz) brings Marcus's throw.
        _far_down(a)
        d.locator("form.cc-answer").get_by_label("Bid").select_option("Tough")
        d.locator("form.cc-answer").get_by_role("button", name="Bid").click()
        _prompt(a, "to throw", buzzes=1, name="classic-throw")
        _quiet(d, 1)
        _far_down(d)
        _tap(a, "Rock")
        _see(d, "locked in")
        _quiet(d, 1)  # Marcus's throw is not Sophia's turn: her prompt stays, no buzz
        _tap(d, "Paper")
        # C8: Marcus lost: take the result or retest, in view.
        _prompt(a, "Take the result", buzzes=2, name="classic-retests")
        _quiet(d, 1)
        _tap(a, "Take the result")
        _see(d, "Sophia wins")
        _quiet(a, 2)

        # C4: a draw: each side declares a sealed total.
        _far_down(a, d)
        off_loop(t.start, category="physical", bid="Brawny")
        _prompt(d, "Nothing to bid", buzzes=2)
        d.locator("form.cc-answer").get_by_label("Bid").select_option("Wiry")
        d.locator("form.cc-answer").get_by_role("button", name="Bid").click()
        _prompt(a, "to throw", buzzes=3)
        _far_down(a)
        _tap(a, "Rock")
        _see(d, "locked in")
        _tap(d, "Rock")
        _prompt(a, "Declare (sealed)", buzzes=4, name="classic-declare-total")
        _quiet(d, 2)
        _tap(a, "Declare (sealed)")
        _see(d, "has declared")
        _quiet(d, 2)
        _tap(d, "Declare (sealed)")
        # Marcus's 10 against Sophia's 8: she takes the result (her own tap's reply, no buzz)
        _see(d, "Take the result")
        _tap(d, "Take the result")
        _see(a, "Marcus wins")
        _quiet(a, 4)
        _quiet(d, 2)

        # C16: Sophia starts a mob against Marcus; Brute is asked to join, in view.
        _far_down(a, b)
        off_loop(
            t.start,
            by=t.d_user,
            attacker=t.d,
            defender=t.a,
            category="physical",
            bid="Tough",
            mob=[brute],
        )
        _prompt(b, "join Sophia's mob against Marcus", buzzes=1, name="classic-mob-invitation")
        _quiet(a, 4)  # the mob forms before Marcus is asked
        _tap(b, "Stay out")
        _prompt(a, "Nothing to bid", buzzes=5)
        _tap(a, "Relent")
        _tap(a, "Tap again to relent")
        _see(d, "Sophia wins")
    finally:
        for context in contexts:
            context.close()


def test_a_static_test_the_storyteller_calls_comes_into_view(browser, live_url):
    """C11: the storyteller calls a static test; Marcus, reading his sheet at the foot of the
    page, gets the bid brought into view and one buzz."""
    contexts = []
    try:
        t = off_loop(make_table, "met_classic")
        context, marcus = _phone(browser, live_url, t.a_user.username, t.scene.pk)
        contexts.append(context)
        _live(marcus)
        _far_down(marcus)
        off_loop(t.start, by=t.st, defender=None, mode="static", category="mental", difficulty=4)
        _prompt(marcus, "Waiting for Marcus's bid", buzzes=1, name="classic-static")
    finally:
        for context in contexts:
            context.close()


def test_werewolf_a_simple_test_and_a_bns_answer_come_into_view(browser, live_url):
    """W14: the storyteller's simple test brings Janet's throw; met_bns: Melvin's answer to
    Delilah's attack starts on Physical, the skill the attack named and his knife."""
    contexts = []
    try:
        t = off_loop(make_table, "met_werewolf")
        context, janet = _phone(browser, live_url, t.a_user.username, t.scene.pk)
        contexts.append(context)
        _live(janet)
        _far_down(janet)
        off_loop(t.start, by=t.st, defender=None, mode="simple")
        _prompt(janet, "to throw", buzzes=1, name="werewolf-simple-test")

        t = off_loop(make_table, "met_bns")
        context, melvin = _phone(browser, live_url, t.d_user.username, t.scene.pk)
        contexts.append(context)
        _live(melvin)
        _far_down(melvin)
        off_loop(t.start, attribute="Physical", skill="Melee", attack=True)
        _prompt(melvin, "Nothing to bid", buzzes=1, name="bns-answer")
        form = melvin.locator("form.cc-answer")
        assert form.get_by_label("Attribute").input_value() == "Physical"
        assert form.get_by_label("Skill").input_value() == "Melee"
        assert "Knife" in form.get_by_label("Weapon").locator("option:checked").inner_text()
    finally:
        for context in contexts:
            context.close()


# --- a wod_dice round ----------------------------------------------------------------------


def _fight() -> tuple[int, object, dict]:
    """wod_dice: Jane (carries a knife) and Frank on their phones, a Thug NPC."""
    from characters.models import Attribute
    from tests.factories import (
        CharacterFactory,
        ChronicleFactory,
        EquipmentFactory,
        GameNightFactory,
        StorytellerFactory,
        UserFactory,
    )

    st = StorytellerFactory(username="st")
    chronicle = ChronicleFactory(name="Dice", ruleset="wod_dice")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scenes.scene_open(chronicle=chronicle, by=st, name="Warehouse")
    cast = {}
    for name in ("jane", "frank"):
        user = UserFactory(username=name)
        c = CharacterFactory(chronicle=chronicle, player=user, name=name.capitalize())
        for attribute in ("Dexterity", "Wits", "Strength", "Stamina"):
            Attribute.objects.create(character=c, name=attribute, value=3)
        cast[name] = scenes.scene_join(code=scene.join_code, user=user, character=c)
    EquipmentFactory(character=cast["jane"].character, name="Knife", kind="weapon", damage=1)
    thug = CharacterFactory(chronicle=chronicle, name="Thug", player=None, npc=True)
    for attribute in ("Dexterity", "Wits", "Stamina"):
        Attribute.objects.create(character=thug, name=attribute, value=2)
    cast["thug"] = scenes.scene_add_npc(scene=scene, by=st, character=thug)
    return scene.pk, st, cast


def _start_fight(st, scene_pk: int, cast: dict) -> None:
    from combat.models import Scene

    scene = Scene.objects.get(pk=scene_pk)
    starting.combat_start(scene=scene, by=st, participants=list(cast.values()))


def _round(st, scene_pk: int, cast: dict, dice: dict) -> None:
    """The storyteller sets everyone's die and starts the round."""
    from combat.models import Combat, CombatStage

    combat = Combat.objects.get(scene_id=scene_pk, stage=CombatStage.INITIATIVE)
    for name, die in dice.items():
        initiative.combat_initiative(combat=combat, by=st, participant=cast[name], roll=die)
    initiative.combat_begin_round(combat=Combat.objects.get(pk=combat.pk), by=st)


def _finish_round(st, scene_pk: int, cast: dict) -> None:
    """Everyone else declares a dodge, all resolve, book keeping, the next round."""
    from combat.models import Combat, CombatStage

    combat = Combat.objects.get(scene_id=scene_pk, stage=CombatStage.ROUND)
    for who in ("thug",):
        declaring.combat_declare(combat=combat, by=st, participant=cast[who], action="dodge")
    combat = Combat.objects.get(pk=combat.pk)
    while combat.stage == CombatStage.ROUND:
        state = reads.wod_state(combat)
        up = [w for w in state.up if w not in state.resolved]
        pk = int(up[0])
        participant = next(p for p in cast.values() if p.pk == pk)
        resolving.combat_resolve(combat=combat, by=st, participant=participant)
        combat = Combat.objects.get(pk=combat.pk)
    bookkeeping.combat_book_keeping(combat=combat, by=st)
    bookkeeping.combat_next_round(combat=Combat.objects.get(pk=combat.pk), by=st)


def _shown(form) -> list[str]:
    """The labels of the declare form a person sees."""
    return [
        label.split("\n")[0].split(" ")[0]
        for label in form.locator("label:visible").all_inner_texts()
    ]


def test_the_declare_prompt_comes_into_view_with_good_defaults_and_only_what_it_needs(
    browser, live_url
) -> None:
    """D4: slowest first, Frank then Jane; Jane's form starts on the knife she carries, shows
    a target, a kind and a weapon for an attack and none of them for a dodge; an attack with
    no target is refused in view; the next round starts on the kind she declared last."""
    from playwright.sync_api import expect

    scene_pk, st, cast = off_loop(_fight)
    contexts = []
    try:
        pages = {}
        for name in ("jane", "frank"):
            context, pages[name] = _phone(browser, live_url, name, scene_pk)
            contexts.append(context)
        jane, frank = pages["jane"], pages["frank"]
        _live(jane, frank)
        _far_down(jane, frank)
        off_loop(_start_fight, st, scene_pk, cast)
        _prompt(jane, "Roll initiative", buzzes=1)
        _prompt(frank, "Roll initiative", buzzes=1)
        _far_down(jane, frank)
        off_loop(_round, st, scene_pk, cast, {"jane": 5, "frank": 1, "thug": 10})
        _prompt(frank, "Declare now: Frank", buzzes=2, name="wod-declare-frank")
        _quiet(jane, 1)  # Frank's turn is not Jane's
        form = frank.locator("#round-prompts form.declare-form")
        form.locator("select[name=action]").select_option("dodge")
        assert _shown(form) == ["Action"]
        _far_down(jane)
        form.get_by_role("button", name="Declare").click()
        expect(frank.locator("#round-prompts")).to_contain_text("Frank declared", timeout=PUSH)

        _prompt(jane, "Declare now: Jane", buzzes=2, name="wod-declare-jane")
        _quiet(frank, 2)
        form = jane.locator("#round-prompts form.declare-form")
        assert _shown(form) == ["Action", "Target", "Kind", "Weapon"]  # an attack, drawn first
        assert form.locator("select[name=weapon]").input_value() == "Knife"
        form.locator("select[name=action]").select_option("dodge")
        assert _shown(form) == ["Action"]
        form.locator("select[name=action]").select_option("attack")
        form.locator("select[name=maneuver]").select_option("power")
        # no target named: refused (D5), the sentence in view
        form.get_by_role("button", name="Declare").click()
        flash = jane.locator("#round-prompts .flash[role=alert]")
        expect(flash).to_contain_text("Name the target", timeout=PUSH)
        jane.wait_for_function(SEEN, arg="#round-prompts .flash[role=alert]", timeout=IN_VIEW_WAIT)
        shot(jane, "wod-refusal")
        form = jane.locator("#round-prompts form.declare-form")
        form.locator("select[name=target]").select_option(label="Thug")
        form.locator("select[name=maneuver]").select_option("power")
        form.get_by_role("button", name="Declare").click()
        expect(jane.locator("#round-prompts")).to_contain_text("Jane declared", timeout=PUSH)
        _quiet(jane, 2)

        # The next round: Jane's fresh form starts on the kind she declared last (power).
        off_loop(_finish_round, st, scene_pk, cast)
        _prompt(jane, "Roll initiative", buzzes=3)
        _far_down(jane)
        off_loop(_round, st, scene_pk, cast, {"jane": 1, "frank": 9, "thug": 10})
        _prompt(jane, "Declare now: Jane", buzzes=4, name="wod-declare-next-round")
        form = jane.locator("#round-prompts form.declare-form")
        assert form.locator("select[name=maneuver]").input_value() == "power"
        assert form.locator("select[name=weapon]").input_value() == "Knife"
    finally:
        for context in contexts:
            context.close()
