"""Issue 17 end to end: a storyteller starts the venue command on a fresh database (a real
subprocess on a free loopback port, DEBUG off), sets the first account's password by the
one-time link, makes a chronicle, imports a real Grapevine file, gives a character to a player,
opens the night and a scene, prints the login cards; a phone on an address that is not a secure
context (a host name other than localhost, as the venue's LAN address is) logs in by its card's
QR, lands in the scene, plays a static challenge against the storyteller and stays awake with
nosleep.js (the Wake Lock API does not exist there).

Everything the storyteller does goes through the pages; nothing is written to the database by
the test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, _free_port

ROOT = Path(__file__).resolve().parents[2]
# The shared real files beside the clone (../shared), as CI has them.
GEX = next(
    (
        base / "data" / "grapevine" / "chronicle_camarilla_five_xml.gex"
        for base in (ROOT.parent / "shared", ROOT.parent.parent / "shared")
        if (base / "data" / "grapevine").is_dir()
    ),
    ROOT.parent / "shared" / "data" / "grapevine" / "chronicle_camarilla_five_xml.gex",
)
PHONE_HOST = "venue-phone.test"  # not localhost: Chromium gives it no secure context
PASSWORD = "Night-Owl-2026"
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 1280, "height": 800}


class Venue:
    """``manage.py venue`` in a subprocess; its output is read as it comes."""

    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
        env.update(
            SQLITE_PATH=str(tmp / "venue.sqlite3"),
            SECRET_KEY_FILE=str(tmp / "secret_key"),
            ALLOWED_HOSTS=f"localhost,127.0.0.1,{PHONE_HOST}",
            PYTHONUNBUFFERED="1",
        )
        env.pop("DEBUG", None)
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "venue", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"{pattern!r} never came:\n" + "\n".join(self.lines))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def venue(tmp_path: Path) -> Iterator[Venue]:
    running = Venue(tmp_path)
    yield running
    running.stop()


@pytest.fixture
def lan_browser() -> Iterator[object]:
    """Chromium that resolves PHONE_HOST to loopback, as a phone resolves the LAN address."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {PHONE_HOST} 127.0.0.1"],
        )
        yield chromium
        chromium.close()


def _admin_save(page) -> None:
    page.locator("input[name=_save]").click()


def test_a_storyteller_runs_a_night_and_a_phone_plays_by_its_card(venue, lan_browser) -> None:
    from playwright.sync_api import expect

    if not GEX.exists():
        pytest.skip(f"{GEX} is not here")
    link = venue.wait_for(r"(http://localhost:\d+/accounts/reset/\S+)").group(1)
    venue.wait_for(r"INFO uvicorn.error: Uvicorn running")
    base = f"http://localhost:{venue.port}"
    assert not any("Demo logins" in line for line in venue.lines)

    st = lan_browser.new_context(viewport=TABLET).new_page()
    st.on("dialog", lambda dialog: dialog.accept())
    # the first account: its password by the one-time link
    st.goto(link)
    st.get_by_label("Password", exact=True).fill(PASSWORD)
    st.get_by_label("Password again").fill(PASSWORD)
    st.get_by_role("button", name="Set the password").click()
    expect(st.locator("h1")).to_have_text("Password set")
    st.get_by_role("link", name="Log in").click()
    st.get_by_label("User name").fill("storyteller")
    st.get_by_label("Password").fill(PASSWORD)
    st.get_by_role("button", name="Log in").click()
    st.wait_for_url(f"{base}/")

    # a chronicle, the real file imported into it
    st.goto(f"{base}/admin/characters/chronicle/add/")
    st.locator("#id_name").fill("Camarilla by Night")
    st.locator("#id_ruleset").select_option("met_classic")
    _admin_save(st)
    chronicle_id = re.search(
        r"/chronicle/(\d+)/",
        st.locator("a", has_text="Camarilla by Night").first.get_attribute("href"),
    ).group(1)
    st.goto(f"{base}/admin/characters/chronicle/{chronicle_id}/grapevine/")
    st.locator("input[type=file]").set_input_files(str(GEX))
    st.locator("input[type=submit], button[type=submit]").last.click()
    expect(st.locator(".messagelist")).to_contain_text("5 new")

    # a player's account (cards only: no password) and a character for them
    st.goto(f"{base}/admin/auth/user/add/")
    st.locator("#id_username").fill("ana")
    disabled = st.locator("input[name=usable_password][value=false]")
    if disabled.count():
        disabled.check()
    else:
        st.locator("#id_password1").fill("Ana-Card-Only-1")
        st.locator("#id_password2").fill("Ana-Card-Only-1")
    _admin_save(st)
    st.goto(f"{base}/admin/characters/character/?chronicle__id__exact={chronicle_id}")
    first = st.locator("#result_list tbody tr th a").first
    character = first.inner_text().strip()
    first.click()
    st.locator("#id_player").select_option(label="ana")
    st.locator("#id_npc").uncheck()  # the file marks every sheet npc="yes"
    _admin_save(st)
    expect(st.locator(".messagelist")).to_contain_text("changed successfully")

    # the night, a scene, the cards
    st.goto(f"{base}/chronicles/{chronicle_id}/")
    st.get_by_role("button", name="Open the next game night").click()
    expect(st.locator("main")).to_contain_text("game night 1 open")
    st.goto(f"{base}/scenes/")
    st.locator("#id_chronicle").select_option(chronicle_id)
    st.locator("#id_name").fill("Elysium")
    st.locator("form.open-scene button[type=submit]").click()
    expect(st.locator("#scene-board")).to_be_visible()
    tablet_url = st.url

    cards = st.context.new_page()
    cards.goto(f"{base}/chronicles/{chronicle_id}/")
    cards.get_by_role("link", name="Login cards for night 1").click()
    cards.get_by_role("button", name="Make and print cards for every player").click()
    card = cards.locator(".login-card")
    expect(card).to_have_count(1)
    expect(card).to_contain_text(character)
    qr_url = card.locator("svg title").text_content()
    code = card.locator(".code").inner_text()
    assert qr_url.endswith("/card/#" + code.replace("-", ""))

    # the phone: the QR's address, on a host name that is no secure context
    fragment = urlsplit(qr_url).fragment
    phone = lan_browser.new_context(viewport=PHONE).new_page()
    phone.goto(f"http://{PHONE_HOST}:{venue.port}/card/#{fragment}")
    phone.wait_for_url(re.compile(r"/scenes/\d+/phone/$"))
    assert phone.evaluate("window.isSecureContext") is False
    assert phone.evaluate("'wakeLock' in navigator") is False
    expect(phone.locator("[data-state=live]")).to_have_count(1)
    assert fragment not in "\n".join(venue.lines), "the code is in no log line"
    assert phone.evaluate("document.documentElement.dataset.awake") is None
    phone.locator("#scene-freshness").click()  # the first tap engages nosleep.js
    expect(phone.locator("html")).to_have_attribute("data-awake", "nosleep")

    # a static challenge against the storyteller (C11)
    st.goto(tablet_url)
    # the whole state has landed: a click while its swap replaces the summary can be lost
    expect(st.locator("[data-state=live]")).to_have_count(1)
    board = st.locator("#challenge-board")
    board.locator("summary", has_text="Test a player's character").click()
    form = board.locator("form", has_text="Start the test")
    form.get_by_label("Character").select_option(label=character)
    form.get_by_label("Kind").select_option("static")
    form.get_by_label("Category").select_option("mental")
    form.get_by_label("Difficulty").fill("5")
    form.get_by_role("button", name="Start the test").click()
    prompts = phone.locator("#challenge-prompts")
    expect(prompts).to_contain_text("mental · difficulty 5", timeout=8000)
    bid = phone.locator("form.cc-answer").get_by_label("Bid")
    bid.select_option(index=1)
    phone.locator("form.cc-answer").get_by_role("button", name="Bid").click()
    expect(prompts).to_contain_text("to throw", timeout=8000)
    prompts.get_by_role("button", name="Rock", exact=True).first.click()
    expect(board).to_contain_text("locked in", timeout=8000)
    st.locator("#challenge-board .cc-st-side").get_by_role(
        "button", name="Scissors", exact=True
    ).first.click()
    expect(board).to_contain_text(f"{character} is winning", timeout=8000)
    st.locator("#challenge-board .cc-st-side").get_by_role(
        "button", name="Take the result", exact=True
    ).first.click()
    expect(prompts).to_contain_text(f"{character} wins", timeout=8000)
    # still awake after the challenge's pushes
    assert phone.evaluate("document.documentElement.dataset.awake") == "nosleep"

    # the card is good for this night only: a new night makes it worth nothing
    st.goto(f"{base}/chronicles/{chronicle_id}/")
    st.get_by_role("button", name="Open the next game night").click()
    expect(st.locator("main")).to_contain_text("game night 2 open")
    again = lan_browser.new_context(viewport=PHONE).new_page()
    again.goto(f"http://{PHONE_HOST}:{venue.port}/card/#{fragment}")
    expect(again.locator("[role=alert]")).to_contain_text("not a login card for tonight")
