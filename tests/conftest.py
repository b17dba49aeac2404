"""The named cast every test can call on."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from django.test import Client

from characters.models import Character, Chronicle
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    TraitFactory,
    UserFactory,
)


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist each worker has its own test database (pytest-django's ``_gw0``
    suffix), so its scenes' primary keys repeat another worker's: its channel layer gets its
    own Redis prefix too, or one worker's pushes would reach the other's scene groups."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    from django.conf import settings

    for layer in settings.CHANNEL_LAYERS.values():
        layer_config = layer.get("CONFIG", {})
        if "prefix" in layer_config:
            layer_config["prefix"] = f"{layer_config['prefix']}-{worker}"


# Tests that start a browser or server processes of their own run one after another, on one
# worker (``make test``'s two): two of them at once on two cores would starve each other's
# timing, while the other worker takes the rest of the suite, test by test.
ONE_AT_A_TIME = ("tests/browser/", "tests/faults/")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``-n N`` (``--dist load``): xdist's load scheduling, but ONE_AT_A_TIME's tests make one
    unit of work. (xdist's own ``loadgroup`` marks do not group under pytest 9.2, whose items
    keep their node ids elsewhere, so the grouping goes by path here.)"""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneAtATime(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return ONE_AT_A_TIME[0] if nodeid.startswith(ONE_AT_A_TIME) else nodeid

    return OneAtATime(config, log)


@pytest.fixture(scope="session", autouse=True)
def _a_channel_layer_per_event_loop() -> Iterator[None]:
    """The live server's loop and each websocket test's loop get their own layer instance
    (tests/channel_layers.py says why)."""
    import channels.layers

    from tests.channel_layers import PerLoopChannelLayers

    shared = channels.layers.channel_layers
    channels.layers.channel_layers = PerLoopChannelLayers()
    yield
    channels.layers.channel_layers = shared


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup) -> Iterator[None]:
    """pytest-django's test databases, with PostgreSQL's connection pools closed before they
    are dropped (a pooled connection a live server's thread took would keep the test
    database in use, and its drop would fail)."""
    from django.db import connections

    yield
    for connection in connections.all():
        close_pool = getattr(connection, "close_pool", None)
        if close_pool is not None:
            close_pool()


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _a_cache_per_test(settings) -> None:
    """The throttles count in the cache: each test starts with an empty one of its own (never
    the Redis cache, which other processes share)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"test-{uuid.uuid4()}",
        }
    }


def forget_kept_renderings() -> None:
    """Forget what this process keeps of past renderings (finished cards and rows, open rows,
    engines, people rows, the board's runs and kept parts, start forms and what they offer,
    sheets' html): the next rendering is made fresh, as a new process makes it."""
    from characters import sheet_html
    from combat.challenges import finished, reads, start_form
    from combat.templatetags import (
        board_kept,
        board_runs,
        card_parts,
        finished_cards,
        people,
        scenes,
        start_forms,
    )

    sheet_html.clear()
    finished.cards.clear()
    finished.rows.clear()
    finished.open_rows.clear()
    reads.forget_engines()
    finished_cards.clear()
    people.clear()
    board_runs.clear()
    board_kept.clear()
    card_parts.clear()
    scenes.clear()
    start_forms.clear()
    start_form.clear()


@pytest.fixture(autouse=True)
def _a_fresh_process_memo_per_test() -> None:
    """The finished cards and rows, people rows and start forms each process keeps are keyed by
    row ids, which a database never gives twice, but a test database does (SQLite rolls its
    counters back with each test's transaction): each test starts with them empty, as a new
    process does."""
    forget_kept_renderings()


@pytest.fixture(autouse=True)
def _each_change_its_own_board(settings) -> Iterator[None]:
    """Each change's board goes within its change, as in a quiet scene: the tests that look at
    a change's pushes read them as its commit sends them. A busy scene's pace (changes of the
    meantime rendered together by the board thread) is tested on its own
    (tests/combat/test_board_turns.py), and the fault tests' real servers run with it."""
    from combat import live

    settings.LIVE_BOARD_PACE = 0
    live.BOARDS.forget()
    yield
    # a change of the test's live server may have left its board to the board thread: it
    # ends (its connection given back) before the test's database is flushed or dropped
    assert live.BOARDS.wait_idle(10), "the board thread did not finish"


@pytest.fixture(autouse=True)
def _static_names_as_written(settings) -> None:
    """Pages link static files by the names in the source (``css/print.css``), whether or not
    ``collectstatic`` (DEBUG off by default) wrote hashed ones; tests/config serves the hashed
    names as deployed."""
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def storyteller(db):  # runs the chronicle
    return StorytellerFactory(username="st")


@pytest.fixture
def player(db):  # plays Janet in that chronicle
    return UserFactory(username="janet_player")


@pytest.fixture
def other_player(db):  # plays someone else and must see nothing of Janet
    return UserFactory(username="cody_player")


@pytest.fixture
def visitor() -> Client:  # an anonymous browser
    return Client()


@pytest.fixture
def chronicle(storyteller) -> Chronicle:
    chronicle = ChronicleFactory(name="Chronicle of Tests")
    chronicle.storytellers.add(storyteller)
    GameNightFactory(chronicle=chronicle, number=1)
    return chronicle


@pytest.fixture
def character(chronicle, player) -> Character:
    janet = CharacterFactory(chronicle=chronicle, name="Janet", player=player, willpower=3)
    TraitFactory(character=janet, category="social", name="Charismatic", count=3)
    TraitFactory(character=janet, category="physical", name="Quick", count=2)
    TraitFactory(character=janet, category="social", name="Tactless", negative=True)
    return janet


@pytest.fixture
def scene(chronicle, storyteller, character, player):
    """An open scene, Elysium, that the player's Janet has joined (read back as it is now)."""
    from combat import services
    from combat.models import Scene

    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_join(code=scene.join_code, user=player, character=character)
    return Scene.objects.get(pk=scene.pk)


@pytest.fixture
async def stop_the_hub() -> AsyncIterator[None]:
    """Each test runs its own event loop: its hub leaves the layer's groups at the end."""
    yield
    from combat import hub

    await hub.get_hub().stop()


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
