"""The demo behind `make run`: a chronicle per ruleset, each with a night and a joined scene."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from characters.demo import CAST, CHRONICLES, DEMO_LOGINS
from characters.models import Character, Chronicle, GameNight, Ruleset
from characters.selectors import current_values
from combat.models import Participant, Scene

pytestmark = pytest.mark.django_db


def test_it_loads_a_cast_for_every_ruleset_and_prints_the_logins() -> None:
    out = StringIO()
    call_command("load_demo", stdout=out)
    names = set(Character.objects.values_list("name", flat=True))
    assert {"Delilah", "Melvin", "Janet", "Cody", "Jane", "Frank", "Teddy", "Paulo"} <= names
    assert len(names) == 10
    assert "storyteller / storyteller" in out.getvalue()
    for username, password, _role in DEMO_LOGINS:
        assert authenticate(username=username, password=password) is not None, username


def test_it_opens_one_chronicle_per_ruleset_with_an_open_night_and_a_joined_scene() -> None:
    call_command("load_demo", stdout=StringIO())
    assert sorted(Chronicle.objects.values_list("ruleset", flat=True)) == sorted(Ruleset.values)
    for chronicle in Chronicle.objects.all():
        assert GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).count() == 1
        scene = Scene.objects.get(chronicle=chronicle, closed_at__isnull=True)
        assert scene.ruleset == chronicle.ruleset
        joined = set(
            Participant.objects.filter(scene=scene, removed_at__isnull=True).values_list(
                "character__name", flat=True
            )
        )
        cast = {name for name, (ruleset, _s) in CAST.items() if ruleset == chronicle.ruleset}
        assert joined == cast and cast


def test_it_prints_logins_that_match_what_exists() -> None:
    """Every login printed plays the character named, in the chronicle named."""
    call_command("load_demo", stdout=StringIO())
    for username, _password, role in DEMO_LOGINS[1:]:
        character = Character.objects.select_related("chronicle", "player").get(
            player__username=username
        )
        assert role == f"{character.name} in {character.chronicle.name}"
        assert CHRONICLES[character.chronicle.ruleset][0] == character.chronicle.name
    storyteller_role = DEMO_LOGINS[0][2]
    assert storyteller_role == f"storyteller of all {Chronicle.objects.count()}"


def test_it_is_idempotent_and_keeps_edits() -> None:
    call_command("load_demo", stdout=StringIO())
    Character.objects.filter(name="Melvin").update(willpower=1)
    call_command("load_demo", stdout=StringIO())
    assert Character.objects.count() == 10
    assert Chronicle.objects.count() == 4
    assert GameNight.objects.count() == 4
    assert Scene.objects.count() == 4
    assert Participant.objects.count() == 10
    assert Character.objects.get(name="Melvin").willpower == 1


def test_it_moves_the_cast_of_an_older_one_chronicle_demo() -> None:
    old = Chronicle.objects.create(name="Demo by Night", ruleset=Ruleset.MET_CLASSIC)
    Character.objects.create(chronicle=old, name="Jane", willpower=9)
    call_command("load_demo", stdout=StringIO())
    jane = Character.objects.get(name="Jane")
    assert jane.chronicle.ruleset == Ruleset.WOD_DICE
    assert jane.willpower == 9


def test_it_gives_the_seed_examples_their_numbers() -> None:
    call_command("load_demo", stdout=StringIO())
    melvin = Character.objects.get(name="Melvin")
    attrs = {a.name: a.value for a in melvin.attributes.all()}
    assert attrs == {"Physical": 3, "Social": 4, "Mental": 12}
    cody = Character.objects.get(name="Cody")
    assert sum(current_values(cody)["traits"]["social"].values()) == 10
    storyteller = Chronicle.objects.get(ruleset=Ruleset.MET_CLASSIC).storytellers.get()
    assert storyteller.is_staff and storyteller.groups.filter(name="Storytellers").exists()
