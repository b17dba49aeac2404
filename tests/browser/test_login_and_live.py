"""A newcomer logs in in a real browser and the page's websocket goes live."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_logs_in_and_connects_the_live_socket(live_url: str, page) -> None:
    from playwright.sync_api import expect

    get_user_model().objects.create_user(username="storyteller", password="storyteller")
    page.goto(f"{live_url}/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_label("User name").fill("storyteller")
    page.get_by_label("Password").fill("storyteller")
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("heading", name="Welcome, storyteller")).to_be_visible()
    # The server sends the whole state on connect; htmx swaps it in by id.
    status = page.locator("#live-status")
    expect(status).to_have_attribute("data-user", "storyteller", timeout=10_000)
    expect(status).to_contain_text("live")


def test_it_shows_a_clear_message_for_a_wrong_password(live_url: str, page) -> None:
    from playwright.sync_api import expect

    get_user_model().objects.create_user(username="melvin", password="melvin-pass")
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill("melvin")
    page.get_by_label("Password").fill("not-it")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("do not match")
