"""Every number in a URL or a form is parsed with bounds: a 30-digit id answers 400 or 404,
never a 500.

The cast: ``storyteller`` runs the scene; ``player`` plays Janet in it. Every POST route
under a scene, a challenge or a chase is posted with 30-digit ids in the URL, and with the
scene's real id and 30-digit values in every field the forms know.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.conftest import client_for

pytestmark = pytest.mark.django_db

HUGE = "9" * 30
FIELDS = [
    "seq",
    "step",
    "key",
    "who",
    "target",
    "participant",
    "attacker",
    "defender",
    "character",
    "seconds",
    "roll",
    "weapon",
    "bonus",
    "total",
    "declared",
    "amount",
    "member",
    "difficulty",
    "pool",
    "damage",
    "head_start",
    "prey",
    "predator",
    "predators",
    "rounds",
    "level",
    "follow_ups",
    "actions",
    "haste",
    "started_by",
    "chronicle",
    "entry",
    "expected",
    "target_1",
    f"target_{HUGE}",
    "target_\u00b2",
    "celerity",
    "target_wins",
    "prey_run",
    "predator_run",
    "pool-1",
    "dice",
    "action",
    "choice",
    "maneuver",
]


def _routes() -> list[tuple[str, list[str]]]:
    """Every URL route with a number in it: (route with {} for each number, names)."""
    found: list[tuple[str, list[str]]] = []

    def walk(patterns, prefix: str) -> None:
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, route)
            elif isinstance(p, URLPattern) and "<int:" in route and not route.startswith("admin"):
                names = re.findall(r"<int:(\w+)>", route)
                found.append((re.sub(r"<int:\w+>", "{}", route), names))

    walk(get_resolver().url_patterns, "")
    return found


ROUTES = _routes()


def test_the_routes_are_found() -> None:
    assert len(ROUTES) > 40


@pytest.mark.parametrize("route", [r for r, _ in ROUTES])
def test_it_answers_30_digit_ids_and_values_without_a_500(route, storyteller, player, scene):
    huge_ids = "/" + route.format(*([HUGE] * route.count("{}")))
    # The scene's own id first (a route under a scene), a huge one for any other id.
    real_scene = "/" + route.format(str(scene.pk), *([HUGE] * (route.count("{}") - 1)))
    for user in (storyteller, player):
        client = client_for(user)
        assert client.get(huge_ids).status_code in (400, 404, 405)
        assert client.post(huge_ids, {"x": "1"}).status_code in (400, 404, 405)
        for value in (HUGE, "\u00b2", "-" + HUGE):  # "²" is a digit to str.isdigit()
            data = dict.fromkeys(FIELDS, value) | {"who": [value, str(scene.pk)]}
            response = client.post(real_scene, data, HTTP_HX_REQUEST="true")
            assert response.status_code < 500, (user, value)


@pytest.mark.parametrize("typed", ["\u00b2", "9" * 5000, "3 \u00b2 7"])
def test_it_refuses_typed_dice_that_int_cannot_read_with_a_sentence(typed) -> None:
    from django import forms

    from chases.forms import parse_dice as chase_dice
    from combat.rounds.wod import parse_dice as round_dice
    from combat.rules.errors import RuleError

    with pytest.raises(RuleError):
        round_dice(typed)
    with pytest.raises(forms.ValidationError):
        chase_dice(typed)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("42", 42),
        (str(2**63 - 1), 2**63 - 1),
        (str(2**63), None),
        ("0", None),
        ("", None),
        ("-3", None),
        ("\u00b2", None),
        ("\u0663", None),
        (HUGE, None),
        (None, None),
    ],
)
def test_parse_id_reads_ascii_ids_in_range_only(text, expected) -> None:
    from config.bounds import parse_id

    assert parse_id(text) == expected
