"""The contract every declared write step keeps (combat/steps.py), checked four ways:

1. a double tap (the same key twice) makes one change;
2. a tap made on a state that moved on (a stale token) is refused and changes nothing;
3. a refusal answers with its sentence and its rule ID;
4. what the step pushes equals a fresh render of the same audiences (zulip's ``verify_action``).

An area's ``tests/<area>/test_step_contract.py`` holds ``ROWS`` (one :class:`Contract` per
declared step, named by its action) and four one-line tests::

    ROWS = [Contract("scene.clock", "scene_cast", setup, tap, token, refused, "C10", state)]

    @pytest.fixture(params=ROWS, ids=contract.ids(ROWS))
    def row(request): return contract.prepare(request)

    def test_a_double_tap_makes_one_change(row): contract.double_tap(row)
    def test_a_stale_token_is_refused_and_changes_nothing(row): contract.stale_token(row)
    def test_a_refusal_answers_its_sentence_and_rule(row): contract.refusal(row)
    def test_the_pushed_fragments_equal_a_fresh_render(row, monkeypatch,
        django_capture_on_commit_callbacks): contract.pushes(row, monkeypatch,
        django_capture_on_commit_callbacks)

``tests/combat/test_step_registry.py`` collects every area's ``ROWS`` and holds them against
``combat.steps.STEPS``: every declared step has a row, every row names a declared step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from combat import fragments, live
from combat.models import Presence, Scene
from combat.steps import Refused, http_status


@dataclass(frozen=True)
class Contract:
    """One declared step, as the contract drives it. ``ctx`` is what ``setup`` returns: it
    must hold ``"scene"`` (the scene the step changes) and ``"users"`` (a mapping of the
    people whose phones may get a private part)."""

    name: str  # the step's action, as declared ("scene.clock", "round.declare", ...)
    fixture: str  # the pytest fixture ``setup`` is given
    setup: Callable[[Any], dict]  # fixture -> ctx
    tap: Callable[[dict, str, str | None], Any]  # (ctx, key, token): the step, as a screen takes it
    token: Callable[[dict], str | None]  # the token a screen shows now (None: the step has none)
    refused: Callable[[dict], Any]  # a tap the rules refuse
    rule: str  # the rule ID that refusal names ("": no rule of the book refuses it)
    state: Callable[[dict], tuple]  # what the step changes, to compare before and after
    regions: tuple[str, ...] | None = None  # the board regions it pushes (None: all of them)
    # the state moves on after the screen drew its token (another tap got in first);
    # needed when ``token`` gives one
    move_on: Callable[[dict], None] | None = None
    pushes_scene: bool = True  # False: a step no scene hears of (no scene group gets a push)
    players: bool = True  # False: a step the players do not see (no public part goes out)
    # True: a change to sheets, not to a scene: the board gets exactly ``regions`` (no clock,
    # no log, no seq) and the players concerned their private part, nobody the public part
    sheet: bool = False
    logged: bool = True  # False: a step that writes no log line (the log panel stays)


def ids(rows: Iterable[Contract]) -> list[str]:
    return [row.name for row in rows]


def prepare(request: pytest.FixtureRequest) -> tuple[Contract, dict]:
    """The parametrized row and its ctx (call from the area's ``row`` fixture)."""
    row: Contract = request.param
    return row, row.setup(request.getfixturevalue(row.fixture))


def double_tap(prepared: tuple[Contract, dict]) -> None:
    """The same tap twice (its key and the token its screen showed) makes one change, and
    the second is no refusal."""
    row, ctx = prepared
    seen = row.token(ctx)
    before = row.state(ctx)
    row.tap(ctx, "contract-tap-1", seen)
    once = row.state(ctx)
    assert once != before, f"{row.name}: the first tap changes what the row's state holds"
    row.tap(ctx, "contract-tap-1", seen)
    assert row.state(ctx) == once


def stale_token(prepared: tuple[Contract, dict]) -> None:
    """A tap on a token the state moved past is refused (409, "moved on"); nothing changes."""
    row, ctx = prepared
    stale = row.token(ctx)
    if stale is None:
        pytest.skip(f"{row.name} carries no token")
    assert row.move_on is not None, f"{row.name}: a row with a token says how it moves on"
    row.move_on(ctx)
    before = row.state(ctx)
    with pytest.raises(Refused) as refused:
        row.tap(ctx, "contract-stale-1", stale)
    assert http_status(refused.value) == 409, refused.value
    assert "moved on" in refused.value.sentence, refused.value.sentence
    assert row.state(ctx) == before


def refusal(prepared: tuple[Contract, dict]) -> None:
    """A refusal is a 409 carrying its sentence and the rule ID, and changes nothing."""
    row, ctx = prepared
    before = row.state(ctx)
    with pytest.raises(Refused) as refused:
        row.refused(ctx)
    error = refused.value
    assert http_status(error) == 409
    assert error.sentence, row.name
    assert error.rule == row.rule, str(error)
    assert not row.rule or re.search(rf"\b{row.rule}\b", str(error)), str(error)
    assert row.state(ctx) == before


def pushes(prepared: tuple[Contract, dict], monkeypatch, capture_on_commit) -> None:
    """Every audience's push equals a fresh render of what it shows (``verify_action``)."""
    row, ctx = prepared
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: sent.append((group, html)))
    watched = _open_a_tablet(ctx["scene"])
    with capture_on_commit(execute=True):
        row.tap(ctx, "contract-push-1", row.token(ctx))
    if not row.pushes_scene:
        assert not [g for g, _ in sent if g.startswith("scene.")], sent
        return
    scene = Scene.objects.get(pk=ctx["scene"].pk)
    pushed = dict(sent)
    logged = {"log"} if row.logged else set()
    regions = None if row.regions is None else {*row.regions, "clock", *logged}
    if row.sheet:  # of those, the ones the scene shows sheets in now (no fight: not its region)
        regions = [r for r in row.regions if r in fragments.sheet_regions(fragments.load(scene.pk))]
    if watched:
        assert pushed[live.storytellers_group(scene.pk)] == fragments.board_regions(scene, regions)
    else:  # a scene the tap opened: no tablet watches it yet, none is rendered for nobody
        assert live.storytellers_group(scene.pk) not in pushed
    if row.players and not row.sheet:
        assert pushed[live.players_group(scene.pk)] == fragments.players_state(scene)
    else:
        assert live.players_group(scene.pk) not in pushed, row.name
    # A player's own part: whole, or (a scene change that leaves the scene's participants,
    # so which characters they have here, as they were) its prompts and log.
    pieces = not row.sheet
    for user in ctx["users"].values():
        group = live.player_group(scene.pk, user.pk)
        fresh = {fragments.private_state(scene, user)}
        if pieces:
            fresh.add(fragments.private_pieces(scene, user))
        for html in [html for g, html in sent if g == group]:
            assert html in fresh, user


def _open_a_tablet(scene: Any) -> bool:
    """A storyteller's socket on the scene (its presence row): the board is pushed only to
    be seen (``selectors.board_watched``). False: a scene the tap itself opens."""
    st = scene.chronicle.storytellers.first() if isinstance(scene, Scene) else None
    if st is None:
        return False
    Presence.objects.create(scene=scene, user=st, channel_name=f"contract.tablet.{scene.pk}")
    return True
