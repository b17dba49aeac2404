"""Issue 19 on 390 x 844 phones, a grapple and a chase: the prompt that becomes a player's (the
Victim's and the Grappler's declarations, G2; the winner's maneuver, K6-K8; a Predator's
Damnit! and the Prey's Nope! before an obstacle, K9) is in view when it arrives, the phone read
far down its sheet before; the phone buzzes for its player's own turn only (navigator.vibrate
intercepted). Bug 8: a finished chase leaves the phones when the next fight starts, and that
fight's prompt comes into view.

The storyteller's moves (and an NPC's) are made through the services beside the browsers; the
players tap their phones."""

from __future__ import annotations

import pytest

from tests.browser.test_phone_prompts import (
    PUSH,
    _far_down,
    _fight,
    _live,
    _phone,
    _prompt,
    _quiet,
    _round,
    _start_fight,
)
from tests.browser.threads import off_loop

pytestmark = pytest.mark.django_db(transaction=True)


def _combat(scene_pk: int):
    from combat.models import Combat

    return Combat.objects.get(scene_id=scene_pk, ended_at__isnull=True)


def _declare_for(st, scene_pk: int, participant, action: str) -> None:
    from combat.rounds import declaring

    declaring.combat_declare(
        combat=_combat(scene_pk), by=st, participant=participant, action=action
    )


def _resolve_all(st, scene_pk: int, cast: dict, dice: dict) -> None:
    """The storyteller resolves the round, fastest first (``dice``: the table's, by name)."""
    from combat.models import CombatStage
    from combat.rounds import reads, resolving

    combat = _combat(scene_pk)
    while combat.stage == CombatStage.ROUND:
        state = reads.wod_state(combat)
        up = [w for w in state.up if w not in state.resolved]
        name, participant = next((n, p) for n, p in cast.items() if p.pk == int(up[0]))
        resolving.combat_resolve(
            combat=combat, by=st, participant=participant, **dice.get(name, {})
        )
        combat = _combat(scene_pk)


def _next_round(st, scene_pk: int) -> None:
    from combat.rounds import bookkeeping

    bookkeeping.combat_book_keeping(combat=_combat(scene_pk), by=st)
    bookkeeping.combat_next_round(combat=_combat(scene_pk), by=st)


def _grapple(scene_pk: int) -> list[dict]:
    from combat.models import Combat

    return Combat.objects.get(pk=_combat(scene_pk).pk).grapples


def _actions(phone) -> list[str]:
    form = phone.locator("#round-prompts form.declare-form")
    return form.locator("select[name=action] option").evaluate_all(
        "(options) => options.map((o) => o.value)"
    )


def _declare(phone, action: str, target: str = "") -> None:
    form = phone.locator("#round-prompts form.declare-form")
    form.locator("select[name=action]").select_option(action)
    if target:
        form.locator("select[name=target]").select_option(label=target)
    form.get_by_role("button", name="Declare").click()


def test_a_grapples_prompts_come_into_view_and_buzz_only_for_their_own_turn(browser, live_url):
    """G1: Jane grapples Frank (Control 3). Next round Frank, the Victim, declares first: only
    resist, reverse or relent (G2), brought into view with one buzz; then Jane, the Grappler:
    sustain or release. Neither phone buzzes for the other's turn nor for its own tap."""
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

        # Round 1, slowest first: Frank 7, the Thug 14, Jane 15.
        _far_down(jane, frank)
        off_loop(_round, st, scene_pk, cast, {"jane": 9, "frank": 1, "thug": 10})
        _prompt(frank, "Declare now: Frank", buzzes=2)
        _quiet(jane, 1)
        _far_down(jane)
        _declare(frank, "dodge")
        expect(frank.locator("#round-prompts")).to_contain_text("Frank declared", timeout=PUSH)
        off_loop(_declare_for, st, scene_pk, cast["thug"], "dodge")
        _prompt(jane, "Declare now: Jane", buzzes=2, name="grapple-declare-jane")
        _declare(jane, "grapple", "Frank")
        expect(jane.locator("#round-prompts")).to_contain_text("Jane declared", timeout=PUSH)
        _quiet(jane, 2)
        _quiet(frank, 2)
        # Strength 3 + Brawl 0: 3 dice, 3 successes; Frank's dodge 3 dice, none: Control 3.
        off_loop(
            _resolve_all,
            st,
            scene_pk,
            cast,
            {"jane": {"attack_dice": "8 9 10", "defense_dice": "2 2 2"}},
        )
        grapples = off_loop(_grapple, scene_pk)
        assert [g["control"] for g in grapples] == [3]
        off_loop(_next_round, st, scene_pk)
        _prompt(jane, "Roll initiative", buzzes=3)
        _prompt(frank, "Roll initiative", buzzes=3)

        # Round 2: the Victim first (G2), the Grappler last.
        _far_down(jane, frank)
        off_loop(_round, st, scene_pk, cast, {"jane": 9, "frank": 1, "thug": 10})
        _prompt(frank, "Declare now: Frank", buzzes=4, name="grapple-victim")
        _quiet(jane, 3)
        assert set(_actions(frank)) == {"resist", "reverse", "relent"}
        _far_down(jane)
        _declare(frank, "resist")
        expect(frank.locator("#round-prompts")).to_contain_text("Frank declared", timeout=PUSH)
        _quiet(frank, 4)
        off_loop(_declare_for, st, scene_pk, cast["thug"], "dodge")
        _prompt(jane, "Declare now: Jane", buzzes=4, name="grapple-grappler")
        _quiet(frank, 4)
        assert {"sustain", "release"} <= set(_actions(jane))
        _declare(jane, "sustain")
        expect(jane.locator("#round-prompts")).to_contain_text("Jane declared", timeout=PUSH)
        _quiet(jane, 4)
        _quiet(frank, 4)
    finally:
        for context in contexts:
            context.close()


# --- a chase --------------------------------------------------------------------------------


def _chase(scene_pk: int, st, cast: dict) -> int:
    """Frank pursues Jane from an escape (K4), a head start of 5."""
    from chases import starting
    from combat.models import Scene

    chase = starting.start_chase(
        scene=Scene.objects.get(pk=scene_pk),
        by=st,
        predators=[cast["frank"]],
        prey=cast["jane"],
        start="escape",
        head_start=5,
    )
    return chase.pk


def _chase_round(st, chase_pk: int, dice: dict) -> None:
    from chases import running
    from chases.models import Chase
    from chases.tokens import token_of

    chase = Chase.objects.get(pk=chase_pk)
    running.chase_round(chase=chase, by=st, token=token_of(chase), dice=dice)


def _obstacle(st, chase_pk: int, label: str, facing: tuple[str, ...] = ()) -> None:
    """The storyteller sets an obstacle (``facing``: engine keys; none: whom a maneuver put
    before one)."""
    from chases import obstacles
    from chases.models import Chase

    obstacles.chase_obstacle_set(
        chase=Chase.objects.get(pk=chase_pk),
        by=st,
        label=label,
        difficulty=7,
        pool=("dexterity", "athletics"),
        facing=facing,
    )


def _roll_obstacle(st, chase_pk: int) -> None:
    from chases import obstacles
    from chases.models import Chase

    obstacles.chase_obstacle_roll(chase=Chase.objects.get(pk=chase_pk), by=st)


def _call_off(st, chase_pk: int) -> None:
    from chases import running
    from chases.models import Chase
    from chases.tokens import token_of

    chase = Chase.objects.get(pk=chase_pk)
    running.chase_call_off(chase=chase, by=st, token=token_of(chase))


def test_a_chases_prompts_come_into_view_and_a_finished_chase_leaves_with_the_next_fight(
    browser, live_url
):
    """K6-K8: Jane wins the round: her maneuvers come into view with one buzz, Frank's phone
    stays quiet. Her Quick Reverse puts Frank before an obstacle (K9): his Damnit! comes into
    view with one buzz; then Jane faces one: her Nope! likewise. The storyteller calls the
    chase off: its ending is on both phones until the next fight starts (bug 8), whose
    initiative prompt then comes into view."""
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
        chase_pk = off_loop(_chase, scene_pk, st, cast)
        for phone in (jane, frank):
            expect(phone.locator("#chase-prompts .chase-role")).to_be_visible(timeout=PUSH)

        # Dexterity 3 + Athletics 0: Jane's 3 dice, 3 successes; Frank's none: Lead 5 + 3.
        _far_down(jane, frank)
        frank_key = f"p{cast['frank'].pk}"
        off_loop(_chase_round, st, chase_pk, {"prey": [9, 9, 8], frank_key: [2, 2, 2]})
        _prompt(jane, "Jane won the round", buzzes=1, name="chase-maneuvers")
        _quiet(frank, 0)
        _far_down(frank)
        jane.locator("#chase-prompts button[data-maneuver=quick_reverse]").click()
        expect(frank.locator("#chase-public")).to_contain_text("Quick Reverse", timeout=PUSH)
        _quiet(jane, 1)
        _quiet(frank, 0)

        _far_down(jane, frank)
        off_loop(_obstacle, st, chase_pk, "A chain-link fence")
        _prompt(frank, "Obstacle: A chain-link fence", buzzes=1, name="chase-damnit")
        _quiet(jane, 1)
        frank.locator("#chase-prompts button[data-maneuver=damnit]").click()
        expect(jane.locator("#chase-public")).to_contain_text("Damnit!", timeout=PUSH)
        _quiet(frank, 1)
        _quiet(jane, 1)
        off_loop(_roll_obstacle, st, chase_pk)

        # Between rounds the storyteller puts Jane before an obstacle: her Nope! (−3 Lead).
        _far_down(jane, frank)
        off_loop(_obstacle, st, chase_pk, "Rush-hour traffic", ("prey",))
        _prompt(jane, "Obstacle: Rush-hour traffic", buzzes=2, name="chase-nope")
        _quiet(frank, 1)
        jane.locator("#chase-prompts button[data-maneuver=nope]").click()
        expect(frank.locator("#chase-public")).to_contain_text("Nope!", timeout=PUSH)
        _quiet(jane, 2)
        _quiet(frank, 1)

        # Bug 8: the ending stays until the scene moves on to a fight, then leaves the phones.
        off_loop(_call_off, st, chase_pk)
        for phone in (jane, frank):
            expect(phone.locator("#chase-public .chase-ending")).to_be_visible(timeout=PUSH)
        _far_down(jane, frank)
        off_loop(_start_fight, st, scene_pk, cast)
        _prompt(jane, "Roll initiative", buzzes=3)
        _prompt(frank, "Roll initiative", buzzes=2)
        for phone in (jane, frank):
            expect(phone.locator("#chase-public")).not_to_contain_text("Chase:", timeout=PUSH)
            expect(phone.locator("#chase-prompts .chase-role")).to_have_count(0)
    finally:
        for context in contexts:
            context.close()
