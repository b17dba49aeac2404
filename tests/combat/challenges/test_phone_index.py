"""A player's challenge cards are picked from the scene's index of its challenges, made once
for every player a change renders (``selectors._phone_index``): each player no longer looks
through every challenge of a shared scene. What each phone gets is what looking through all
of them gave: the open ones with a side of theirs, a mob of theirs or a place in one (C16),
and their ``KEPT`` newest finished ones they have not left."""

from __future__ import annotations

import pytest

from combat import render_cache
from combat.challenges import reads, selectors
from combat.models import Challenge
from tests.combat.challenges.test_phone_rows import _copies, _finish, _npcs

pytestmark = pytest.mark.django_db


def _scanned(scene, user) -> list[tuple[int, str, int | None]]:
    """The cards as a scan of every challenge of the scene finds them (the way before the
    index): every open one, then the player's newest finished ones not left, each asked."""
    rows = reads.phone_rows(scene)
    waiting = reads.still_open(rows)
    own = selectors._own(scene, user)
    mine = {p.pk for p in own}

    def took_part(c: Challenge) -> bool:
        ids = {c.attacker_id, c.defender_id} | selectors._mob_of(c)
        return bool(ids & mine)

    held = {c.pk for c in waiting}
    kept = [
        c
        for c in reversed(rows)
        if c.pk not in held and user.pk not in c.options.get("left", ()) and took_part(c)
    ][: selectors.KEPT]
    out = []
    for ch in waiting + kept:
        out += [(ch.pk, side, None) for side in reads.sides_for(ch, user)]
        for member in own:
            if str(member.pk) in ch.options.get("mob", {}) or member.pk in ch.options.get(
                "mob_dropped", []
            ):
                out.append((ch.pk, "member", member.pk))
            elif selectors._may_step_in(ch, member):
                out.append((ch.pk, "step_in", member.pk))
    return out


def _cards(scene, user) -> list[tuple[int, str, int | None]]:
    cards = selectors.player_cards(scene, user)["cards"]
    return [
        (
            c["ch"].pk,
            "step_in" if "step_in_bids" in c else c["viewer"],
            c["member"].pk if "member" in c else None,
        )
        for c in cards
    ]


def test_each_phone_gets_the_cards_a_scan_of_every_challenge_gave(classic):
    t = classic
    mine = _finish(t)
    ghoul, thrall = _npcs(t)
    _copies(mine, selectors.KEPT + 3)  # more of the pair's than a phone keeps
    left = _copies(mine, 2)  # two the attacker's player put away
    for row in Challenge.objects.filter(pk__in=left):
        row.options = {**row.options, "left": [t.a_user.pk]}
        row.save(update_fields=["options"])
    _copies(mine, 5, attacker=ghoul, defender=thrall)  # the storyteller's, on no phone
    # open: the pair's, the NPCs' (on no phone)
    t.start(category="physical", bid="Strong")
    t.start(attacker=ghoul, defender=thrall, by=t.st, category="physical", bid="Physical")
    scene = t.refresh().scene
    for user in (t.a_user, t.d_user):
        with render_cache.RenderCache().active():
            found = _cards(scene, user)
            assert found == _scanned(scene, user)
        assert len(found) == selectors.KEPT + 1  # the open one and the newest kept ones


def test_the_index_is_made_once_for_every_phone_of_a_change(classic):
    t = classic
    _finish(t)
    t.start(category="physical", bid="Strong")
    scene = t.refresh().scene
    with render_cache.RenderCache().active():
        index = selectors._phone_index(scene)
        selectors.player_cards(scene, t.a_user)
        selectors.player_cards(scene, t.d_user)
        assert selectors._phone_index(scene) is index
    with render_cache.RenderCache().active():  # another change: made anew
        assert selectors._phone_index(scene) is not index
