"""The board is rendered only for a storyteller's socket that may watch it (issue 21: cheap
taps), and a tablet that connects while a change is pushed still converges.

A change commits, then (on commit) asks whether a storyteller's socket of the scene may be
open (``selectors.board_watched``: a presence row). A tablet writes its row before it reads
the state it sends: either the push sees the row and the tablet gets it, or the push saw no
row and the tablet's state, read later, has the change. The hub's catch-up (which would make a
lost push good a second later, with the whole state) is off here, so a change the skip lost
fails the test.
"""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat import fragments, live, presence, selectors, services
from combat.models import Presence, Scene
from tests.combat.test_scene_socket import _open
from tests.factories import UserFactory
from tests.live_pages import apply, as_shown, is_whole_state, pieces

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("stop_the_hub"),
]

WAIT = 5


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: out.append((group, html)))
    return out


def _advance(scene: Scene, storyteller) -> None:
    services.scene_advance_clock(scene=scene, by=storyteller, seconds=60)


def test_no_board_is_rendered_while_no_storytellers_socket_is_open(
    scene, storyteller, player, sent, django_capture_on_commit_callbacks
) -> None:
    Presence.objects.create(scene=scene, user=player, channel_name="phone.1")  # a phone only
    with django_capture_on_commit_callbacks(execute=True):
        _advance(scene, storyteller)
    groups = [group for group, _ in sent]
    assert live.players_group(scene.pk) in groups
    assert live.storytellers_group(scene.pk) not in groups


@pytest.mark.parametrize("who", ["storyteller", "stranger", "staff_player", "playing_storyteller"])
def test_the_board_is_rendered_when_a_storyteller_may_watch(
    who, scene, storyteller, player, sent, django_capture_on_commit_callbacks
) -> None:
    """A storyteller's row, or anyone's who is not only a player here (conservative), or a
    player who may storytell (staff, or a storyteller of the chronicle who also plays a
    character in the scene, whose tablet is open beside the phone): the board goes."""
    if who == "staff_player":
        player.is_staff = True
        player.save()
    if who == "playing_storyteller":
        scene.chronicle.storytellers.add(player)
    user = {
        "storyteller": storyteller,
        "staff_player": player,
        "playing_storyteller": player,
    }.get(who)
    Presence.objects.create(scene=scene, user=user or UserFactory(), channel_name="tablet.1")
    with django_capture_on_commit_callbacks(execute=True):
        _advance(scene, storyteller)
    board = dict(sent)[live.storytellers_group(scene.pk)]
    assert board == fragments.board_regions(Scene.objects.get(pk=scene.pk), ("clock", "log"))


def test_whether_a_board_is_watched_is_one_query(scene, storyteller, player) -> None:
    for n in range(5):
        Presence.objects.create(scene=scene, user=player, channel_name=f"phone.{n}")
    with CaptureQueriesContext(connection) as queries:
        assert selectors.board_watched(scene.pk) is False
    assert len(queries) == 1


async def _tablet_converges(scene: Scene, storyteller) -> None:
    """The tablet's state and the pushes that follow it (no whole state again: no resync)
    equal a fresh render of the board after the change."""
    tablet, state = await _open(scene.pk, storyteller)
    board = pieces(state)

    def fresh() -> tuple[int, str]:
        now = Scene.objects.get(pk=scene.pk)
        return now.seq, fragments.storyteller_state(now)

    try:
        async with asyncio.timeout(WAIT):
            while True:
                seq, want = await sync_to_async(fresh)()
                if seq == scene.seq + 1 and as_shown(board, seq) == as_shown(pieces(want), seq):
                    break
                message = await tablet.receive_from(timeout=WAIT)
                assert not is_whole_state(message), "the change reached the tablet by a resync"
                apply(board, message)
    except TimeoutError:
        raise AssertionError("the tablet never got the change") from None
    finally:
        await tablet.disconnect()


async def test_a_change_committed_after_a_tablet_read_its_state_is_pushed_to_it(
    scene, storyteller, settings, monkeypatch
) -> None:
    """The change commits after the tablet's presence row and its first state: its push
    sees the row and goes to the tablet."""
    settings.LIVE_CATCH_UP = 3600
    real = fragments.storyteller_state
    once = []

    def state_then_a_change(s: Scene) -> str:
        html = real(s)
        if not once:
            once.append(1)
            _advance(s, storyteller)
        return html

    monkeypatch.setattr(fragments, "storyteller_state", state_then_a_change)
    await _tablet_converges(scene, storyteller)


async def test_a_change_whose_push_found_no_tablet_is_in_the_state_it_reads(
    scene, storyteller, settings, monkeypatch
) -> None:
    """The change commits (and its push skips the board: no row yet) while the tablet is
    connecting, before its presence row: the state it reads afterwards has the change."""
    settings.LIVE_CATCH_UP = 3600
    real = presence.presence_connect
    skipped = []

    def a_change_then_the_row(**kwargs) -> None:
        if not skipped:
            rendered = []
            board_regions = fragments.board_regions
            monkeypatch.setattr(
                fragments,
                "board_regions",
                lambda *a, **k: rendered.append(1) or board_regions(*a, **k),
            )
            _advance(Scene.objects.get(pk=scene.pk), storyteller)
            monkeypatch.setattr(fragments, "board_regions", board_regions)
            skipped.append(not rendered)
        real(**kwargs)

    monkeypatch.setattr(presence, "presence_connect", a_change_then_the_row)
    await _tablet_converges(scene, storyteller)
    assert skipped == [True], "the change's push rendered a board for nobody"


def test_a_changes_pushes_ask_the_scene_row_whether_the_board_is_watched(scene, player) -> None:
    """The scene's row, read for the change's renderings, says whether a storyteller's socket
    may be open (in its own query): no query of the presence rows of its own."""
    Presence.objects.create(scene=scene, user=player, channel_name="phone.1")  # a phone only
    with CaptureQueriesContext(connection) as queries:
        parts = list(fragments.scene_change_parts(scene.pk, board=None))
    assert [audience for audience, _u, _h in parts] == ["players"]
    rest = [q["sql"] for q in queries if not q["sql"].startswith('SELECT "combat_scene"."id"')]
    assert not [q for q in rest if 'FROM "combat_presence"' in q]


@pytest.mark.parametrize("tablet", [False, True])
def test_a_sheet_change_asks_the_scene_row_whether_the_board_is_watched(
    scene, storyteller, player, character, sent, tablet
) -> None:
    """A sheet's push (``live.sheets_changed``) takes the board's part when a storyteller's
    socket may be open, and asks the scene's row (``watched``): no query of its own."""
    Presence.objects.create(scene=scene, user=player, channel_name="phone.1")
    if tablet:
        Presence.objects.create(scene=scene, user=storyteller, channel_name="tablet.1")
    with CaptureQueriesContext(connection) as queries:
        live.sheets_changed(character_ids=[character.pk])
    groups = [group for group, _ in sent]
    assert live.player_group(scene.pk, player.pk) in groups
    assert (live.storytellers_group(scene.pk) in groups) is tablet
    connected = 'SELECT "combat_presence"."user_id"'  # the people panel's list (a tablet's)
    rest = [q["sql"] for q in queries if not q["sql"].startswith('SELECT "combat_scene"."id"')]
    assert not [q for q in rest if 'FROM "combat_presence"' in q and connected not in q]
