"""Live sync of a round: what each phone is pushed equals a fresh render of its state, at every
phase change; and no payload a player receives carries what the rules hide (D3, hidden NPCs)."""

from __future__ import annotations

import random

from combat import fragments, live
from combat.models import Combat, Presence, Scene
from combat.rounds.answers import combat_answer_committed
from combat.rounds.bns_reads import engine_of
from combat.rounds.bookkeeping import combat_book_keeping, combat_next_round, combat_remind
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.resolving import combat_resolve
from combat.rounds.starting import combat_start
from combat.rounds.storyteller import combat_add_effect, combat_pause
from tests.live_pages import apply, as_shown, pieces


def _fresh_scene(cast) -> Scene:
    return Scene.objects.get(pk=cast.scene.pk)


def _run(cast, rng):
    """A main phase and a haste phase with a hidden NPC among the fighters, step by step."""
    p, st, users = cast.p, cast.storyteller, cast.users
    names = ("Jane", "Frank", "Teddy", "Lurker")
    yield (
        "start",
        lambda: combat_start(scene=cast.scene, by=st, participants=[p[n] for n in names]),
    )
    combat = Combat.objects.get
    for name, die in (("Jane", 5), ("Frank", 1), ("Teddy", 4), ("Lurker", 2)):
        yield (
            f"initiative {name}",
            lambda name=name, die=die: combat_initiative(
                combat=combat(), by=st, participant=p[name], roll=die
            ),
        )
    yield "begin", lambda: combat_begin_round(combat=combat(), by=st)
    yield (
        "declare Frank",
        lambda: combat_declare(
            combat=combat(), by=users["Frank"], participant=p["Frank"], action="dodge"
        ),
    )
    yield (
        "declare Lurker",
        lambda: combat_declare(
            combat=combat(), by=st, participant=p["Lurker"], action="attack", target=p["Jane"]
        ),
    )
    yield (
        "declare Teddy",
        lambda: combat_declare(
            combat=combat(),
            by=users["Teddy"],
            participant=p["Teddy"],
            action="attack",
            target=p["Frank"],
            haste=1,
        ),
    )
    yield (
        "declare Jane",
        lambda: combat_declare(
            combat=combat(), by=users["Jane"], participant=p["Jane"], action="block"
        ),
    )
    for name in ("Jane", "Teddy", "Lurker", "Frank"):
        yield (
            f"resolve {name}",
            lambda name=name: combat_resolve(combat=combat(), by=st, participant=p[name], rng=rng),
        )
    yield (
        "haste declare Teddy",
        lambda: combat_declare(
            combat=combat(),
            by=users["Teddy"],
            participant=p["Teddy"],
            action="attack",
            target=p["Frank"],
        ),
    )
    yield (
        "haste resolve Teddy",
        lambda: combat_resolve(combat=combat(), by=st, participant=p["Teddy"], rng=rng),
    )
    yield "book keeping", lambda: combat_book_keeping(combat=combat(), by=st)
    yield "next round", lambda: combat_next_round(combat=combat(), by=st)


def test_every_push_equals_a_fresh_render_for_every_phone(
    cast, pushes, django_capture_on_commit_callbacks
):
    """What each phone shows after every step equals a fresh render of its state: pushed when
    it changed, and left alone (no fragment, no ``seq``) when only the hidden NPC stepped. A
    phone applies what it is pushed as htmx does (a private part may come whole or as its
    prompts and log), from the state it got on connect."""
    rng = random.Random(11)
    players = cast.users
    Presence.objects.create(scene=cast.scene, user=cast.storyteller, channel_name="tablet.1")

    def fresh_of(scene: Scene) -> dict[str, str]:
        fresh = {live.players_group(scene.pk): fragments.players_state(scene)}
        for user in players.values():
            fresh[live.player_group(scene.pk, user.pk)] = fragments.private_state(scene, user)
        return fresh

    shown = {group: pieces(html) for group, html in fresh_of(_fresh_scene(cast)).items()}
    seq = 0
    unseen = {"initiative Lurker", "declare Lurker"}  # its attack on Jane is seen
    for label, step in _run(cast, rng):
        pushes.clear()
        with django_capture_on_commit_callbacks(execute=True):
            step()
        scene = _fresh_scene(cast)
        sent = {s.group: s.html for s in pushes}
        assert sent[live.storytellers_group(scene.pk)] == fragments.board_regions(scene), label
        if label in unseen:  # no public part, no new seq: no phone can count the step
            assert live.players_group(scene.pk) not in sent, label
            assert scene.players_seq == seq, label
        seq = scene.players_seq
        for push in pushes:
            if push.group in shown:
                apply(shown[push.group], push.html)
        for group, html in fresh_of(scene).items():
            # D4: a hidden step may end the previous declarer's chance to change
            want = as_shown(pieces(html), scene.seq)
            assert as_shown(shown[group], scene.seq) == want, f"{label}: {group} is stale"


def test_no_player_payload_names_a_hidden_npc_or_a_tied_declaration(
    cast, pushes, django_capture_on_commit_callbacks
):
    rng = random.Random(5)
    Presence.objects.create(scene=cast.scene, user=cast.storyteller, channel_name="tablet.1")
    with django_capture_on_commit_callbacks(execute=True):
        for _label, step in _run(cast, rng):
            step()
    to_players = [s for s in pushes if not s.group.endswith(".st")]
    to_storyteller = [s for s in pushes if s.group.endswith(".st")]
    assert to_players and to_storyteller
    assert not [s.group for s in to_players if "Lurker" in s.html]
    assert any("Lurker" in s.html for s in to_storyteller)
    # Declarations are heard as they are made (D4) ...
    assert any("Attack on Frank" in s.html for s in to_players)


def test_tied_characters_declare_privately_to_the_storyteller(
    cast, pushes, django_capture_on_commit_callbacks
):
    """D3: Teddy and the Twin tie on the total and on the unrolled part (Dexterity 3 +
    Wits 3): they declare at the same time, privately, until they resolve."""
    from combat import services as scene_services

    p, st = cast.p, cast.storyteller
    twin = scene_services.scene_add_npc(
        scene=cast.scene, by=st, name="Twin", pools={"Dexterity": 3, "Wits": 3, "Brawl": 2}
    )
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Frank"], p["Teddy"], twin])
    for who, die in ((p["Frank"], 1), (p["Teddy"], 4), (twin, 4)):
        combat_initiative(combat=combat, by=st, participant=who, roll=die)
    combat_begin_round(combat=combat, by=st)
    combat_declare(combat=combat, by=cast.users["Frank"], participant=p["Frank"], action="dodge")
    pushes.clear()
    with django_capture_on_commit_callbacks(execute=True):
        combat_declare(
            combat=combat,
            by=cast.users["Teddy"],
            participant=p["Teddy"],
            action="attack",
            target=p["Frank"],
        )
        combat_declare(combat=combat, by=st, participant=twin, action="attack", target=p["Frank"])
    scene = _fresh_scene(cast)
    teddy_private = live.player_group(scene.pk, cast.users["Teddy"].pk)
    leaks = [
        s.group
        for s in pushes
        if s.group not in (live.storytellers_group(scene.pk), teddy_private)
        and "Attack on Frank" in s.html
    ]
    assert leaks == []
    assert any("Attack on Frank" in s.html for s in pushes if s.group == teddy_private)
    assert "Attack on Frank" in fragments.storyteller_state(scene)
    combat_resolve(combat=Combat.objects.get(), by=st, participant=p["Teddy"], rng=random.Random(1))
    assert "Attack on Frank" in fragments.players_state(_fresh_scene(cast))  # resolved: heard


def _relent(scene, defender) -> None:
    """The target of the open challenge relents (C2), so its attacker may attack again."""
    from combat.challenges.answering import challenge_answer
    from combat.models import Challenge

    ch = Challenge.objects.get(defender=defender, status="answer")
    challenge_answer(
        scene=scene, challenge=ch, by=defender.character.player, side="defender", answer="relent"
    )


def _bns_run(docks):
    from combat.rounds import bns

    st, users, p, scene = docks
    combat = Combat.objects.get
    yield (
        "start",
        lambda: bns.bns_start(
            scene=scene, by=st, participants=list(p.values()), rng=random.Random(3)
        ),
    )
    yield "mediate", lambda: bns.bns_mediate(combat=combat(), by=st, agreed=False)
    yield (
        "celerity",
        lambda: bns.bns_celerity(combat=combat(), by=users["Ana"], participant=p["Ana"], rounds=1),
    )
    yield "assess", lambda: bns.bns_assess(combat=combat(), by=st, participants=list(p.values()))
    yield (
        "act",
        lambda: bns.bns_act(
            combat=combat(),
            by=users["Ana"],
            participant=p["Ana"],
            standard="attack",
            target=p["Cy"],
        ),
    )
    yield (
        "escape",
        lambda: bns.bns_escape_announce(combat=combat(), by=users["Bo"], participant=p["Bo"]),
    )
    yield (
        "intent",
        lambda: bns.bns_escape_intent(combat=combat(), by=users["Cy"], participant=p["Cy"]),
    )
    yield "settle", lambda: bns.bns_escape_settle(combat=combat(), by=st)
    yield (
        "cy",
        lambda: bns.bns_act(combat=combat(), by=users["Cy"], participant=p["Cy"], simple="move"),
    )
    yield "end round", lambda: (_relent(scene, p["Cy"]), bns.bns_end_round(combat=combat(), by=st))
    yield (
        "celerity round",
        lambda: bns.bns_act(
            combat=combat(),
            by=users["Ana"],
            participant=p["Ana"],
            standard="attack",
            target=p["Cy"],
        ),
    )
    yield "end turn", lambda: bns.bns_end_round(combat=combat(), by=st)


def test_every_met_bns_push_equals_a_fresh_render_for_every_phone(
    docks, pushes, django_capture_on_commit_callbacks
):
    _st, users, _p, scene = docks
    for label, step in _bns_run(docks):
        pushes.clear()
        with django_capture_on_commit_callbacks(execute=True):
            step()
        fresh = Scene.objects.get(pk=scene.pk)
        sent = {s.group: s.html for s in pushes}
        assert sent[live.players_group(fresh.pk)] == fragments.players_state(fresh), label
        for user in users.values():
            group = live.player_group(fresh.pk, user.pk)
            # whole, or its prompts and log (the participants stay)
            assert sent[group] == fragments.private_pieces(fresh, user), label


def test_a_push_mid_declaration_keeps_the_half_filled_form(
    cast, pushes, django_capture_on_commit_callbacks
):
    """The declare form is kept (data-keep, static/js/scene.js) under an id made of the state: a
    push that leaves the state as it is (a pause, the clock) carries the same id, so the page keeps
    the form the player is filling in; a declaration draws a fresh form under a new id."""
    import re

    from combat import services as scenes

    p, st, users = cast.p, cast.storyteller, cast.users
    combat = combat_start(scene=cast.scene, by=st, participants=[p["Frank"], p["Jane"]])
    for name, die in (("Jane", 5), ("Frank", 1)):
        combat_initiative(combat=combat, by=st, participant=p[name], roll=die)
    combat_begin_round(combat=combat, by=st)
    frank = live.player_group(cast.scene.pk, users["Frank"].pk)

    def form_in(html: str) -> str:
        found = re.findall(r'<form id="(declare-[^"]+)" data-keep[^>]*class="declare-form"', html)
        assert len(found) == 1, html
        return found[0]

    before = form_in(fragments.private_state(_fresh_scene(cast), users["Frank"]))
    for push in (
        lambda: combat_pause(combat=Combat.objects.get(), by=st, paused=True),
        lambda: combat_pause(combat=Combat.objects.get(), by=st, paused=False),
    ):
        pushes.clear()
        with django_capture_on_commit_callbacks(execute=True):
            push()
        sent = {s.group: s.html for s in pushes}
        assert form_in(sent[frank]) == before  # pushed, same id: the browser keeps its form
    scenes.scene_advance_clock(scene=_fresh_scene(cast), by=st, seconds=30)
    assert form_in(fragments.private_state(_fresh_scene(cast), users["Frank"])) == before
    combat_declare(
        combat=Combat.objects.get(), by=users["Frank"], participant=p["Frank"], action="dodge"
    )
    after = form_in(fragments.private_state(_fresh_scene(cast), users["Frank"]))
    assert after != before  # Frank may change it: a fresh form for the new state


def test_no_player_payload_or_log_download_names_a_hidden_npc(
    cast, client, pushes, django_capture_on_commit_callbacks
):
    """A hidden NPC never reaches a player: not its committed attack on the target's phone
    (D5: an unseen attacker), not a gap in the order (players see the next visible character
    as now, on every phone alike), not the Book Keeping line (D17: its effects and the others'
    reminders are the storyteller's), not the log download."""
    from django.urls import reverse

    from combat import selectors as scene_selectors

    p, st, users = cast.p, cast.storyteller, cast.users
    combat = Combat.objects.get
    with django_capture_on_commit_callbacks(execute=True):
        combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"], p["Lurker"]])
        for name, die in (("Jane", 5), ("Frank", 1), ("Lurker", 2)):
            combat_initiative(combat=combat(), by=st, participant=p[name], roll=die)
        combat_add_effect(
            combat=combat(), by=st, participant=p["Lurker"], name="Shadow cloak", rounds=1
        )
        combat_add_effect(
            combat=combat(), by=st, participant=p["Frank"], name="Haste spell", rounds=1
        )
        combat_remind(
            combat=combat(), by=users["Jane"], participant=p["Jane"], text="secret poison"
        )
        combat_begin_round(combat=combat(), by=st)
        combat_declare(combat=combat(), by=users["Frank"], participant=p["Frank"], action="dodge")
    # Lurker (8) is up between Frank (6) and Jane (13): Jane's phone says "now", as the order.
    scene = _fresh_scene(cast)
    jane_phone = fragments.private_state(scene, users["Jane"])
    assert "Declare now: Jane" in jane_phone
    assert '<li class="now">Jane' in fragments.players_state(scene)
    with django_capture_on_commit_callbacks(execute=True):
        combat_declare(combat=combat(), by=users["Jane"], participant=p["Jane"], action="block")
        combat_declare(
            combat=combat(),
            by=st,
            participant=p["Lurker"],
            action="attack",
            target=p["Jane"],
            maneuver="committed",
        )
    jane_phone = fragments.private_state(_fresh_scene(cast), users["Jane"])
    assert "An unseen attacker commits to an attack on Jane" in jane_phone
    with django_capture_on_commit_callbacks(execute=True):
        combat_answer_committed(
            combat=combat(), by=users["Jane"], participant=p["Jane"], attacker=None, answer="harder"
        )
        for name in ("Jane", "Lurker", "Frank"):
            combat_resolve(combat=combat(), by=st, participant=p[name], rng=random.Random(3))
        combat_book_keeping(combat=combat(), by=st)
    scene = _fresh_scene(cast)
    to_players = [s for s in pushes if not s.group.endswith(".st")]
    assert to_players
    assert not [s.group for s in to_players if "Lurker" in s.html or "Shadow cloak" in s.html]
    frank_and_all = [
        s for s in to_players if s.group != live.player_group(scene.pk, users["Jane"].pk)
    ]
    assert not [s.group for s in frank_and_all if "secret poison" in s.html]
    storyteller_log = " ".join(e.text for e in scene_selectors.log_for_storyteller(scene))
    assert "Shadow cloak (Lurker)" in storyteller_log and "secret poison" in storyteller_log
    for name in ("Jane", "Frank"):
        log = " ".join(e.text for e in scene_selectors.log_for_player(scene, users[name]))
        assert "Lurker" not in log and "Shadow cloak" not in log, name
        assert "Haste spell (Frank)" in log  # what expired on a visible character is heard
        client.force_login(users[name])
        for url in ("scene_log_txt", "scene_log_json"):
            body = client.get(reverse(url, args=[scene.pk])).content.decode()
            assert "Lurker" not in body and "Shadow cloak" not in body, (name, url)
            if name == "Frank":
                assert "secret poison" not in body


def test_a_hidden_npcs_fair_escape_reaches_no_phone(
    docks, pushes, django_capture_on_commit_callbacks
):
    """B9: a hidden NPC's fair escape is the storyteller's: no phone offers to attack it, and
    an intent recorded against it is no public line."""
    from combat import selectors as scene_selectors
    from combat import services as scene_services
    from combat.rounds import bns

    st, users, p, scene = docks
    ghost = scene_services.scene_add_npc(
        scene=scene,
        by=st,
        name="Ghost",
        pools={"Physical": 12, "Mental": 12, "Social": 12},
        hidden=True,
    )
    combat = Combat.objects.get
    with django_capture_on_commit_callbacks(execute=True):
        everyone = [*p.values(), ghost]
        bns.bns_start(scene=scene, by=st, participants=everyone, rng=random.Random(3))
        bns.bns_mediate(combat=combat(), by=st, agreed=False)
        bns.bns_assess(combat=combat(), by=st, participants=everyone)
        assert engine_of(combat()).current == str(ghost.pk)
        bns.bns_escape_announce(combat=combat(), by=st, participant=ghost)
    fresh = Scene.objects.get(pk=scene.pk)
    for user in users.values():
        assert "Ghost" not in fragments.private_state(fresh, user)
    with django_capture_on_commit_callbacks(execute=True):
        bns.bns_escape_intent(combat=combat(), by=users["Cy"], participant=p["Cy"])
    to_players = [s for s in pushes if not s.group.endswith(".st")]
    assert to_players and not [s.group for s in to_players if "Ghost" in s.html]
    fresh = Scene.objects.get(pk=scene.pk)
    for user in users.values():
        log = " ".join(e.text for e in scene_selectors.log_for_player(fresh, user))
        assert "Ghost" not in log


def test_a_hidden_npcs_turn_leaves_the_players_order_as_if_it_were_not_there(
    docks, pushes, django_capture_on_commit_callbacks
):
    """A hidden NPC never shows in the met_bns order, not even by its turn: while it acts, the
    order every phone sees already shows the first visible character after it as now (what the
    order would show without that NPC), never "the storyteller" or no row lit, and its acting
    and finishing change nothing in the order a player is pushed."""
    import re

    from combat import services as scene_services
    from combat.rounds import bns

    st, users, p, scene = docks
    ghost = scene_services.scene_add_npc(
        scene=scene, by=st, name="Ghost", pools={"Physical": 12, "Mental": 12}, hidden=True
    )
    combat = Combat.objects.get
    everyone = [*p.values(), ghost]

    def order(html: str) -> str:
        found = re.search(r'<p class="now-next">.*?</ol>', html, re.S)
        assert found, html[:500]
        return found.group(0)

    with django_capture_on_commit_callbacks(execute=True):
        bns.bns_start(scene=scene, by=st, participants=everyone, rng=random.Random(3))
        bns.bns_mediate(combat=combat(), by=st, agreed=False)
        bns.bns_assess(combat=combat(), by=st, participants=everyone)
    assert engine_of(combat()).current == str(ghost.pk)
    fresh = Scene.objects.get(pk=scene.pk)
    seen = order(fragments.players_state(fresh))
    assert "the storyteller" not in seen and "Ghost" not in seen
    assert "<b>Ana</b>" in seen and "Next</span> Bo" in seen
    assert re.search(r'<li class="now">Ana ', seen)
    assert "You&#x27;re next: Bo" in fragments.private_state(fresh, users["Bo"]) or (
        "You're next: Bo" in fragments.private_state(fresh, users["Bo"])
    )
    for step in (
        lambda: bns.bns_act(combat=combat(), by=st, participant=ghost, simple="move"),
        lambda: bns.bns_finish(combat=combat(), by=st, participant=ghost),
    ):
        pushes.clear()
        with django_capture_on_commit_callbacks(execute=True):
            step()
        fresh = Scene.objects.get(pk=scene.pk)
        assert order(fragments.players_state(fresh)) == seen
        for user in users.values():
            assert "Ghost" not in fragments.private_state(fresh, user)
        assert not [s.group for s in pushes if not s.group.endswith(".st") and "Ghost" in s.html]
    assert engine_of(combat()).current == str(p["Ana"].pk)
    assert "Act now" in fragments.private_state(fresh, users["Ana"])
