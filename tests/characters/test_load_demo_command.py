"""The demo chronicle behind `make run`."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from characters.demo import DEMO_LOGINS
from characters.models import Character, Chronicle, GameNight
from characters.selectors import current_values

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


def test_it_is_idempotent_and_keeps_edits() -> None:
    call_command("load_demo", stdout=StringIO())
    Character.objects.filter(name="Melvin").update(willpower=1)
    call_command("load_demo", stdout=StringIO())
    assert Character.objects.count() == 10
    assert Chronicle.objects.count() == 1
    assert GameNight.objects.count() == 1
    assert Character.objects.get(name="Melvin").willpower == 1


def test_it_gives_the_seed_examples_their_numbers() -> None:
    call_command("load_demo", stdout=StringIO())
    melvin = Character.objects.get(name="Melvin")
    attrs = {a.name: a.value for a in melvin.attributes.all()}
    assert attrs == {"Physical": 3, "Social": 4, "Mental": 12}
    cody = Character.objects.get(name="Cody")
    assert sum(current_values(cody)["traits"]["social"].values()) == 10
    storyteller = Chronicle.objects.get().storytellers.get()
    assert storyteller.is_staff and storyteller.groups.filter(name="Storytellers").exists()
