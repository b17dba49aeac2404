"""Issue 19, "done when": the storyteller runs a met_classic mob challenge (C16) from the tablet
(1280 x 800) without scrolling for the next action, while the players' phones (390 x 844) bring
each prompt of theirs into view. Thug 1 (an NPC the storyteller plays) starts a mob against
Marcus with Thug 2 (an NPC) and Brute (a player); Marcus answers and throws on his phone; the
storyteller bids for Thug 2, throws for Thug 1 and takes Thug 1's loss on the tablet. The people
panel says whom the challenge waits on as it goes (the loser's choice too, C8). Screenshots go
to SCREENSHOTS_DIR."""

from __future__ import annotations

import pytest

from combat import services as scenes
from tests.browser.shots import shot
from tests.browser.test_phone_prompts import _far_down, _live, _phone, _prompt, _quiet
from tests.browser.test_tablet import IN_VIEW_WAIT, PUSH, _no_page_scroll
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db(transaction=True)
TABLET = {"width": 1280, "height": 800}
PASSWORD = "pw-for-tests"
# All of the control on the screen, and not clipped by the box it scrolls in: the point at
# its middle is the control (or inside it).
SEEN = """(el) => { const b = el.getBoundingClientRect();
  const inside = b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight && b.right <= innerWidth;
  if (!inside) return false;
  const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
  return !!hit && (el === hit || el.contains(hit)); }"""


def _table():
    """met_classic: Marcus and Sophia (players), Brute (a player), Thug 1 and Thug 2 (NPCs)."""
    from tests.combat.challenges.test_mob import _brute

    t = make_table("met_classic")
    brute_user, _brute_p = _brute(t)
    for name in ("Thug 1", "Thug 2"):
        scenes.scene_add_npc(scene=t.scene, by=t.st, name=name, pools={"Physical": 7})
    return t, brute_user


def _tablet(browser, live_url: str, username: str, scene_pk: int):
    context = browser.new_context(viewport=TABLET)
    page = context.new_page()
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")
    page.goto(f"{live_url}/scenes/{scene_pk}/")
    return context, page


def _next(page, locator) -> None:
    """The storyteller's next control came with the push, and promptly all of it is on the
    screen, unclipped (the tablet brings it up; the test never scrolls)."""
    from playwright.sync_api import TimeoutError as Late

    locator.wait_for(state="visible", timeout=PUSH)
    try:
        page.wait_for_function(SEEN, arg=locator.element_handle(), timeout=IN_VIEW_WAIT)
    except Late:
        shot(page, "tablet-mob-not-in-view")  # what the storyteller saw instead
        raise AssertionError(f"not in view: {locator.bounding_box()}") from None
    _no_page_scroll(page)


def _waiting(page, *texts: str) -> None:
    from playwright.sync_api import expect

    waiting = page.locator("#people-panel .waiting-on")
    for text in texts:
        expect(waiting).to_contain_text(text, timeout=PUSH)


def test_the_storyteller_runs_a_mob_from_the_tablet_without_scrolling(browser, live_url):
    from playwright.sync_api import expect

    t, brute_user = off_loop(_table)
    contexts = []
    try:
        context, st = _tablet(browser, live_url, t.st.username, t.scene.pk)
        contexts.append(context)
        pages = {}
        for who, user in (("m", t.a_user), ("b", brute_user)):
            context, pages[who] = _phone(browser, live_url, user.username, t.scene.pk)
            contexts.append(context)
        marcus, brute = pages["m"], pages["b"]
        _live(st, marcus, brute)
        board = st.locator("#challenge-board")

        # C16: Thug 1 starts a mob with Thug 2 and Brute against Marcus (the tablet's form).
        board.locator("summary", has_text="Thug 1: challenge").click()
        form = board.locator("details.cc-start[open] form.cc-start-form")
        form.get_by_label("Whom").select_option(label="Marcus")
        form.locator("select[name=bid]").select_option("physical:Physical")
        form.locator("summary", has_text="More").click()
        form.get_by_label("Mob with").select_option(label=["Thug 2", "Brute"])
        form.get_by_label("The mob (C16)").select_option("attacker")
        _far_down(marcus, brute)
        form.get_by_role("button", name="Challenge").click()

        # The mob forms: the storyteller bids for Thug 2, Brute on his phone.
        join = (
            board.locator("form.cc-mob")
            .filter(has_text="Thug 2")
            .get_by_role("button", name="Join, bidding it")
        )
        _next(st, join)
        _waiting(st, "Thug 2", "Brute", "to bid for the mob")
        shot(st, "tablet-mob-forming")
        _prompt(brute, "join Thug 1's mob against Marcus", buzzes=1, name="mob-invitation")
        _quiet(marcus, 0)  # the mob forms before Marcus is asked
        join.click()
        expect(board.locator(".cc-mob-list").first).to_contain_text("Thug 2 bids", timeout=PUSH)
        brute.locator("form.cc-mob").get_by_role("button", name="Join, bidding it").click()

        # Marcus is asked; he bids on his phone (his own tap: no buzz).
        _prompt(marcus, "Nothing to bid", buzzes=1, name="mob-defender-answer")
        _waiting(st, "Marcus", "to answer")
        _far_down(marcus)
        answer = marcus.locator("form.cc-answer")
        answer.get_by_label("Bid").select_option("Strong")
        answer.get_by_role("button", name="Bid").click()

        # C2: both throw (Marcus's throw came with his own bid's reply: no buzz); the
        # storyteller throws for Thug 1, the mob's primary attacker.
        _prompt(marcus, "to throw", buzzes=1, name="mob-defender-throw")
        rock = board.locator(".cc-st-side").get_by_role("button", name="Rock", exact=True)
        _next(st, rock)
        _waiting(st, "Thug 1", "Marcus", "to throw")
        shot(st, "tablet-mob-throw")
        rock.click()
        expect(board.locator(".cc-st-side")).to_contain_text("Your throw: rock", timeout=PUSH)
        _far_down(marcus)
        marcus.locator("#challenge-prompts").get_by_role("button", name="Paper", exact=True).click()

        # Marcus wins: Thug 1 (the storyteller's) takes the result or retests, on the tablet.
        accept = board.locator(".cc-st-side").get_by_role("button", name="Take the result")
        _next(st, accept)
        _waiting(st, "Thug 1", "to retest or take the result (C8)")
        shot(st, "tablet-mob-loser")
        _quiet(marcus, 1)
        accept.click()
        expect(board).to_contain_text("Marcus wins", timeout=PUSH)
        expect(marcus.locator("#challenge-prompts")).to_contain_text("Marcus wins", timeout=PUSH)
        expect(brute.locator("#challenge-prompts")).to_contain_text("Marcus wins", timeout=PUSH)
        expect(st.locator("#people-panel .waiting-on")).to_have_count(0)
        expect(st.locator("#scene-log")).to_contain_text("Marcus wins", timeout=PUSH)
        _no_page_scroll(st)
        shot(st, "tablet-mob-done")
        shot(marcus, "mob-defender-won")
    finally:
        for context in contexts:
            context.close()
