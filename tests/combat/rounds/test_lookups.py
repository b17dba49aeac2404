"""A round's screens ask their templates about names a stage lacks (a prompt's initiative
before the round, a declaration's fields before anything is declared, the refusal a tap's
answer carries), and a name Django cannot find costs four exceptions: the round's dicts
(``combat.offers.Offers``) read an absent name as None and every screen says it has no
refusal (``regions.NO_REFUSAL``), so rendering a player's part, the public part and the
round's board looks up nothing that is missing (issue 21)."""

from __future__ import annotations

import pytest

from combat import fragments, render_cache
from combat.models import Combat
from combat.rounds.bookkeeping import combat_book_keeping
from combat.rounds.declaring import combat_declare
from combat.rounds.initiative import combat_begin_round, combat_initiative
from combat.rounds.resolving import combat_resolve
from combat.rounds.starting import combat_start

pytestmark = pytest.mark.django_db

# the board's regions but the people panel (and the challenges', which push it too), whose
# rows are another matter
BOARD = [r for r in fragments.REGIONS if r not in ("people", "challenges")]


def _screens(cast) -> dict[str, str]:
    """What a change pushes (a player's part whole and in pieces, the public part, the
    board's regions), rendered afresh."""
    scene = fragments.load(cast.scene.pk)
    user = cast.users["Frank"]
    with render_cache.RenderCache().active():
        return {
            "private": fragments.private_state(scene, user),
            "pieces": fragments.private_pieces(scene, user),
            "public": fragments.players_state(scene),
            "board": fragments.board_regions(scene, BOARD),
        }


def test_a_rounds_screens_find_every_name_they_ask_about(cast, misses):
    jane, frank = cast.p["Jane"], cast.p["Frank"]
    by = cast.storyteller

    def fight() -> Combat:
        return Combat.objects.get(scene=cast.scene)

    steps = [
        ("start", lambda: combat_start(scene=cast.scene, by=by, participants=[jane, frank])),
        ("initiative", lambda: combat_initiative(combat=fight(), by=by, participant=jane, roll=7)),
        ("initiative", lambda: combat_initiative(combat=fight(), by=by, participant=frank, roll=3)),
        ("begin", lambda: combat_begin_round(combat=fight(), by=by)),
    ]
    steps += [
        (
            "declare",
            lambda p=p: combat_declare(
                combat=fight(), by=by, participant=p, action="dodge", target=None
            ),
        )
        for p in (frank, jane)
    ]
    steps += [
        ("resolve", lambda p=p: combat_resolve(combat=fight(), by=by, participant=p))
        for p in (jane, frank)
    ]
    steps.append(("book-keeping", lambda: combat_book_keeping(combat=fight(), by=by)))
    misses.clear()
    assert 'id="scene-private"' in _screens(cast)["private"] and misses == [], "no fight yet"
    for name, step in steps:
        step()
        misses.clear()
        html = _screens(cast)
        assert 'id="round-prompts"' in html["pieces"] and 'id="combat"' in html["board"]
        assert misses == [], name
