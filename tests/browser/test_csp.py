"""Every page of a night under the Content-Security-Policy, in chromium: the login page, the
join page, two phones, the tablet, the chronicle page (its confirm buttons), a sheet and its
print, and a challenge played to the end: no violation reported, neither by the page's
``securitypolicyviolation`` events (and the console) nor at the report endpoint. First the
listeners are shown to hear a violation made on purpose. Then a player who taps too fast sees
the 429's sentence beside the button.
"""

from __future__ import annotations

import logging
import time

import pytest

from tests.browser.test_challenges import PASSWORD, PHONE, TABLET, _answer, _see, _tap, _throw
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db(transaction=True)

HEAR_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI + " " +
                (e.sourceFile || "") + ":" + (e.lineNumber || ""));
});
"""


class Night:
    """Pages that tell every CSP violation they hear (console errors included)."""

    def __init__(self, browser, live_url: str) -> None:
        self.browser, self.live_url = browser, live_url
        self.heard: list[str] = []

    def page(self, viewport: dict) -> object:
        page = self.browser.new_context(viewport=viewport).new_page()
        page.add_init_script(HEAR_VIOLATIONS)
        page.on("dialog", lambda dialog: dialog.accept())

        def console(message) -> None:
            text = message.text
            if "Content Security Policy" in text or text.startswith("CSP violation"):
                self.heard.append(f"{page.url}: {text}")

        page.on("console", console)
        return page

    def login(self, username: str, viewport: dict) -> object:
        page = self.page(viewport)
        page.goto(f"{self.live_url}/accounts/login/")
        page.get_by_label("User name").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{self.live_url}/")
        return page


def _reports(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "csp"]


def _settle() -> None:
    time.sleep(1)  # reports are sent after the page's events


def test_the_listeners_hear_a_violation_made_on_purpose(browser, live_url, caplog) -> None:
    night = Night(browser, live_url)
    page = night.page(PHONE)
    with caplog.at_level(logging.WARNING, logger="csp"):
        page.goto(f"{live_url}/accounts/login/")
        page.evaluate("document.body.setAttribute('style', 'color: red')")
        page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=x onerror=1>')")
        page.wait_for_timeout(500)
        _settle()
    assert any("style-src" in heard for heard in night.heard), night.heard
    assert any("style-src" in report for report in _reports(caplog)), _reports(caplog)


def test_every_page_of_a_night_runs_under_the_csp(browser, live_url, caplog) -> None:
    from playwright.sync_api import expect

    t = off_loop(make_table, "met_classic")
    night = Night(browser, live_url)
    scene = f"{live_url}/scenes/{t.scene.pk}/"
    with caplog.at_level(logging.WARNING, logger="csp"):
        # The storyteller: the scenes, the tablet, the chronicle page and its confirm buttons.
        st = night.login(t.st.username, TABLET)
        st.goto(f"{live_url}/scenes/")
        st.goto(f"{live_url}/chronicles/{t.scene.chronicle_id}/")
        st.get_by_role("button", name="Refresh willpower, blood and health").click()
        expect(st.locator(".messages")).to_contain_text("efresh")
        st.goto(scene)
        # Marcus's player joins by the code, Sophia's opens her phone.
        a = night.login(t.a_user.username, PHONE)
        a.goto(f"{live_url}/join/")
        a.get_by_label("Code on the storyteller's tablet").fill(t.scene.join_code)
        a.get_by_role("button", name="Next").click()
        a.wait_for_url(scene + "phone/")
        d = night.login(t.d_user.username, PHONE)
        d.goto(scene + "phone/")
        expect(st.locator("#scene-board")).to_contain_text("2 of 2 phones connected")
        for page in (a, d, st):
            expect(page.locator("[data-state=live]")).to_have_count(1)
        # A challenge played to the end.
        region = a.locator("#challenge-prompts")
        region.locator("summary", has_text="Challenge someone").click()
        form = region.locator("form.cc-start-form")
        form.get_by_label("Whom").select_option(label="Sophia")
        form.get_by_label("Bid").select_option("physical:Strong")
        form.get_by_role("button", name="Challenge").click()
        _see(a, "Waiting for the defender")
        _answer(d, bid="Tough")

        class S:  # what _throw reads
            pass

        s = S()
        s.a, s.d = a, d
        _throw(s, "rock", "scissors")
        _tap(d, "Take the result")
        _see(a, "Marcus wins")
        _see(st, "Marcus wins", "#challenge-board")
        # The sheet and its print.
        character = t.a.character_id
        a.goto(f"{live_url}/characters/{character}/")
        a.goto(f"{live_url}/characters/{character}/print/")
        a.goto(scene + "phone/")
        a.wait_for_timeout(300)
        _settle()
    assert night.heard == []
    assert _reports(caplog) == []


def test_a_player_who_taps_too_fast_sees_the_sentence_beside_the_button(
    browser, live_url, settings
) -> None:
    from playwright.sync_api import expect

    settings.THROTTLES = {**settings.THROTTLES, "player": (0.01, 3)}
    t = off_loop(make_table, "met_classic")
    night = Night(browser, live_url)
    a = night.login(t.a_user.username, PHONE)
    a.goto(f"{live_url}/scenes/{t.scene.pk}/phone/")
    expect(a.locator("[data-state=live]")).to_have_count(1)
    region = a.locator("#challenge-prompts")
    region.locator("summary", has_text="Challenge someone").click()
    button = region.locator("form.cc-start-form").get_by_role("button", name="Challenge")
    for _ in range(4):  # an empty form: refused (400) three times, then too many (429)
        with a.expect_response(lambda r: "/challenges/" in r.url) as answer:
            button.click()  # each tap answered before the next (none queued behind another)
        answer.value.finished()
    beside = region.locator("form.cc-start-form + .throttled")
    expect(beside).to_contain_text("Too many taps at once")
    assert night.heard == []
