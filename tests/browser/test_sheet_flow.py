"""Issue 4's whole flow in a real browser: import a Grapevine chronicle in the admin, edit a
sheet there, record what the night cost, and the player sees it on their phone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories import ChronicleFactory, GameNightFactory, StorytellerFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)
GEX = (
    Path(__file__).parents[1]
    / "characters"
    / "data"
    / "grapevine"
    / "chronicle_camarilla_five_xml.gex"
)


def _log_in(page, live_url: str, username: str, password: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_it_imports_edits_charges_and_shows_the_sheet(live_url: str, browser) -> None:
    from playwright.sync_api import expect

    storyteller = StorytellerFactory(username="st", password="st-password")
    chronicle = ChronicleFactory(name="Phoenix by Night")
    chronicle.storytellers.add(storyteller)
    GameNightFactory(chronicle=chronicle, number=1)
    UserFactory(username="adam", password="adam-password")

    tablet = browser.new_context(viewport={"width": 1024, "height": 800}).new_page()
    _log_in(tablet, live_url, "st", "st-password")
    tablet.goto(f"{live_url}/admin/characters/chronicle/")
    tablet.get_by_role("link", name="Import a .gex file").click()
    tablet.set_input_files("input[type=file]", str(GEX))
    tablet.get_by_role("button", name="Import").click()
    expect(tablet.get_by_text("imported 5 characters (5 new, 0 updated)")).to_be_visible()

    tablet.get_by_role("link", name="Adam St. Charles").click()
    tablet.select_option("select[name=player]", label="adam")
    tablet.fill("input[name=willpower]", "6")
    tablet.get_by_role("button", name="Save", exact=True).click()
    expect(tablet.get_by_text("was changed successfully")).to_be_visible()

    tablet.goto(f"{live_url}/chronicles/{chronicle.pk}/")
    tablet.get_by_text("Record a cost by hand").click()
    tablet.select_option("select[name=character]", label="Adam St. Charles")
    tablet.select_option("select[name=kind]", value="trait_lost")
    tablet.select_option("select[name=subject]", label="Stalwart (physical) 3/3")
    tablet.fill("input[name=reason]", "lost a brawl")
    tablet.get_by_role("button", name="Record", exact=True).click()
    expect(tablet.get_by_text("Recorded for Adam St. Charles")).to_be_visible()

    phone = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    _log_in(phone, live_url, "adam", "adam-password")
    phone.get_by_role("link", name="Adam St. Charles").click()
    expect(phone.get_by_label("2 of 3 left")).to_be_visible()
    expect(phone.locator("s.dot.lost")).to_have_count(1)
    expect(phone.locator(".pool").first).to_contain_text("6/6")
    expect(phone.get_by_text("lost a brawl")).to_be_visible()
    phone.screenshot(path=str(Path("var") / "phone-sheet.png"), full_page=True)
