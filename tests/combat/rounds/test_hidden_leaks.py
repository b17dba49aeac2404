"""What a player receives never carries what the rules hide (issue 18).

The cast: a storyteller; two players in a conflict; a third player who only watches; and,
in the fights, a hidden NPC that declares and attacks. Every websocket frame the live layer
sends (per audience group: all players, one player's own part, one user) and every HTTP body
each player gets is recorded; then:

- nothing carries the other side's throw or total before the reveal (a challenge with a
  draw, totals and a retest);
- nothing carries the hidden NPC's name (its attack says "an unseen attacker");
- no phone sees a ``seq`` gap, or a push, for a step only the hidden NPC takes;
- a forged id of a hidden NPC answers exactly as an id of nobody (status and body).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from django.urls import reverse

from combat import live
from combat import selectors as scene_selectors
from combat import services as scenes
from combat.models import Challenge, Combat, Presence, Scene
from combat.rounds import bns
from combat.rounds.bns_reads import engine_of
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.resolving import combat_resolve
from combat.rounds.starting import combat_start
from combat.rounds.tokens import state_token
from tests.combat.challenges.conftest import make_table
from tests.conftest import client_for
from tests.factories import CharacterFactory, UserFactory

HX = {"HTTP_HX_REQUEST": "true"}
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"|"X-CSRFToken": "[^"]*"')
# The pushes go on commit, as in production: each step's frames are recorded as it commits.
pytestmark = pytest.mark.django_db(transaction=True)
SEQ = re.compile(r'data-seq="(\d+)"')


@dataclass
class Received:
    """Everything the players' phones were sent, per player (frames and HTTP bodies)."""

    scene_id: int
    users: dict[str, object]
    frames: list[tuple[str, str]] = field(default_factory=list)
    bodies: dict[str, list[str]] = field(default_factory=dict)

    def of(self, name: str) -> list[str]:
        """What the phone of ``name`` got: its frames in order, then its HTTP bodies."""
        user = self.users[name]
        groups = {
            live.players_group(self.scene_id),
            live.player_group(self.scene_id, user.pk),
            live.user_group(user.pk),
        }
        return [html for group, html in self.frames if group in groups] + self.bodies.get(name, [])

    def everything(self, name: str) -> list[str]:
        """What the phone got, and the phone page as it loads now."""
        page = self.page(name)
        return [*self.of(name), page]

    def frames_of(self, name: str) -> list[str]:
        user = self.users[name]
        groups = {live.players_group(self.scene_id), live.player_group(self.scene_id, user.pk)}
        return [html for group, html in self.frames if group in groups]

    def post(self, name: str, url: str, **data) -> object:
        response = client_for(self.users[name]).post(url, data, **HX)
        self.bodies.setdefault(name, []).append(response.content.decode())
        return response

    def page(self, name: str) -> str:
        url = reverse("scene_phone", args=[self.scene_id])
        body = client_for(self.users[name]).get(url).content.decode()
        self.bodies.setdefault(name, []).append(body)
        return body

    def clear(self) -> None:
        self.frames.clear()
        self.bodies.clear()


@pytest.fixture
def record(monkeypatch) -> Iterator[list[tuple[str, str]]]:
    frames: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: frames.append((group, html)))
    yield frames


def _seqs(html: str) -> set[int]:
    return {int(s) for s in SEQ.findall(html)}


def _assert_no_gap(received: Received, name: str) -> None:
    """The seqs a phone was pushed run without a gap (none skipped for a hidden step)."""
    seen = sorted({s for html in received.frames_of(name) for s in _seqs(html)})
    assert seen, f"{name} was pushed nothing"
    assert seen == list(range(seen[0], seen[-1] + 1)), (name, seen)


def _same_answer(a, b) -> None:
    """Two answers a player cannot tell apart (the CSRF token is drawn per page)."""
    assert a.status_code == b.status_code, (a.status_code, b.status_code)
    assert CSRF.sub("", a.content.decode()) == CSRF.sub("", b.content.decode())


# -- a challenge to the reveal -------------------------------------------------------------


def _throws_in(html: str) -> str:
    """The page without the throw buttons every phone has (what is left names a throw)."""
    return re.sub(
        r'value="(rock|paper|scissors)"|throw-(rock|paper|scissors)|>(Rock|Paper|Scissors)<',
        "",
        html,
    )


def test_a_challenge_tells_nobody_the_other_sides_throw_or_total_before_the_reveal(db, record):
    t = make_table("met_classic")
    watcher = UserFactory(username="watcher")
    wc = CharacterFactory(chronicle=t.scene.chronicle, name="Wanda", player=watcher)
    scenes.scene_join(code=t.scene.join_code, user=watcher, character=wc)
    received = Received(
        t.scene.pk, {"Marcus": t.a_user, "Sophia": t.d_user, "Wanda": watcher}, record
    )
    start = reverse("challenge_start", args=[t.scene.pk])

    def act(name: str, **data) -> None:
        ch = Challenge.objects.get()
        url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
        r = received.post(name, url, step=ch.step, **data)
        assert r.status_code == 200, r.content.decode()[:800]

    r = received.post(
        "Marcus", start, attacker=t.a.pk, defender=t.d.pk, mode="contested",
        bid="physical:Strong", key="leak-start-01",
    )  # fmt: skip
    assert r.status_code == 200, r.content.decode()[:800]
    act("Sophia", action="answer", side="defender", answer="bid", bid="Tough", key="leak-bid-01")
    received.clear()
    act("Marcus", action="throw", side="attacker", throw="paper", key="leak-throw-a1")
    for name in ("Sophia", "Wanda"):
        for html in received.everything(name):
            assert "paper" not in _throws_in(html), name
    act("Marcus", action="throw", side="attacker", throw="rock", key="leak-throw-a2")  # changed
    for name in ("Sophia", "Wanda"):
        for html in received.everything(name):
            assert "rock" not in _throws_in(html), name
    act("Sophia", action="throw", side="defender", throw="rock", key="leak-throw-d1")  # a draw
    assert "Marcus rock, Sophia rock" in received.page("Marcus")
    received.clear()
    act("Marcus", action="declare", side="attacker", total=10, key="leak-total-a1")
    for name in ("Sophia", "Wanda"):
        for html in received.everything(name):
            assert "Marcus 10" not in html and "total 10" not in html.casefold(), name
    act("Sophia", action="declare", side="defender", total=4, key="leak-total-d1")
    assert "Totals: Marcus 10, Sophia 4" in received.page("Marcus")
    received.clear()
    act("Sophia", action="retest", side="defender", kind="overbid", declared=8, key="leak-rt-1")
    for name in ("Marcus", "Wanda"):  # C9: the overbid's declared total stays Sophia's
        for html in received.everything(name):
            assert "declared 8" not in html and "Sophia 8" not in html, name
    for name in ("Marcus", "Sophia", "Wanda"):
        _assert_no_gap(received, name)


# -- a wod_dice fight with a hidden NPC ----------------------------------------------------


def _scene(cast) -> Scene:
    return Scene.objects.get(pk=cast.scene.pk)


def test_a_wod_fight_never_shows_a_player_the_hidden_npc(cast, record):
    """Jane and Frank fight, Teddy watches; Lurker (hidden) rolls initiative, declares an
    attack on Jane and resolves it. No phone gets its name, a push or a ``seq`` for its own
    steps, "Now: the storyteller", or an attack count that counts it."""
    p, st, users = cast.p, cast.storyteller, cast.users
    received = Received(cast.scene.pk, dict(users), record)
    combat = Combat.objects.get
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"], p["Lurker"]])
    for name, die in (("Jane", 5), ("Frank", 1)):
        combat_initiative(combat=combat(), by=st, participant=p[name], roll=die)
    seq = _scene(cast).players_seq
    before = {n: received.page(n) for n in users}
    received.clear()
    combat_initiative(combat=combat(), by=st, participant=p["Lurker"], roll=10)
    # Lurker 2 + 2 + 10 = 14 (after Jane's 13): it declares last, resolves first.
    assert _scene(cast).players_seq == seq and not [g for g, _ in record if ".st" not in g]
    for name in users:
        assert CSRF.sub("", received.page(name)) == CSRF.sub("", before[name]), name
    combat_begin_round(combat=combat(), by=st)
    combat_declare(combat=combat(), by=users["Frank"], participant=p["Frank"], action="dodge")
    combat_declare(
        combat=combat(), by=users["Jane"], participant=p["Jane"], action="attack", target=p["Frank"]
    )
    seq = _scene(cast).players_seq
    shown = {n: CSRF.sub("", received.page(n)) for n in users}
    for name in ("Jane", "Frank", "Teddy"):  # every visible character declared
        assert "the storyteller</span>" not in shown[name], name
    combat_declare(
        combat=combat(), by=st, participant=p["Lurker"], action="attack", target=p["Jane"]
    )
    assert _scene(cast).players_seq == seq
    # The hidden declaration changed no phone, but Jane's: D4 ends her chance to change hers
    # when the next character declares (the rules' own tell, her prompt alone, no new seq).
    for name in ("Frank", "Teddy"):
        assert CSRF.sub("", received.page(name)) == shown[name], name
    for name in ("Lurker", "Jane", "Frank"):
        combat_resolve(combat=combat(), by=st, participant=p[name], rng=random.Random(5))
    for name in users:
        for html in received.everything(name):
            assert "Lurker" not in html, name
            assert "attack 2" not in html, name  # D8 counts Lurker's attack, unseen
        _assert_no_gap(received, name)


def test_a_forged_id_of_a_hidden_npc_answers_as_an_id_of_nobody(cast):
    p, st = cast.p, cast.storyteller
    lurker, nobody = p["Lurker"].pk, p["Lurker"].pk + 1000
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"], p["Lurker"]])
    jane = client_for(cast.users["Jane"])

    def post(slug: str, **data):
        return jane.post(f"/scenes/{cast.scene.pk}/combat/{slug}/", {**data, "from": "phone"}, **HX)

    _same_answer(
        post("initiative", participant=lurker, roll=5),
        post("initiative", participant=nobody, roll=5),
    )
    assert "Lurker" not in post("initiative", participant=lurker, roll=5).content.decode()
    combat_initiative(combat=Combat.objects.get(), by=st, participant=p["Frank"], roll=1)
    combat_initiative(combat=Combat.objects.get(), by=st, participant=p["Lurker"], roll=1)
    combat_initiative(combat=Combat.objects.get(), by=st, participant=p["Jane"], roll=9)
    combat_begin_round(combat=Combat.objects.get(), by=st)
    combat_declare(
        combat=Combat.objects.get(), by=cast.users["Frank"], participant=p["Frank"], action="dodge"
    )
    combat_declare(combat=Combat.objects.get(), by=st, participant=p["Lurker"], action="dodge")
    declare = {"participant": p["Jane"].pk, "action": "attack"}
    a = post("declare", target=lurker, **declare)
    b = post("declare", target=nobody, **declare)
    _same_answer(a, b)
    assert a.status_code == 409 and "Lurker" not in a.content.decode()
    assert Combat.objects.get().state["declarations"][-1]["who"] == str(p["Lurker"].pk)


def test_a_forged_id_of_a_hidden_npc_opens_no_challenge(db):
    t = make_table("met_classic")
    ghost = scenes.scene_add_npc(
        scene=t.scene, by=t.st, name="Ghost", pools={"Physical": 5}, hidden=True
    )
    a = client_for(t.a_user)
    url = reverse("challenge_start", args=[t.scene.pk])
    data = {"attacker": t.a.pk, "mode": "contested", "bid": "physical:Strong"}
    forged = a.post(url, {**data, "defender": ghost.pk}, **HX)
    missing = a.post(url, {**data, "defender": ghost.pk + 1000}, **HX)
    _same_answer(forged, missing)
    assert forged.status_code == 400 and not Challenge.objects.exists()
    as_attacker = a.post(url, {**data, "attacker": ghost.pk, "defender": t.d.pk}, **HX)
    as_nobody = a.post(url, {**data, "attacker": ghost.pk + 1000, "defender": t.d.pk}, **HX)
    _same_answer(as_attacker, as_nobody)
    assert "Ghost" not in forged.content.decode() + as_attacker.content.decode()


# -- a met_bns round with a hidden NPC ---------------------------------------------------------


def test_a_hidden_npcs_met_bns_attack_is_an_unseen_attacker_to_its_target(docks, record):
    """Ana and Bo are in the fight, Cy watches; Ghost (hidden) attacks Ana: Ana's card and log
    say "An unseen attacker", nobody's phone names Ghost, and its other steps push nothing."""
    st, users, p, scene = docks
    ghost = scenes.scene_add_npc(
        scene=scene, by=st, name="Ghost", pools={"Physical": 12, "Mental": 12}, hidden=True
    )
    received = Received(scene.pk, dict(users), record)
    combat = Combat.objects.get
    fighters = [p["Ana"], p["Bo"], ghost]
    bns.bns_start(scene=scene, by=st, participants=fighters, rng=random.Random(3))
    bns.bns_mediate(combat=combat(), by=st, agreed=False)
    bns.bns_assess(combat=combat(), by=st, participants=fighters)
    for _ in range(6):  # the players finish until the Ghost is up
        current = engine_of(combat()).current
        if current == str(ghost.pk):
            break
        who = next(x for x in fighters if str(x.pk) == current)
        bns.bns_finish(combat=combat(), by=users[who.name], participant=who)
    assert engine_of(combat()).current == str(ghost.pk)
    bns.bns_act(
        combat=combat(), by=st, participant=ghost, standard="attack", target=p["Ana"],
        pool={"attribute": "Physical"},
    )  # fmt: skip
    ana = received.page("Ana")
    assert "An unseen attacker" in ana, ana[:2000]
    for name in users:
        for html in received.everything(name):
            assert "Ghost" not in html, name
        _assert_no_gap(received, name)
    fresh = Scene.objects.get(pk=scene.pk)
    log = " ".join(e.text for e in scene_selectors.log_for_player(fresh, users["Ana"]))
    assert "An unseen attacker" in log and "Ghost" not in log


def test_a_round_token_is_drawn_not_derived_from_the_hidden_state(cast):
    """The token a phone carries is random (drawn when the state moves), never a digest of
    the state (which held the hidden declaration: enumerable); a hidden NPC's own step moves
    the tablet's token and leaves the phones'."""
    import hashlib
    import json

    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Frank"], p["Lurker"]])
    for name, die in (("Frank", 1), ("Lurker", 2), ("Jane", 9)):
        combat_initiative(combat=Combat.objects.get(), by=st, participant=p[name], roll=die)
    combat_begin_round(combat=Combat.objects.get(), by=st)
    combat_declare(
        combat=Combat.objects.get(), by=cast.users["Frank"], participant=p["Frank"], action="dodge"
    )
    phone, tablet = (state_token(Combat.objects.get(), players=x) for x in (True, False))
    combat_declare(
        combat=Combat.objects.get(), by=st, participant=p["Lurker"], action="attack",
        target=p["Jane"],
    )  # fmt: skip
    combat = Combat.objects.get()
    assert state_token(combat, players=True) == phone
    assert state_token(combat) != tablet
    digest = hashlib.sha256(json.dumps([combat.state, {}], sort_keys=True).encode()).hexdigest()
    for token in (phone, state_token(combat)):
        assert digest[:12] not in token
        # one token kind: a value drawn when the state moves, naming no round and no stage
        assert len(token) == 16 and int(token, 16) >= 0 and "-" not in token


def test_a_hidden_npc_comes_and_goes_without_a_push_or_a_seq_on_any_phone(cast, record):
    st, scene = cast.storyteller, _scene(cast)
    Presence.objects.create(scene=scene, user=st, channel_name="tablet.1")  # a board is seen
    seq = scene.players_seq
    ghost = scenes.scene_add_npc(scene=scene, by=st, name="Ghost", pools={"Wits": 2}, hidden=True)
    scenes.scene_remove(scene=_scene(cast), by=st, participant=ghost)
    assert _scene(cast).players_seq == seq
    assert [group for group, _html in record if not group.endswith(".st")] == []
    assert [html for _group, html in record if "Ghost" in html]  # the tablet heard of it


def test_a_players_log_download_counts_no_line_it_does_not_read(cast):
    """The scene's seq of the lines a player reads would skip the hidden NPC's lines: a
    player's download numbers its own lines instead (the storyteller's keeps the seq)."""
    import json

    p, st = cast.p, cast.storyteller
    combat_start(scene=cast.scene, by=st, participants=[p["Jane"], p["Lurker"]])
    combat_initiative(combat=Combat.objects.get(), by=st, participant=p["Lurker"], roll=3)
    combat_initiative(combat=Combat.objects.get(), by=st, participant=p["Jane"], roll=3)
    url = reverse("scene_log_json", args=[cast.scene.pk])
    mine = json.loads(client_for(cast.users["Jane"]).get(url).content)["entries"]
    assert [e["seq"] for e in mine] == list(range(1, len(mine) + 1))
    assert not [e for e in mine if "Lurker" in e["text"]]
    whole = json.loads(client_for(st).get(url).content)["entries"]
    seqs = [e["seq"] for e in whole]
    assert seqs == sorted(seqs) and [e for e in whole if "Lurker" in e["text"]]
