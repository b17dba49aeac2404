"""Issue 19, the tablet (1280 x 800, Debian's chromium): the storyteller runs a six-fighter
wod_dice round without the next control ever leaving the screen, sees everyone's health and
whom the fight waits on, is never told a tap that went was "not sent", and reaches the login
cards. Screenshots of the main moments go to SCREENSHOTS_DIR (default var/screenshots/)."""

from __future__ import annotations

import re

import pytest

from tests.browser.shots import shots_dir
from tests.browser.test_screens import IN_VIEW, _open, _six_npcs
from tests.browser.threads import off_loop

pytestmark = pytest.mark.django_db(transaction=True)
PUSH = 8_000  # ms: how long the tablet waits for a push before the test fails
# ms: a prompt that arrived is brought into view at once (phone.js, tablet.js); the bound is a
# loaded CI machine's, not the goal (a second at the table; goals live in benchmarks).
IN_VIEW_WAIT = 3_000
NOTICES = """window.__notices = [];
document.addEventListener("scene:notice", (e) => window.__notices.push(e.detail.text));"""


def _shot(page, name: str) -> None:
    page.screenshot(path=str(shots_dir() / f"{name}.png"), full_page=False)


def _in_view(page, locator) -> None:
    """The control is there and, promptly after the push that brought it, all of it is
    on the screen (the tablet brings it up; the test never scrolls)."""
    locator.wait_for(state="visible", timeout=PUSH)
    handle = locator.element_handle()
    page.wait_for_function(IN_VIEW, arg=handle, timeout=IN_VIEW_WAIT)


def _no_page_scroll(page) -> None:
    assert page.evaluate("document.documentElement.scrollHeight") <= 800
    assert page.evaluate("window.scrollY") == 0


def test_the_storyteller_runs_six_fighters_for_two_rounds_without_scrolling(
    live_url: str, browser
) -> None:
    from playwright.sync_api import expect

    scene_pk = off_loop(_six_npcs)
    contexts, pages = _open(browser, live_url, scene_pk, ("st",))
    tablet = pages["st"]
    tablet.evaluate(NOTICES)
    fight = tablet.locator("#combat")
    people = tablet.locator("#people-panel")
    try:
        tablet.get_by_text("Start a fight").click()
        tablet.get_by_role("button", name="Combat! Roll initiative").click()
        expect(people.locator(".fight-health")).to_have_count(6, timeout=PUSH)
        expect(people.locator(".waiting-on")).to_contain_text("to roll initiative")
        for round_number in (1, 2):
            for n in range(1, 7):  # distinct dice: no tie (a tie declares privately, D3)
                die = tablet.get_by_label(f"Initiative die of Thug {n}")
                _in_view(tablet, die)
                die.fill(str(n + 2))
                tablet.get_by_role("button", name=f"Set Thug {n}'s initiative").click()
                expect(fight.locator(".initiative b")).to_have_count(n, timeout=PUSH)
            start = fight.get_by_role("button", name="Start the round")
            _in_view(tablet, start)
            start.click()
            for turn in range(6):
                form = fight.locator(".waiting form.declare-form").first
                _in_view(tablet, form.locator("button[type=submit]"))
                # slowest first (D4): the roster says whom the round waits on
                expect(people.locator(".waiting-on")).to_contain_text(f"Thug {turn + 1}")
                if round_number == 1 and turn == 5:
                    _shot(tablet, "tablet-declare")
                    form.locator("select[name=action]").select_option("attack")
                    form.locator("select[name=target]").select_option(label="Thug 1")
                else:
                    form.locator("select[name=action]").select_option("dodge")
                form.locator("button[type=submit]").click()
                expect(fight.locator(".order")).to_contain_text(f"Thug {turn + 1} · ", timeout=PUSH)
            expect(people.locator(".waiting-on")).to_have_count(0)  # the storyteller resolves
            for _turn in range(6):
                resolve = fight.locator("form.resolve-form").first
                _in_view(tablet, resolve.locator("button[type=submit]"))
                who = resolve.get_attribute("data-who")
                if who == "Thug 6" and round_number == 1:
                    _shot(tablet, "tablet-resolve")
                resolve.locator("button[type=submit]").click()
                expect(fight.locator(f"form.resolve-form[data-who='{who}']")).to_have_count(
                    0, timeout=PUSH
                )
            if round_number == 1:  # the roster draws each fighter's track as the sheet does
                expect(people.locator(".fight-health .box")).to_have_count(6 * 7)
                _shot(tablet, "tablet-health")
            book = fight.get_by_role("button", name="Book keeping (+15 s)")
            _in_view(tablet, book)
            book.click()
            after = fight.get_by_role("button", name="Next round")
            _in_view(tablet, after)
            _no_page_scroll(tablet)
            if round_number == 2:
                break
            after.click()
            expect(fight).to_contain_text("Round 2", timeout=PUSH)
        _shot(tablet, "tablet-round-2-done")
        assert tablet.evaluate("window.__notices") == []  # nothing said lost: every tap went
        night = tablet.locator("#scene-log time.night").first
        expect(night).to_have_text(re.compile(r"^\d\d:\d\d$"))
        cards = tablet.get_by_role("link", name="Login cards")
        _in_view(tablet, cards)
        cards.click()
        expect(tablet.get_by_role("heading", name="Login cards")).to_be_visible()
    finally:
        for context in contexts.values():
            context.close()


def _held(page, held: list):
    """The post the route holds, once the page has sent it."""
    for _ in range(400):
        if held:
            return held.pop()
        page.wait_for_timeout(20)  # the route's handler runs while the page is waited on
    raise AssertionError("the post never left the page")


def _push_the_board_again(scene_pk: int) -> None:
    """A push of the state the tablet shows already (a late one: another process's, or a
    resync's), drawing every form afresh."""
    from combat import live

    live.scene_changed(scene_pk)


MARK = (
    "() => { document.querySelector(`[aria-label='Initiative die of Thug 2']`).dataset.old = 1; }"
)
DRAWN_AFRESH = (
    "() => !document.querySelector(`[aria-label='Initiative die of Thug 2']`).dataset.old"
)


def test_bug3_a_set_that_went_is_not_said_not_sent_when_a_push_crosses_its_post(
    live_url: str, browser
) -> None:
    """Thug 2's die is typed and Set; while the post is under way a push of the same state
    draws the form afresh (with what was typed in it); then Thug 2's own push takes the form
    away. The die went: the tablet must not say "Not sent, the scene moved on"."""
    from playwright.sync_api import expect

    scene_pk = off_loop(_six_npcs)
    contexts, pages = _open(browser, live_url, scene_pk, ("st",))
    tablet = pages["st"]
    tablet.evaluate(NOTICES)
    fight = tablet.locator("#combat")
    held: list = []
    try:
        tablet.get_by_text("Start a fight").click()
        tablet.get_by_role("button", name="Combat! Roll initiative").click()
        expect(fight.locator(".initiative")).to_be_visible(timeout=PUSH)
        tablet.get_by_label("Initiative die of Thug 1").fill("3")
        tablet.get_by_role("button", name="Set Thug 1's initiative").click()
        expect(fight.locator(".initiative b")).to_have_count(1, timeout=PUSH)
        tablet.route("**/combat/initiative/", lambda route: held.append(route))
        tablet.get_by_label("Initiative die of Thug 2").fill("4")
        tablet.evaluate(MARK)
        tablet.get_by_role("button", name="Set Thug 2's initiative").click()
        post = _held(tablet, held)  # under way, not at the server yet
        off_loop(_push_the_board_again, scene_pk)
        tablet.wait_for_function(DRAWN_AFRESH, timeout=PUSH)
        expect(tablet.get_by_label("Initiative die of Thug 2")).to_have_value("4")
        post.continue_()  # the server takes Thug 2's die; its push takes the form away
        expect(fight.locator(".initiative b")).to_have_count(2, timeout=PUSH)
        expect(fight.get_by_label("Initiative die of Thug 2")).to_have_count(0)
        _shot(tablet, "tablet-bug3")
        assert not [n for n in tablet.evaluate("window.__notices") if "Not sent" in n]
    finally:
        for context in contexts.values():
            context.close()
