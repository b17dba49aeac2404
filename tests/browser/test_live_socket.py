"""What a real browser sees of the live socket's refusals and of a logout elsewhere."""

from __future__ import annotations

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

CLOSE_CODE_JS = """
(path) => new Promise((resolve) => {
  const socket = new WebSocket(location.origin.replace("http", "ws") + path);
  socket.onclose = (event) => resolve(event.code);
})
"""


def test_it_tells_the_browser_why_a_socket_was_refused(live_url: str, page) -> None:
    page.goto(f"{live_url}/accounts/login/")
    assert page.evaluate(CLOSE_CODE_JS, "/ws/live/") == 4401, "nobody logged in"
    assert page.evaluate(CLOSE_CODE_JS, "/ws/nowhere/") == 4404, "no such socket"


def test_it_closes_the_live_socket_when_the_session_logs_out(live_url: str, browser) -> None:
    from playwright.sync_api import expect

    UserFactory(username="lotte", password="lotte-password")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        sheet, other_tab = context.new_page(), context.new_page()
        sheet.goto(f"{live_url}/accounts/login/")
        sheet.get_by_label("User name").fill("lotte")
        sheet.get_by_label("Password").fill("lotte-password")
        sheet.get_by_role("button", name="Log in").click()
        expect(sheet.locator("#live-status")).to_contain_text("live", timeout=10_000)

        other_tab.goto(f"{live_url}/")  # same session, another tab: log out there
        other_tab.get_by_role("button", name="Log out").click()
        expect(other_tab.get_by_role("heading", name="Log in")).to_be_visible()

        expect(sheet.locator("#live-status")).to_have_text("logged out", timeout=10_000)
    finally:
        context.close()
