"""Issue 10 in real browsers: two phones (separate contexts, separate people) and the
storyteller's tablet play challenges of met_werewolf, met_classic and met_bns end to end.

Each step is a tap on what the card offers; the other phone sees the change by its push
(after a reload when no push came: the transport is not what these tests are about); the
sheets are read back from the pages and the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from characters.services import ledger_spend
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import Table, make_table

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 1280, "height": 800}
PASSWORD = "pw-for-tests"


@dataclass
class Screens:
    t: Table
    a: object
    d: object
    st: object
    scene_url: str


def _open(browser, live_url: str, username: str, url: str, viewport: dict) -> object:
    page = browser.new_context(viewport=viewport).new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")
    page.goto(url)
    return page


def _screens(browser, live_url: str, ruleset: str) -> Screens:
    """Two phones and the tablet, each with its whole state in and every phone connected
    (a push that lands while a form is being filled in re-renders it, closing it)."""
    from playwright.sync_api import expect

    t = off_loop(make_table, ruleset)
    scene = f"{live_url}/scenes/{t.scene.pk}/"
    s = Screens(
        t,
        _open(browser, live_url, t.a_user.username, scene + "phone/", PHONE),
        _open(browser, live_url, t.d_user.username, scene + "phone/", PHONE),
        _open(browser, live_url, t.st.username, scene, TABLET),
        scene,
    )
    expect(s.st.locator("#scene-board")).to_contain_text("2 of 2 phones connected")
    for page in (s.a, s.d, s.st):
        expect(page.locator("[data-state=live]")).to_have_count(1)
    return s


def _see(page, text: str, where: str = "#challenge-prompts") -> None:
    """Wait for the push; a phone that got none reloads (a lost push costs nothing)."""
    from playwright.sync_api import expect

    try:
        expect(page.locator(where)).to_contain_text(text, timeout=4000)
    except AssertionError:
        page.reload()
        expect(page.locator(where)).to_contain_text(text, timeout=4000)


def _tap(page, name: str, where: str = "#challenge-prompts") -> None:
    page.locator(where).get_by_role("button", name=name, exact=True).first.click()


def _start(
    page,
    *,
    defender: str,
    bid: str = "",
    ability: str = "",
    effect: str = "",
    bns: dict | None = None,
) -> None:
    region = page.locator("#challenge-prompts")
    region.locator("summary", has_text="Challenge someone").click()
    form = region.locator("form.cc-start-form")
    form.get_by_label("Whom").select_option(label=defender)
    if bns:
        form.get_by_label("Attribute").select_option(bns["attribute"])
        form.get_by_label("Skill").select_option(bns["skill"])
        if "weapon" in bns:
            form.get_by_label("Weapon").select_option(label=bns["weapon"])
    else:
        form.get_by_label("Bid").select_option(bid)
        if ability:
            form.get_by_label("Ability you use").select_option(ability)
    form.get_by_label("Effect if you win").fill(effect)
    form.get_by_role("button", name="Challenge").click()
    _see(page, "Waiting for the defender")


def _answer(page, *, bid: str = "", ability: str = "", bns: dict | None = None) -> None:
    _see(page, "Nothing to bid")
    form = page.locator("form.cc-answer")
    if bns:
        form.get_by_label("Attribute").select_option(bns["attribute"])
        form.get_by_label("Skill").select_option(bns["skill"])
    else:
        form.get_by_label("Bid").select_option(bid)
        if ability:
            form.get_by_label("Ability you use").select_option(ability)
    form.get_by_role("button", name="Bid").click()
    _see(page, "In play")


def _throw(s: Screens, a: str, d: str) -> None:
    _see(s.a, "to throw")
    _tap(s.a, a.capitalize())
    _see(s.a, f"Your throw: {a}")
    _see(s.d, "locked in")
    _tap(s.d, d.capitalize())
    _see(s.d, "Throws:")


def test_werewolf_social_with_an_ability_retest_and_a_cancel(browser, live_url):
    s = _screens(browser, live_url, "met_werewolf")
    _start(
        s.a,
        defender="Cody",
        bid="social:Charismatic",
        ability="Expression",
        effect="Cody steps aside",
    )
    _answer(s.d, bid="Impressive", ability="Leadership")
    _throw(s, "rock", "paper")  # Cody wins the throw
    _see(s.a, "Winning now: Cody")
    retest = s.a.locator("form.retest-ability")
    retest.get_by_label("Ability").select_option("Expression")
    retest.get_by_role("button", name="Ability retest").click()
    _see(s.d, "Janet is retesting (ability: Expression)")
    s.d.locator("form.cc-cancel").get_by_label("Cancel with").select_option("Leadership")
    _tap(s.d, "Cancel the retest")
    _see(s.a, "cancels the retest with Leadership")
    _tap(s.a, "Take the result")
    _see(s.a, "Cody wins")
    _see(s.d, "Cody wins")
    _see(s.a, "Expression 1", "#scene-private")
    assert s.t.now(s.t.a)["traits"]["social"]["Charismatic"] == 2
    assert s.t.now(s.t.d)["abilities"]["Leadership"] == 1
    _see(s.st, "Janet loses Charismatic", "#challenge-board")


def test_classic_physical_decided_on_totals_then_won_by_an_overbid(browser, live_url):
    s = _screens(browser, live_url, "met_classic")
    for trait in ("Wiry", "Stalwart"):  # Sophia is down to Tough x2 tonight
        ledger_spend(
            character=s.t.d.character,
            kind="trait_lost",
            by=s.t.st,
            subject=trait,
            category="physical",
            amount=3,
        )
    _start(s.a, defender="Sophia", bid="physical:Strong", effect="pinned")
    _answer(s.d, bid="Tough")
    _throw(s, "rock", "rock")
    _see(s.a, "declare totals")
    s.a.locator("form.cc-declare").get_by_label("Your total").fill("1")  # under-declared
    _tap(s.a, "Declare (sealed)")
    _see(s.d, "Marcus declared a total (sealed)", "#scene-private")
    _tap(s.d, "Declare (sealed)")
    _see(s.d, "Totals: Marcus 1, Sophia 2")
    _see(s.a, "Totals: Marcus 1, Sophia 2")
    overbid = s.a.locator("form.retest-overbid")
    overbid.get_by_label("Announced total (hidden from the other side)").fill("10")
    overbid.get_by_role("button", name="Overbid").click()
    _see(s.a, "overbids and succeeds")
    _see(s.d, "overbids and succeeds")
    _throw(s, "paper", "rock")
    _tap(s.d, "Take the result")
    _see(s.a, "Marcus wins")
    assert s.t.now(s.t.d)["traits"]["physical"]["Tough"] == 1


def test_bns_attack_with_a_willpower_retest_and_damage(browser, live_url):
    s = _screens(browser, live_url, "met_bns")
    _start(
        s.a,
        defender="Melvin",
        effect="a swing of the bat",
        bns={"attribute": "Physical", "skill": "Melee", "weapon": "Baseball bat (+2)"},
    )
    _answer(s.d, bns={"attribute": "Physical", "skill": "Dodge"})
    _throw(s, "rock", "paper")  # Melvin wins the throw
    _see(s.a, "Winning now: Melvin")
    retest = s.a.locator("form.retest-willpower")
    retest.get_by_role("button", name="Willpower retest").click()
    _see(s.d, "retests with willpower (B2)")
    _throw(s, "paper", "rock")
    _tap(s.d, "Take the result")
    _see(s.d, "Melvin takes 1 damage (B3)")
    _see(s.d, "Health 1 / 4", "#scene-private")
    assert s.t.now(s.t.a)["willpower"] == 3


def test_a_static_test_against_the_storyteller(browser, live_url):
    s = _screens(browser, live_url, "met_classic")
    board = s.st.locator("#challenge-board")
    board.locator("summary", has_text="Test a player's character").click()
    form = board.locator("form", has_text="Start the test")
    form.get_by_label("Character").select_option(label="Marcus")
    form.get_by_label("Kind").select_option("static")
    form.get_by_label("Category").select_option("mental")
    form.get_by_label("Difficulty").fill("5")
    form.get_by_role("button", name="Start the test").click()
    _see(s.a, "mental · difficulty 5")
    s.a.locator("form.cc-answer").get_by_label("Bid").select_option("Alert")
    s.a.locator("form.cc-answer").get_by_role("button", name="Bid").click()
    _see(s.a, "to throw")
    _tap(s.a, "Rock")
    _see(s.st, "locked in", "#challenge-board")
    _tap(s.st, "Scissors", "#challenge-board .cc-st-side")
    _see(s.st, "Marcus is winning", "#challenge-board")
    _tap(s.st, "Take the result", "#challenge-board .cc-st-side")
    _see(s.a, "Marcus wins")
    assert s.t.now(s.t.a)["traits"]["mental"]["Alert"] == 2


def test_the_storyteller_voids_a_challenge_and_both_sheets_return(browser, live_url):
    s = _screens(browser, live_url, "met_werewolf")
    t = s.t
    ch = off_loop(t.start, category="social", bid="Charismatic", ability="Expression")
    answer = {"answer": "bid", "bid": "Impressive", "ability": "Leadership"}
    ch = off_loop(t.do, "answer", ch, t.d_user, side="defender", **answer)
    ch = off_loop(t.throw, ch, "rock", "paper")
    retest = {"kind": "ability", "ability": "Expression"}
    ch = off_loop(t.do, "retest", ch, t.a_user, side="attacker", **retest)
    ch = off_loop(t.do, "cancel", ch, t.d_user, side="defender", ability="Leadership")
    off_loop(t.do, "accept", ch, t.a_user, side="attacker")
    _see(s.a, "Expression 1", "#scene-private")
    _see(s.st, "Cody wins", "#challenge-board")
    s.st.locator("details.cc-done summary").first.click()  # a finished one folds to a line
    void = s.st.locator("form.cc-void-form").first
    void.get_by_label("Why void").fill("wrong target")
    void.get_by_role("button", name="Void").click()  # asks once (issue 19)
    void.get_by_role("button", name="Tap again: void and reverse its sheet entries").click()
    _see(s.st, "Voided: wrong target", "#challenge-board")
    _see(s.a, "Voided: wrong target")
    _see(s.a, "Expression 2", "#scene-private")
    _see(s.d, "Leadership 2", "#scene-private")
    assert t.now(t.a)["traits"]["social"]["Charismatic"] == 3


def _join_brute(t: Table):
    """A third player's character (one physical trait, one negative) joins the scene."""
    from combat import services as scenes
    from tests.factories import CharacterFactory, TraitFactory, UserFactory

    user = UserFactory(username=f"brute_{t.scene.pk}")
    brute = CharacterFactory(chronicle=t.scene.chronicle, name="Brute", player=user)
    TraitFactory(character=brute, category="physical", name="Burly", count=1)
    TraitFactory(character=brute, category="physical", name="Lazy", count=1, negative=True)
    return user, scenes.scene_join(code=t.scene.join_code, user=user, character=brute)


def test_classic_mob_with_a_drop_out_on_every_phone(browser, live_url):
    s = _screens(browser, live_url, "met_classic")
    brute_user, brute = off_loop(_join_brute, s.t)
    b = _open(browser, live_url, brute_user.username, s.scene_url + "phone/", PHONE)
    from playwright.sync_api import expect

    # every phone is connected before Marcus fills in the form (a push re-renders it)
    expect(s.st.locator("#scene-board")).to_contain_text("3 of 3 phones connected")
    s.a.reload()
    expect(s.a.locator("[data-state=live]")).to_have_count(1)  # the whole state has landed
    region = s.a.locator("#challenge-prompts")
    region.locator("summary", has_text="Challenge someone").click()
    form = region.locator("form.cc-start-form")
    form.get_by_label("Whom").select_option(label="Sophia")
    form.locator("select[name=bid]").select_option("physical:Strong")
    form.locator("summary", has_text="More").click()
    form.get_by_label("Mob with").select_option(label="Brute")
    form.get_by_label("The mob (C16)").select_option("attacker")
    form.get_by_role("button", name="Challenge").click()
    _see(b, "join Marcus's mob against Sophia (C16)")
    b.locator("form.cc-mob").get_by_label("Bid").select_option("Burly")
    _tap(b, "Join, bidding it")
    _see(s.a, "Brute joins the mob, bidding Burly")
    _answer(s.d, bid="Tough")
    _see(s.a, "Mob (C16): Marcus (throws), Brute bids Burly")
    s.d.locator("summary", has_text="Name a negative trait").click()
    s.d.get_by_label("Negative trait").fill("Lazy")
    _tap(s.d, "Name it")
    _see(s.a, "Brute cannot match the negative traits named")
    assert s.a.locator("#challenge-prompts").get_by_role("button", name="Rock").count() == 0
    _see(b, "cannot match the negative traits named (C16)")
    _tap(b, "Drop out (C16)")
    _see(b, "dropped out of this challenge (C16)")
    _see(s.st, "Brute cannot match the negatives named and drops out", "#challenge-board")
    _throw(s, "rock", "paper")  # Sophia wins
    _tap(s.a, "Take the result")
    _see(s.a, "Sophia wins")
    _see(b, "Sophia wins")
    assert s.t.now(s.t.a)["traits"]["physical"]["Strong"] == 1
    assert s.t.now(brute)["traits"]["physical"]["Burly"] == 1  # out of it: nothing lost


def test_werewolf_loser_picks_the_trait_a_named_negative_put_at_risk(browser, live_url):
    from tests.factories import TraitFactory

    s = _screens(browser, live_url, "met_werewolf")
    off_loop(
        TraitFactory,
        character=s.t.d.character,
        category="social",
        name="Arrogant",
        count=1,
        negative=True,
    )
    _start(s.a, defender="Cody", bid="social:Charismatic", effect="Cody backs down")
    _answer(s.d, bid="Impressive")
    s.a.locator("summary", has_text="Name a negative trait").click()
    s.a.get_by_label("Negative trait").fill("Arrogant")
    _tap(s.a, "Name it")
    _see(s.d, "names Cody Arrogant: right (W8)")
    _throw(s, "rock", "scissors")  # Janet wins
    _tap(s.d, "Take the result")
    _see(s.a, "Waiting on Cody to choose which trait to cross off (W8)")
    _see(s.st, "Waiting on Cody to choose which trait to cross off (W8)", "#challenge-board")
    _see(s.d, "Cross it off")
    s.d.locator("form.cc-choose").get_by_label("trait to cross off").select_option("Dignified")
    _tap(s.d, "Cross it off")
    _see(s.a, "Cody crosses off Dignified (W8)")
    _see(s.st, "Cody crosses off Dignified (W8)", "#challenge-board")
    assert "Waiting on Cody" not in s.a.locator("#challenge-prompts").inner_text()
    now = s.t.now(s.t.d)["traits"]["social"]
    assert now == {"Impressive": 3, "Commanding": 3, "Dignified": 2}


def test_classic_blood_for_a_physical_trait_from_the_phone(browser, live_url):
    s = _screens(browser, live_url, "met_classic")
    _start(s.a, defender="Sophia", bid="physical:Strong", effect="pinned")
    _answer(s.d, bid="Tough")
    _see(s.a, "12 blood left")
    width = s.a.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the card with its blood form is {width}px wide"
    _tap(s.a, "Spend blood")
    _see(s.a, "Marcus spends 1 blood for 1 physical trait(s) (C5)")
    _see(s.d, "+1 blood trait (C5)")
    assert s.a.locator("form.cc-blood").count() == 0  # one a turn at his generation
    assert s.t.now(s.t.a)["blood"] == 11


def test_a_phone_whose_clock_is_wrong_counts_down_on_the_servers(browser, live_url, monkeypatch):
    """A phone set ten minutes ahead shows the answer timer counting down from the server's
    clock, in seconds left (no clock time in a zone the phone may not be in), not as long over."""
    import re
    from datetime import UTC, datetime, timedelta

    from playwright.sync_api import expect

    from combat.challenges import timers

    s = _screens(browser, live_url, "met_classic")
    context = browser.new_context(viewport=PHONE)
    context.clock.install(time=datetime.now(UTC) + timedelta(minutes=10))
    ahead = context.new_page()
    ahead.goto(f"{live_url}/accounts/login/")
    ahead.get_by_label("User name").fill(s.t.d_user.username)
    ahead.get_by_label("Password").fill(PASSWORD)
    ahead.get_by_role("button", name="Log in").click()
    ahead.wait_for_url(f"{live_url}/")
    ahead.goto(s.scene_url + "phone/")
    expect(ahead.locator("[data-state=live]")).to_have_count(1)
    monkeypatch.setattr(timers, "ANSWER_SECONDS", 40)
    off_loop(s.t.start, category="physical", bid="Strong")
    left = re.compile(r"Sophia to answer — in [23]\d s; then the storyteller decides")
    for phone in (ahead, s.d):
        expect(phone.locator("#challenge-prompts .cc-timer")).to_contain_text(left, timeout=4000)
    expect(s.st.locator("#challenge-board .cc-timer")).to_contain_text(re.compile(r"in [23]\d s"))
    expect(ahead.locator("#challenge-prompts")).not_to_contain_text("Time is up")
    context.close()


def test_an_expired_timer_is_pushed_to_the_board_and_decides_nothing(
    browser, live_url, monkeypatch
):
    from playwright.sync_api import expect

    from combat.challenges import timers

    s = _screens(browser, live_url, "met_classic")
    board = s.st.locator("#challenge-board")
    expect(board).to_contain_text("No challenge yet")
    monkeypatch.setattr(timers, "ANSWER_SECONDS", 3)
    ch = off_loop(s.t.start, category="physical", bid="Strong")
    # no reload: the card comes by its push, and its timer runs out on the open tablet
    expect(board).to_contain_text("Sophia to answer", timeout=4000)
    expect(board).to_contain_text(
        "Time is up (Sophia to answer): your call — force the answer (Sophia does not bid: the"
        " effect happens, no test, C1), add time, set a winner or void.",
        timeout=8000,
    )
    expect(s.d.locator("#challenge-prompts")).to_contain_text(
        "Time is up: the storyteller decides", timeout=8000
    )
    assert s.t.ch(ch).status == "answer"  # nothing was decided for Sophia
    # the storyteller's call: a winner while Sophia never answered
    board.get_by_label("Winner").select_option(label="Marcus")
    _tap(s.st, "Set the winner", "#challenge-board")
    _tap(s.st, "Tap again to set the winner", "#challenge-board")  # asks once (issue 19)
    expect(board).to_contain_text("Marcus wins by storyteller")
    _see(s.d, "Marcus wins by storyteller")
    assert s.t.ch(ch).winner == "attacker"


def test_classic_several_defenders_against_one_from_the_start_form(browser, live_url):
    from playwright.sync_api import expect

    s = _screens(browser, live_url, "met_classic")
    brute_user, brute = off_loop(_join_brute, s.t)
    b = _open(browser, live_url, brute_user.username, s.scene_url + "phone/", PHONE)
    expect(s.st.locator("#scene-board")).to_contain_text("3 of 3 phones connected")
    s.a.reload()
    expect(s.a.locator("[data-state=live]")).to_have_count(1)
    region = s.a.locator("#challenge-prompts")
    region.locator("summary", has_text="Challenge someone").click()
    form = region.locator("form.cc-start-form")
    form.get_by_label("Whom").select_option(label="Sophia")
    form.locator("select[name=bid]").select_option("physical:Strong")
    form.locator("summary", has_text="More").click()
    form.get_by_label("Mob with").select_option(label="Brute")
    form.get_by_label("The mob (C16)").select_option("defender")
    form.get_by_role("button", name="Challenge").click()
    _see(b, "defend together with Sophia against Marcus (C16)")
    b.locator("form.cc-mob").get_by_label("Bid").select_option("Burly")
    _tap(b, "Join, bidding it")
    _see(s.a, "Marcus faces 2 defenders (C16)")
    _answer(s.d, bid="Tough")
    _see(b, "Defending together (C16): Sophia (throws), Brute bids Burly")
    _throw(s, "rock", "scissors")  # Marcus wins
    _tap(s.d, "Take the result")
    _see(b, "Marcus wins")
    assert s.t.now(s.t.d)["traits"]["physical"]["Tough"] == 1
    assert s.t.now(brute)["traits"]["physical"].get("Burly", 0) == 0  # every defender's bid
    width = b.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"Brute's phone is {width}px wide"


def test_a_push_keeps_a_half_typed_move_open_and_a_sent_one_is_drawn_afresh(browser, live_url):
    """A push that leaves the challenge where it is (the clock) keeps what a player has opened
    and typed on the card (the form is known by its idempotency key); the reply to a post the
    server took draws that form afresh."""
    from playwright.sync_api import expect

    from combat import services as scenes

    s = _screens(browser, live_url, "met_werewolf")
    _start(s.a, defender="Cody", bid="social:Charismatic", effect="Cody backs down")
    _answer(s.d, bid="Impressive")
    _see(s.a, "to throw")
    s.a.locator("summary", has_text="Name a negative trait").click()
    s.a.get_by_label("Negative trait").fill("Arrog")
    off_loop(scenes.scene_advance_clock, scene=s.t.scene, by=s.t.st, seconds=60)
    expect(s.a.locator("#scene-public")).to_contain_text("Game clock 1m 00s")
    expect(s.a.get_by_label("Negative trait")).to_be_visible()
    expect(s.a.get_by_label("Negative trait")).to_have_value("Arrog")

    s.a.locator("#challenge-prompts summary", has_text="Call the storyteller").click()
    why = s.a.get_by_label("Why you call the storyteller")
    why.fill("He cheated")
    _tap(s.a, "Call the storyteller")
    _see(s.st, "He cheated", "#challenge-board")
    expect(s.a.get_by_label("Why you call the storyteller")).to_have_value("")
