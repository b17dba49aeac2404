"""C12: a sheet may mark a trait Stamina-based; unknown until the storyteller says."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from characters.models import Trait
from tests.conftest import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.rules("C12")]
FIVE = Path(__file__).parent / "data" / "grapevine" / "chronicle_camarilla_five_xml.gex"


def test_it_leaves_stamina_unknown_on_a_grapevine_import() -> None:
    call_command("import_grapevine", str(FIVE), "--chronicle", "Phoenix", stdout=StringIO())
    assert Trait.objects.exists()
    assert not Trait.objects.exclude(stamina_based=None).exists()


def test_it_lets_the_storyteller_mark_a_trait_in_the_admin(character, storyteller) -> None:
    quick = Trait.objects.get(character=character, name="Quick")
    assert quick.stamina_based is None
    page = client_for(storyteller).get(f"/admin/characters/character/{character.pk}/change/")
    html = page.content.decode()
    index = [t.pk for t in character.traits.all()].index(quick.pk)
    assert f'name="traits-{index}-stamina_based"' in html
    assert "Stamina-based" in html
