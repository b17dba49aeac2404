"""What the scene tests of both kinds (challenges, rounds) share."""

from __future__ import annotations

import re
from types import ModuleType

import pytest
from django.template import base

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]*)"')


def without_tokens(html: str) -> str:
    """``html`` with each form's CSRF token emptied (every request's is its own)."""
    return TOKEN.sub('name="csrfmiddlewaretoken" value=""', html)


def renders_of(monkeypatch, views: ModuleType) -> list[str]:
    """The templates ``views`` renders itself from now on (none when its answers take the
    pushes')."""
    seen: list[str] = []
    real = views.render

    def counted(request, template, *args, **kwargs):
        seen.append(template)
        return real(request, template, *args, **kwargs)

    monkeypatch.setattr(views, "render", counted)
    return seen


@pytest.fixture
def misses(monkeypatch) -> list[str]:
    """The variables a rendering failed to find, as written in the template (each costs
    Django four exceptions, issue 21)."""
    found: list[str] = []
    lookup = base.Variable._resolve_lookup

    def counted(self, context):
        try:
            return lookup(self, context)
        except base.VariableDoesNotExist:
            found.append(self.var)
            raise

    monkeypatch.setattr(base.Variable, "_resolve_lookup", counted)
    return found


@pytest.fixture(autouse=True)
def side_moves_checked(monkeypatch) -> list[dict]:
    """Every side's moves block written in Python (combat/templatetags/card_moves.py) in
    these tests is compared with what its template body renders: the same bytes, or the
    test fails. The cards it was compared on, in order."""
    from combat.templatetags import card_moves

    seen: list[dict] = []

    def check(written: str, body: str, card: dict) -> None:
        assert written == body, (card.get("viewer"), dict(card.get("moves") or {}))
        seen.append(card)

    monkeypatch.setattr(card_moves, "check", check)
    return seen
