"""A table per ruleset: a storyteller, two players with the demo's sheets, an open scene."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

import pytest
from django.urls import reverse

from characters.demo import CAST, _write_sheet
from characters.models import Character, LedgerEntry
from characters.selectors import current_values
from combat import fragments
from combat import services as scenes
from combat.challenges import (
    answering,
    mob,
    negatives,
    reads,
    retests,
    spending,
    starting,
    storyteller,
    throwing,
)
from combat.challenges.reads import round_token, step_token
from combat.models import Challenge, Participant, Scene
from tests.conftest import client_for
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    UserFactory,
)

PAIRS = {
    "met_classic": ("Marcus", "Sophia"),
    "met_werewolf": ("Janet", "Cody"),
    "met_bns": ("Delilah", "Melvin"),
}

#: Every challenge write by name: ``Table.do("throw", ...)`` calls ``challenge_throw``.
WRITES = {
    name: getattr(module, name)
    for module in (answering, mob, negatives, retests, spending, starting, storyteller, throwing)
    for name in vars(module)
    if name.startswith("challenge_")
}


def note_started(scene_pk: int) -> None:
    """Each participant's ``last_started`` as the starts would have written it, after a
    test wrote challenges in bulk (not started by ``challenge_start``): its newest as
    attacker (migration 0010's fill)."""
    migration = import_module("combat.migrations.0010_participant_last_started")
    last = migration.started_last(Challenge)
    Participant.objects.filter(scene_id=scene_pk).update(last_started=last)


@dataclass
class Table:
    scene: Scene
    st: Any
    a_user: Any
    d_user: Any
    a: Participant
    d: Participant

    def refresh(self) -> Table:
        self.scene.refresh_from_db()
        return self

    def now(self, who: Participant) -> dict:
        return current_values(Character.objects.get(pk=who.character_id))

    def ch(self, challenge: Challenge) -> Challenge:
        return Challenge.objects.select_related(
            "attacker__character", "defender__character", "scene"
        ).get(pk=challenge.pk)

    def start(self, **kw: Any) -> Challenge:
        kw.setdefault("attacker", self.a)
        kw.setdefault("defender", self.d)
        by = kw.pop("by", self.a_user)
        self.refresh()
        return starting.challenge_start(scene=self.scene, by=by, **kw)

    def do(self, fn: str, challenge: Challenge, user: Any, **kw: Any) -> Challenge:
        self.refresh()
        done = WRITES[f"challenge_{fn}"](
            scene=self.scene, challenge=self.ch(challenge), by=user, **kw
        )
        self.render()
        return done

    def render(self) -> None:
        """Every audience's fragments render after every step (as the pushes would)."""
        self.refresh()
        users = [self.a_user.pk, self.d_user.pk]
        out = fragments.scene_change_fragments(self.scene.pk, private_user_ids=users)
        assert 'id="challenge-board"' in out.storytellers

    def phone(self, user: Any) -> str:
        """The scene's phone page as that player loads it."""
        url = reverse("scene_phone", args=[self.scene.pk])
        return client_for(user).get(url).content.decode()

    def board(self) -> str:
        """The scene's tablet page as its storyteller loads it."""
        return (
            client_for(self.st).get(reverse("scene_tablet", args=[self.scene.pk])).content.decode()
        )

    def throw(self, challenge: Challenge, a: str, d: str) -> Challenge:
        self.do("throw", challenge, self.a_user, side="attacker", throw=a)
        return self.do("throw", challenge, self.d_user, side="defender", throw=d)

    def finished(self, loser: str = "defender") -> Challenge:
        """A physical challenge played to its end between the two players' characters: bid,
        answered, thrown (``loser`` loses the throw) and its result taken by the loser."""
        ch = self.start(category="physical", bid="Strong")
        ch = self.do("answer", ch, self.d_user, side="defender", answer="bid", bid="Tough")
        throws = ("rock", "scissors") if loser == "defender" else ("scissors", "rock")
        ch = self.throw(ch, *throws)
        user = self.d_user if loser == "defender" else self.a_user
        return self.do("accept", ch, user, side=loser)

    def lost_to_a_hidden_npc(self) -> Challenge:
        """A hidden NPC, Lurker, attacks the attacker's character, who answers, loses the
        throw and takes the result: a finished challenge with one side hidden."""
        lurker = scenes.scene_add_npc(
            scene=self.scene, by=self.st, name="Lurker", pools={"physical": 6}, hidden=True
        )
        ch = self.start(
            attacker=lurker, defender=self.a, by=self.st, category="physical",
            bid="Physical", effect="a stab",
        )  # fmt: skip
        ch = self.do("answer", ch, self.a_user, side="defender", answer="bid", bid="Strong")
        ch = self.do("throw", ch, self.st, side="attacker", throw="rock", as_st=True)
        ch = self.do("throw", ch, self.a_user, side="defender", throw="scissors")
        return self.do("accept", ch, self.a_user, side="defender")


def token_for(ch: Challenge, action: str = "") -> str:
    """The token a card's form for ``action`` carries: a throw's or a total's is the
    throw's (both sides throw at the same step), any other the challenge's step."""
    ch = Challenge.objects.get(pk=ch.pk)
    return round_token(ch) if action in ("throw", "declare") else step_token(ch)


def rendered_row(t: Table, ch: Challenge) -> tuple[Scene, Challenge]:
    """The scene now and ``ch``'s row as a change's renderings read it (reads.scene_rows)."""
    scene = t.refresh().scene
    return scene, next(row for row in reads.scene_rows(scene) if row.pk == ch.pk)


def ledger_of(challenge: Challenge) -> list[tuple[str, str, str, int]]:
    """What the challenge wrote to the ledger: (character, kind, subject, amount)."""
    rows = LedgerEntry.objects.filter(source=f"challenge {challenge.pk}").order_by("pk")
    return [(e.character.name, e.kind, e.subject, e.amount) for e in rows]


def make_table(ruleset: str, names: tuple[str, str] | None = None) -> Table:
    st = StorytellerFactory()
    chronicle = ChronicleFactory(ruleset=ruleset)
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    a_name, d_name = names or PAIRS[ruleset]
    users, characters = [], []
    for name in (a_name, d_name):
        _ruleset, sheet = CAST[name]
        user = UserFactory(username=f"{name.lower()}_{chronicle.pk}")
        fields = {
            k: sheet[k]
            for k in ("creature", "willpower", "blood", "rage", "gnosis", "blood_per_turn")
            if k in sheet
        }
        character = CharacterFactory(chronicle=chronicle, name=name, player=user, **fields)
        _write_sheet(character, ruleset, sheet)
        users.append(user)
        characters.append(character)
    scene = scenes.scene_open(chronicle=chronicle, by=st, name="Table")
    parts = [
        scenes.scene_join(code=scene.join_code, user=u, character=c)
        for u, c in zip(users, characters, strict=True)
    ]
    scene.refresh_from_db()
    return Table(scene, st, users[0], users[1], parts[0], parts[1])


@pytest.fixture
def classic(db) -> Table:
    return make_table("met_classic")


@pytest.fixture
def werewolf(db) -> Table:
    return make_table("met_werewolf")


@pytest.fixture
def bns(db) -> Table:
    return make_table("met_bns")
