"""Replies and pushes cross (static/js/crossing.js): a tap's answer and the pushes of the
scene's changes land in either order, and no region goes back in time.

On a loaded CI worker a phone's next prompt did not come into view after its player's
*Relent*: the relent's answer, rendered after the storyteller's next test, brought that test's
prompt (and brought it into view) before the relent's own push, which then drew the private
part as it was before the test: the prompt vanished, came back with the next push as a prompt
already seen (not brought into view, no buzz), under a page the swaps had moved. Here the
phone's socket is held back by Playwright until the answers are in, then let through one
message at a time: the order a loaded server makes now and then, every time.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.test_phone_prompts import (
    IN_VIEW_WAIT,
    PROMPT_IN_VIEW,
    PUSH,
    _buzzes,
    _far_down,
    _fight,
    _live,
    _phone,
    _prompt,
    _quiet,
    _see,
    _start_fight,
    _tap,
)
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import make_table

pytestmark = pytest.mark.django_db(transaction=True)
TABLET = {"width": 1280, "height": 800}


class HeldSocket:
    """A page's scene socket through Playwright (``route_web_socket``): the server's messages
    go through, or while ``holding`` wait in order, to be let through one at a time."""

    def __init__(self) -> None:
        self.holding = False
        self.held: list[str | bytes] = []
        self.route = None

    def __call__(self, ws) -> None:
        self.route = ws
        server = ws.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if self.holding:
                self.held.append(message)
            else:
                ws.send(message)

        server.on_message(from_server)

    def let_one_through(self, page) -> str:
        """The first message held goes to the page; back once the page has swapped it in."""
        swapped = page.evaluate("window.__pushes")
        message = self.held.pop(0)
        self.route.send(message)
        page.wait_for_function("(n) => window.__pushes > n", arg=swapped, timeout=PUSH)
        return message if isinstance(message, str) else message.decode()


def _players_seq(scene_pk: int) -> int:
    from combat.models import Scene

    return Scene.objects.get(pk=scene_pk).players_seq


def test_a_prompt_an_answer_brought_stays_in_view_when_older_pushes_land_after_it(
    browser, live_url
):
    """Sophia relents (her push held back), the storyteller calls a static test on her (held
    back too), she puts the finished card away: that answer shows the test's prompt and brings
    it into view. The held pushes then land, the oldest first: the prompt stays, in view, and
    the page ends on the scene's state."""
    from playwright.sync_api import expect

    t = off_loop(make_table, "met_classic")
    socket = HeldSocket()
    context, sophia = _phone(browser, live_url, t.d_user.username, t.scene.pk, sockets=socket)
    try:
        _live(sophia)
        off_loop(t.start, category="physical", bid="Strong")  # Marcus challenges Sophia
        _prompt(sophia, "Nothing to bid", buzzes=1)

        socket.holding = True
        _tap(sophia, "Relent")
        _tap(sophia, "Tap again to relent")
        _see(sophia, "Marcus wins")  # the answer; its push is held back
        _far_down(sophia)
        off_loop(
            t.start,
            by=t.st,
            attacker=t.d,
            defender=None,
            mode="static",
            category="mental",
            difficulty=4,
        )
        _tap(sophia, "Done: put this card away")
        now = sophia.locator("#prompts [data-now]").filter(has_text="Waiting for Sophia's bid")
        expect(now).to_have_count(1, timeout=PUSH)  # the answer brought it
        sophia.wait_for_function(PROMPT_IN_VIEW, arg="Waiting for Sophia's bid", timeout=PUSH)
        assert socket.held, "the pushes were held back"

        socket.holding = False
        seqs = []
        while socket.held:
            message = socket.let_one_through(sophia)
            seqs.append(max(int(s) for s in re.findall(r'data-seq="(\d+)"', message)))
            assert now.count() == 1, f"the prompt vanished under the push of seq {seqs[-1]}"
        assert min(seqs) < max(seqs), seqs  # older pushes did land after the answer
        sophia.wait_for_function(
            PROMPT_IN_VIEW, arg="Waiting for Sophia's bid", timeout=IN_VIEW_WAIT
        )
        seq = off_loop(_players_seq, t.scene.pk)
        # putting the card away pushed her prompts alone (fragments.PRIVATE_PIECES)
        expect(sophia.locator("#prompts")).to_have_attribute("data-seq", str(seq))
        expect(sophia.locator("#challenge-prompts")).not_to_contain_text("Marcus wins")
    finally:
        context.close()


def test_an_answer_that_brings_anothers_prompt_first_buzzes_once_for_it(browser, live_url):
    """Sophia's relent reaches the server after the storyteller has called a static test on her
    (its push held back): the relent's answer brings the test's prompt first, and brings it
    into view. That prompt is the storyteller's doing, not her tap's: one buzz for it, and
    none more when the test's own push lands."""
    from playwright.sync_api import expect

    t = off_loop(make_table, "met_classic")
    socket = HeldSocket()
    context, sophia = _phone(browser, live_url, t.d_user.username, t.scene.pk, sockets=socket)
    try:
        _live(sophia)
        off_loop(t.start, category="physical", bid="Strong")  # Marcus challenges Sophia
        _prompt(sophia, "Nothing to bid", buzzes=1)

        taps = []

        def hold_the_relent(route) -> None:
            if route.request.method == "POST" and "relent" in (route.request.post_data or ""):
                taps.append(route)
            else:
                route.continue_()

        sophia.route("**/challenges/**", hold_the_relent)
        socket.holding = True
        _tap(sophia, "Relent")
        _tap(sophia, "Tap again to relent")
        for _ in range(PUSH // 20):
            if taps:
                break
            sophia.wait_for_timeout(20)
        _far_down(sophia)
        off_loop(
            t.start,
            by=t.st,
            attacker=t.d,
            defender=None,
            mode="static",
            category="mental",
            difficulty=4,
        )
        taps[0].continue_()
        now = sophia.locator("#prompts [data-now]").filter(has_text="Waiting for Sophia's bid")
        expect(now).to_have_count(1, timeout=PUSH)  # the relent's answer brought it
        sophia.wait_for_function(PROMPT_IN_VIEW, arg="Waiting for Sophia's bid", timeout=PUSH)
        assert _buzzes(sophia) == 2
        assert socket.held, "the pushes were held back"

        socket.holding = False
        while socket.held:
            socket.let_one_through(sophia)
        _quiet(sophia, 2)
        sophia.unroute("**/challenges/**")
    finally:
        context.close()


def _log_in(page, live_url: str, username: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill("pw-for-tests")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")


def _initiative(st, scene_pk: int, participant, roll: int) -> None:
    from combat.models import Combat
    from combat.rounds import initiative

    combat = Combat.objects.get(scene_id=scene_pk)
    initiative.combat_initiative(combat=combat, by=st, participant=participant, roll=roll)


def test_a_refusal_older_than_the_board_leaves_the_board_as_it_is_and_says_why(browser, live_url):
    """The storyteller taps *Start the round* before every initiative is in (D3: refused); the
    refusal's answer is held back until Jane's initiative has come by a push. The board keeps
    her initiative (the refusal drew the board before it), and the sentence is shown."""
    from playwright.sync_api import expect

    scene_pk, st, cast = off_loop(_fight)
    context = browser.new_context(viewport=TABLET)
    tablet = context.new_page()
    try:
        _log_in(tablet, live_url, "st")
        tablet.goto(f"{live_url}/scenes/{scene_pk}/")
        expect(tablet.locator("#scene-freshness")).to_contain_text("live", timeout=PUSH)
        off_loop(_start_fight, st, scene_pk, cast)
        begin = tablet.get_by_role("button", name="Start the round")
        expect(begin).to_be_visible(timeout=PUSH)

        answers = []
        tablet.route("**/combat/begin/", lambda route: answers.append((route, route.fetch())))
        begin.click()
        for _ in range(PUSH // 20):  # the handler's fetch may still be reading the answer
            if answers:
                break
            tablet.wait_for_timeout(20)
        route, answer = answers[0]
        assert answer.status == 409

        off_loop(_initiative, st, scene_pk, cast["jane"], 5)  # Dexterity 3 + Wits 3 + 5
        initiatives = tablet.locator("#combat .initiative")
        expect(initiatives).to_contain_text("Jane 11", timeout=PUSH)
        route.fulfill(response=answer)
        tablet.unroute("**/combat/begin/")

        flash = tablet.locator("#combat .flash[role=alert]")
        expect(flash).to_contain_text("D3", timeout=PUSH)
        expect(initiatives).to_contain_text("Jane 11")
    finally:
        context.close()
