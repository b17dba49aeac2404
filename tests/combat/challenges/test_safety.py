"""Hidden information, roles, double taps and races.

The leak tests play the same challenge twice, at two tables, changing only one side's
secret (a sealed throw, a sealed total, an overbid's announced total). Everything the other
side and the storyteller receive in the hidden window (pages, the actor's answers, every
push of every audience) is recorded; with the tables' own names and ids normalised away the
two recordings must be identical: a secret that reached them would make them differ.
"""

from __future__ import annotations

import difflib
import re
import threading

import pytest
from django.db import connection
from django.db.models import F
from django.urls import reverse

from combat import live
from combat.challenges.reads import engine_of, round_token, step_token
from combat.challenges.refusals import ChallengeError
from combat.challenges.storyteller import challenge_st
from combat.models import Challenge
from combat.rules.odds import odds as engine_odds
from tests.combat.challenges.conftest import Table, make_table, token_for
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


class Recorder:
    """Every payload each audience of one table receives: pages, answers and pushes."""

    def __init__(self, t: Table) -> None:
        self.t = t
        self.got: dict[str, list[str]] = {"a": [], "d": [], "st": []}
        self.clients = {
            "a": client_for(t.a_user),
            "d": client_for(t.d_user),
            "st": client_for(t.st),
        }
        self.users = {t.a_user.pk: "a", t.d_user.pk: "d"}

    def push(self, group: str, html: str) -> None:
        scene = f"scene.{self.t.scene.pk}."
        if not group.startswith(scene):
            return
        rest = group[len(scene) :]
        if rest == "st":
            self.got["st"].append(html)
        elif rest == "players":
            self.got["a"].append(html)
            self.got["d"].append(html)
        elif rest.startswith("user."):
            self.got[self.users[int(rest[5:])]].append(html)

    def pages(self) -> None:
        """Each audience loads its page now (a phone that reconnects, the tablet)."""
        for who in ("a", "d"):
            url = reverse("scene_phone", args=[self.t.scene.pk])
            self.got[who].append(self.clients[who].get(url).content.decode())
        url = reverse("scene_tablet", args=[self.t.scene.pk])
        self.got["st"].append(self.clients["st"].get(url).content.decode())

    def post(self, who: str, ch: Challenge, **data) -> str:
        ch = Challenge.objects.get(pk=ch.pk)
        data.setdefault("token", token_for(ch, data.get("action", "")))
        url = reverse("challenge_act", args=[self.t.scene.pk, ch.pk])
        body = self.clients[who].post(url, data, HTTP_HX_REQUEST="true").content.decode()
        self.got[who].append(body)
        return body

    def odds(self, who: str, ch: Challenge, side: str) -> str:
        """The odds a phone asks for ("See the odds"), recorded like every other payload."""
        url = reverse("challenge_odds", args=[self.t.scene.pk, ch.pk]) + f"?side={side}"
        response = self.clients[who].get(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 200, response.content
        body = response.content.decode()
        self.got[who].append(body)
        return body

    def mark(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.got.items()}

    def since(self, mark: dict[str, int], who: str) -> list[str]:
        return [normalise(self.t, html) for html in self.got[who][mark[who] :]]


# Inputs whose value is a row's id (a participant, a character, a weapon).
IDS = (
    r'name="(member|participant|attacker|defender|character|who|weapon|prey|predators)" value="\d+"'
)


def normalise(t: Table, html: str) -> str:
    for text, name in (
        (t.scene.chronicle.name, "CHRONICLE"),
        (t.scene.join_code, "CODE"),
        (t.a_user.username, "AUSER"),
        (t.d_user.username, "DUSER"),
        (t.st.username, "STUSER"),
    ):
        html = html.replace(text, name)
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "CSRF", html)
    html = re.sub(r'"X-CSRFToken": "[^"]*"', "CSRF", html)
    html = re.sub(r"<svg .*?</svg>", "QR", html, flags=re.S)  # drawn from the join code
    html = re.sub(r"/\d+/", "/N/", html)
    # Only what is an id or a counter is masked, by where it stands; any other number (a
    # total in an input's value, a count) stays, so a leaked one makes the recordings differ.
    html = re.sub(
        r'(data-seq|data-sheet-seq|data-step|data-scene|data-self)="[\d.]*"', r'\1="N"', html
    )
    # a token is keyed with the server's secret over a row's id and a counter: masked as both
    html = re.sub(r'name="(key|seq|token)" value="[^"]*"', r'name="\1" value="N"', html)
    html = re.sub(IDS, r'name="\1" value="ID"', html)
    html = re.sub(r'<option value="\d+"', '<option value="ID"', html)
    html = re.sub(r"(challenge|participant|sheet|odds|cc-done)-\d+", r"\1-N", html)
    html = re.sub(r'data-now="[^"]*"', 'data-now="N"', html)  # the phone's now key: ids
    html = re.sub(r"chase-start-[\w-]+", "chase-start-N", html)  # the chase form's stable id
    html = re.sub(r'id="cc-(start|test)(-box)?-[\w-]+"', r'id="cc-\1\2-N"', html)  # kept forms
    html = re.sub(r"\d\d:\d\d:\d\d(\.\d+)?", "TIME", html)
    html = re.sub(r'(<time class="t night"[^>]*>)\d\d:\d\d', r"\1TIME", html)  # the log's hour
    return html


def _same(first: list[str], second: list[str], who: str) -> None:
    """Both recordings identical; else the first differing lines (the leak, or noise)."""
    assert first, f"{who} received nothing"
    assert len(first) == len(second), who
    for one, two in zip(first, second, strict=True):
        if one != two:
            diff = difflib.unified_diff(one.splitlines(), two.splitlines(), lineterm="", n=0)
            pytest.fail(f"{who} received different payloads:\n" + "\n".join(list(diff)[:12]))


@pytest.fixture
def pushes(monkeypatch):
    sinks: list[Recorder] = []

    def send(group: str, html: str) -> None:
        for sink in sinks:
            sink.push(group, html)

    monkeypatch.setattr(live, "_send", send)
    return sinks


def _bid(rec: Recorder, ruleset_bids: tuple[str, str]) -> Challenge:
    t = rec.t
    ch = t.start(category="physical", bid=ruleset_bids[0])
    rec.post(
        "d",
        ch,
        action="answer",
        side="defender",
        answer="bid",
        bid=ruleset_bids[1],
        key="bid-key-000001",
    )
    return Challenge.objects.get(pk=ch.pk)


def _table(pushes, django_capture_on_commit_callbacks) -> Recorder:
    rec = Recorder(make_table("met_classic"))
    pushes.append(rec)
    return rec


def test_a_sealed_throw_reaches_neither_the_other_side_nor_the_storyteller(
    pushes, django_capture_on_commit_callbacks
):
    seen = {}
    for secret in ("rock", "paper"):
        rec = _table(pushes, django_capture_on_commit_callbacks)
        with django_capture_on_commit_callbacks(execute=True):
            ch = _bid(rec, ("Strong", "Tough"))
        rec.pages()
        mark = rec.mark()
        with django_capture_on_commit_callbacks(execute=True):
            rec.post("a", ch, action="throw", side="attacker", throw="scissors", key="throw-a-01")
            rec.post("a", ch, action="throw", side="attacker", throw=secret, key="throw-a-0002")
            mine = rec.got["a"][-1]
        rec.odds("d", ch, "defender")
        rec.pages()
        assert f"Your throw: <b>{secret}</b>" in mine  # the thrower sees it
        seen[secret] = {w: rec.since(mark, w) for w in ("d", "st")}
        pushes.clear()
    for who in ("d", "st"):
        _same(seen["rock"][who], seen["paper"][who], who)
        assert "locked in" in seen["rock"][who][-1]


def test_a_sealed_total_stays_hidden_until_both_are_in(pushes, django_capture_on_commit_callbacks):
    seen = {}
    for secret in (9, 3):
        rec = _table(pushes, django_capture_on_commit_callbacks)
        with django_capture_on_commit_callbacks(execute=True):
            ch = _bid(rec, ("Strong", "Tough"))
            rec.post("a", ch, action="throw", side="attacker", throw="rock", key="throw-a-0001")
            rec.post("d", ch, action="throw", side="defender", throw="rock", key="throw-d-0001")
        mark = rec.mark()
        with django_capture_on_commit_callbacks(execute=True):
            rec.post("a", ch, action="declare", side="attacker", total=secret, key="decl-a-0001")
        rec.odds("d", ch, "defender")
        rec.pages()
        seen[secret] = {w: rec.since(mark, w) for w in ("d", "st")}
        with django_capture_on_commit_callbacks(execute=True):
            body = rec.post("d", ch, action="declare", side="defender", total=8, key="decl-d-01")
        assert f"Totals: Marcus {secret}, Sophia 8" in body  # revealed together
        pushes.clear()
    for who in ("d", "st"):
        _same(seen[9][who], seen[3][who], who)


def test_an_overbid_total_is_never_revealed(pushes, django_capture_on_commit_callbacks):
    seen = {}
    for secret in (7, 5):  # both fail against Marcus's 10 (C9: more than half)
        rec = _table(pushes, django_capture_on_commit_callbacks)
        with django_capture_on_commit_callbacks(execute=True):
            ch = _bid(rec, ("Strong", "Tough"))
            rec.post("a", ch, action="throw", side="attacker", throw="rock", key="throw-a-0001")
            rec.post("d", ch, action="throw", side="defender", throw="scissors", key="throw-d-01")
        mark = rec.mark()
        with django_capture_on_commit_callbacks(execute=True):
            body = rec.post(
                "d",
                ch,
                action="retest",
                side="defender",
                kind="overbid",
                declared=secret,
                key="overbid-d-01",
            )
            assert "overbid fails" in body
        rec.odds("a", ch, "attacker")
        with django_capture_on_commit_callbacks(execute=True):
            rec.post("d", ch, action="accept", side="defender", key="accept-d-01")
        rec.pages()
        seen[secret] = {w: rec.since(mark, w) for w in ("a", "st")}
        pushes.clear()
    for who in ("a", "st"):
        _same(seen[7][who], seen[5][who], who)


# The category, the bids, and what the other side holds that only it knows: a trait of the
# category (a test pool's attribute) changed by enough to turn who has the larger total.
HIDDEN = {
    "met_classic": ("physical", "Strong", "Tough", "Stalwart", 3),  # Sophia 8 -> 11, Marcus 10
    "met_werewolf": ("social", "Charismatic", "Impressive", "Dignified", -2),  # Cody 10 -> 8
    "met_bns": ("physical", "", "", "Physical", 7),  # Melvin's pool 7 -> 14, Delilah's 13
}


def _more_hidden(t: Table, ruleset: str, more: int) -> None:
    """With ``more``, the defender's sheet holds what :data:`HIDDEN` says, which only it
    may know of."""
    from characters.models import Attribute, Trait
    from characters.sheet_versions import bump_sheets

    name = HIDDEN[ruleset][3]
    more *= HIDDEN[ruleset][4]
    if ruleset == "met_bns":
        Attribute.objects.filter(character_id=t.d.character_id, name=name).update(
            value=F("value") + more
        )
    else:
        Trait.objects.filter(character_id=t.d.character_id, name=name).update(
            count=F("count") + more
        )
    bump_sheets([t.d.character_id])  # a bulk write sends no signal


@pytest.mark.parametrize("ruleset", ["met_classic", "met_werewolf", "met_bns"])
def test_the_odds_a_side_sees_do_not_move_with_the_other_sides_hidden_total(
    ruleset, pushes, django_capture_on_commit_callbacks
):
    """Before any throw, after a lost throw (with its retests' odds) and after a retest, the
    attacker's odds (and everything else it receives) are the same whether the defender
    holds more traits than the attacker or fewer: only what the attacker may know moves
    them, though the engine's true odds differ."""
    seen, odds, exact = {}, {}, {}
    category, bid, answer, _trait, _delta = HIDDEN[ruleset]
    bns = ruleset == "met_bns"
    for more in (0, 1):
        rec = Recorder(make_table(ruleset))
        pushes.append(rec)
        t = rec.t
        _more_hidden(t, ruleset, more)
        mark = rec.mark()
        with django_capture_on_commit_callbacks(execute=True):
            start = {"attribute": "Physical", "skill": "Melee"} if bns else {"bid": bid}
            ch = t.start(category=category, **start)
            reply = {"attribute": "Physical", "skill": "Dodge"} if bns else {"bid": answer}
            rec.post(
                "d", ch, action="answer", side="defender", answer="bid", key="ans-d-01", **reply
            )
        before = rec.odds("a", ch, "attacker")
        exact[more] = engine_odds(engine_of(Challenge.objects.get(pk=ch.pk)), "attacker")
        with django_capture_on_commit_callbacks(execute=True):
            rec.post("a", ch, action="throw", side="attacker", throw="rock", key="throw-a-01")
            rec.post("d", ch, action="throw", side="defender", throw="paper", key="throw-d-01")
        losing = rec.odds("a", ch, "attacker")
        rec.pages()
        retest = {
            "met_classic": {"kind": "power", "power": "Potence: Prowess"},
            "met_werewolf": {"kind": "ability", "ability": "Expression"},
            "met_bns": {"kind": "willpower"},
        }[ruleset]
        with django_capture_on_commit_callbacks(execute=True):
            body = rec.post("a", ch, action="retest", side="attacker", key="retest-a01", **retest)
        assert "retests with" in body, body
        after = rec.odds("a", ch, "attacker")
        rec.pages()
        seen[more] = rec.since(mark, "a")
        odds[more] = (before, losing, after)
        pushes.clear()
    assert all(re.match(r"\d+% to win from here", o) for o in odds[0]), odds[0]
    assert " retest (" in odds[0][1], odds[0][1]  # a lost throw: each retest's odds
    assert exact[0] != exact[1]  # the real chances differ: what the defender holds counts
    assert odds[0] == odds[1]
    _same(seen[0], seen[1], "a")


# -- roles ------------------------------------------------------------------------------


def test_every_endpoint_walked_with_every_role(classic, other_player):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    stranger = client_for(other_player)
    urls = [
        ("post", reverse("challenge_start", args=[t.scene.pk])),
        ("post", reverse("challenge_act", args=[t.scene.pk, ch.pk])),
        ("post", reverse("challenge_st", args=[t.scene.pk, ch.pk])),
        ("get", reverse("challenge_odds", args=[t.scene.pk, ch.pk]) + "?side=defender"),
        ("get", reverse("challenge_region", args=[t.scene.pk])),
        ("post", reverse("challenge_mob", args=[t.scene.pk, ch.pk])),
    ]
    from django.test import Client

    for method, url in urls:
        assert getattr(Client(), method)(url).status_code == 302  # anonymous: log in
        assert getattr(stranger, method)(url).status_code == 404  # not in the scene
    a = client_for(t.a_user)
    answer = {"action": "answer", "side": "defender", "answer": "bid", "bid": "Tough"}
    assert a.post(urls[1][1], answer).status_code == 409  # the other side of her own
    for other_side in (
        {"action": "blood", "side": "defender", "amount": 1},  # C5 for the other side
        {"action": "choose", "side": "defender", "trait": "Tough"},  # W8 for the other side
    ):
        assert a.post(urls[1][1], other_side).status_code == 409
    assert a.post(urls[5][1], {"member": t.d.pk, "drop_out": "on"}).status_code == 409
    assert a.post(urls[2][1], {"action": "void", "text": "x"}).status_code == 404  # no ST call
    assert a.get(urls[3][1]).status_code == 404  # not her side's odds
    start_for_other = {"attacker": t.d.pk, "defender": t.a.pk, "bid": "physical:Tough"}
    assert a.post(urls[0][1], start_for_other).status_code == 409  # not her character
    st = client_for(t.st)
    assert st.post(urls[1][1], answer).status_code == 409  # the ST does not play a PC
    assert Challenge.objects.get().status == "answer"


def test_a_double_tap_over_http_counts_once(classic):
    t = classic
    d = client_for(t.d_user)
    ch = t.start(category="physical", bid="Strong")
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    data = {
        "action": "answer",
        "side": "defender",
        "answer": "bid",
        "bid": "Tough",
        "token": step_token(ch),
        "key": "double-tap-01",
    }
    assert d.post(url, data).status_code == 200
    assert d.post(url, data).status_code == 200  # the replay answers as the first did
    assert Challenge.objects.get().step == ch.step + 1


def test_a_late_step_over_http_is_refused_with_a_message(classic):
    t = classic
    d = client_for(t.d_user)
    ch = t.start(category="physical", bid="Strong")
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    d.post(
        url,
        {
            "action": "answer",
            "side": "defender",
            "answer": "bid",
            "bid": "Tough",
            "token": step_token(ch),
            "key": "first-tap-01",
        },
    )
    r = d.post(
        url,
        {
            "action": "answer",
            "side": "defender",
            "answer": "relent",
            "token": step_token(ch),
            "key": "late-tap-001",
        },
    )
    assert r.status_code == 409 and "moved on" in r.content.decode()
    assert Challenge.objects.get().status == "live"


@pytest.mark.django_db(transaction=True)
def test_two_players_at_the_same_moment_give_one_resolution():
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    ch = t.throw(ch, "rock", "scissors")
    step = step_token(Challenge.objects.get(pk=ch.pk))
    barrier = threading.Barrier(2)
    results: list[str] = []

    def act(fn):
        from django.db import connection as conn

        try:
            barrier.wait()
            fn()
            results.append("ok")
        except ChallengeError as error:
            results.append(str(error))
        finally:
            conn.close()

    def accept():
        t.do("accept", ch, t.d_user, side="defender", token=step)

    def winner():
        challenge_st(
            scene=t.scene,
            challenge=t.ch(ch),
            by=t.st,
            action="winner",
            side="defender",
            token=step,
        )

    threads = [threading.Thread(target=act, args=(f,)) for f in (accept, winner)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results)[-1] == "ok" and results.count("ok") == 1, results
    assert any("moved on" in r for r in results)
    final = Challenge.objects.get(pk=ch.pk)
    from characters.models import LedgerEntry

    assert final.status == "over"
    assert LedgerEntry.objects.filter(source=final.source).count() == 1


@pytest.mark.django_db(transaction=True)
def test_both_throws_at_the_same_moment_resolve_once():
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    t = make_table("met_classic")
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    rnd = round_token(t.ch(ch))
    barrier = threading.Barrier(2)
    errors: list[Exception] = []

    def throw(user, side, value):
        from django.db import connection as conn

        try:
            barrier.wait()
            t.do("throw", ch, user, side=side, throw=value, token=rnd)
        except Exception as error:
            errors.append(error)
        finally:
            conn.close()

    threads = [
        threading.Thread(target=throw, args=(t.a_user, "attacker", "rock")),
        threading.Thread(target=throw, args=(t.d_user, "defender", "scissors")),
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    final = engine_of(Challenge.objects.get(pk=ch.pk))
    assert final.throws == 1 and final.leader.value == "attacker"
