"""Every throttle: the one throttled gets the sentence, and someone else is not slowed.

The cast: ``player`` (Janet's) taps and guesses too much; ``other_player`` (Cody's, in the
same scene) plays on; ``storyteller`` runs the scene; ``visitor`` tries passwords.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from combat import services
from combat.models import Scene
from config.throttle import LOCKED_OUT, TOO_MANY_TAPS, Bucket
from tests.conftest import client_for
from tests.factories import CharacterFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough passphrase 42"


@pytest.fixture
def scene(chronicle, storyteller, character, player, other_player) -> Scene:
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_join(code=scene.join_code, user=player, character=character)
    cody = CharacterFactory(chronicle=chronicle, name="Cody", player=other_player)
    services.scene_join(code=scene.join_code, user=other_player, character=cody)
    return scene


# Buckets ----------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "redis"])
def store(request, settings) -> Iterator[str]:
    """The buckets' cache: this process's memory, or Redis (one script a look: GCRA)."""
    if request.param == "memory":
        yield "memory"
        return
    import os
    import uuid

    from django.core.cache import cache

    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set")
    import redis

    prefix = f"{settings.CACHES['default'].get('KEY_PREFIX', 'test')}-{uuid.uuid4()}"
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache.RedisCache",  # as deployed
            "LOCATION": os.environ["REDIS_URL"],
            "KEY_PREFIX": prefix,
        }
    }
    yield "redis"
    cache.close()
    # Its own keys only: cache.clear() is FLUSHDB, which would take the channel layer's
    # groups from under the other test worker's live server (and anyone else's on this Redis).
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    try:
        for key in client.scan_iter(match=f"{prefix}:*", count=500):
            client.delete(key)
    finally:
        client.close()


def test_a_bucket_gives_its_burst_then_its_rate(store) -> None:
    bucket = Bucket("test", rate=4, burst=20)
    assert [bucket.wait("u1", now=100.0) for _ in range(20)] == [0.0] * 20
    assert bucket.wait("u1", now=100.0) == pytest.approx(0.25)
    assert bucket.wait("u2", now=100.0) == 0.0  # someone else has a bucket of their own
    assert bucket.wait("u1", now=100.25) == 0.0  # a token a quarter of a second
    assert bucket.wait("u1", now=100.25) == pytest.approx(0.25)
    assert [bucket.wait("u1", now=110.0) for _ in range(20)] == [0.0] * 20  # full again


def test_peeking_takes_nothing(store) -> None:
    bucket = Bucket("test", rate=1, burst=2)
    assert bucket.wait("u1", now=0.0, take=False) == 0.0
    assert bucket.wait("u1", now=0.0) == 0.0
    assert bucket.wait("u1", now=0.0) == 0.0
    assert bucket.wait("u1", now=0.0, take=False) == pytest.approx(1.0)


# Taps -------------------------------------------------------------------------------------


@pytest.fixture
def slow_refill(settings) -> None:
    """The buckets' sizes as set, refilled slowly enough that however slow the machine,
    the taps of a test come faster than the refill."""
    settings.THROTTLES = {
        name: (0.01, burst) for name, (_rate, burst) in settings.THROTTLES.items()
    }


def _tap(client: Client, scene: Scene) -> int:
    # A tap the scene refuses as unreadable (400) costs a token like any other.
    return client.post(f"/scenes/{scene.pk}/regain/", {}, HTTP_HX_REQUEST="true").status_code


def test_a_player_who_taps_too_fast_gets_the_sentence_and_another_is_not_slowed(
    scene, player, other_player, slow_refill
) -> None:
    janet, cody = client_for(player), client_for(other_player)
    answers = [_tap(janet, scene) for _ in range(25)]
    assert answers == [400] * 20 + [429] * 5  # 20 at once: more than a real player taps
    refused = janet.post(f"/scenes/{scene.pk}/regain/", {}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 429
    assert TOO_MANY_TAPS in refused.content.decode()
    assert 'role="alert"' in refused.content.decode()
    assert int(refused["Retry-After"]) >= 1
    assert [_tap(cody, scene) for _ in range(15)] == [400] * 15  # Cody plays on


def test_a_storyteller_taps_more_before_being_slowed(scene, storyteller, slow_refill) -> None:
    st = client_for(storyteller)
    answers = [_tap(st, scene) for _ in range(61)]
    assert 429 not in answers[:60] and answers[60] == 429


def test_a_throttled_tap_outside_htmx_gets_a_page_with_the_sentence(
    scene, player, slow_refill
) -> None:
    janet = client_for(player)
    for _ in range(30):
        janet.post(f"/scenes/{scene.pk}/regain/", {})
    refused = janet.post(f"/scenes/{scene.pk}/regain/", {})
    assert refused.status_code == 429
    assert TOO_MANY_TAPS in refused.content.decode() and "<html" in refused.content.decode()


def test_reading_pages_is_never_throttled(scene, player) -> None:
    janet = client_for(player)
    assert {janet.get(f"/scenes/{scene.pk}/phone/").status_code for _ in range(30)} == {200}


# Join codes -------------------------------------------------------------------------------


def test_wrong_join_codes_are_throttled_per_user(scene, player, other_player, slow_refill) -> None:
    janet = client_for(player)
    guesses = [janet.post("/join/", {"code": f"ZZZ{n:03d}"}).status_code for n in range(12)]
    assert 429 not in guesses[:10] and guesses[-1] == 429
    refused = janet.get(f"/join/{scene.join_code}/")  # even the right code waits now
    assert refused.status_code == 429 and "Too many wrong tries" in refused.content.decode()
    # Cody, from the same address, is not slowed: his right code takes him to his phone.
    cody = client_for(other_player)
    assert cody.get(f"/join/{scene.join_code}/").status_code == 302


def test_wrong_join_codes_are_throttled_per_address(
    chronicle, scene, django_user_model, slow_refill
) -> None:
    guessers = [client_for(django_user_model.objects.create_user(f"g{n}")) for n in range(4)]
    answers = [
        guesser.get(f"/join/ZZ{n:04d}/").status_code
        for guesser in guessers
        for n in range(9)  # each under its own limit of 10
    ]
    assert answers[:30].count(429) == 0 and answers[-1] == 429
    elsewhere = client_for(django_user_model.objects.create_user("far_away"))
    assert elsewhere.get("/join/ZZ0000/", REMOTE_ADDR="10.0.0.9").status_code == 404


def test_a_right_code_costs_nothing(scene, player) -> None:
    janet = client_for(player)
    assert {janet.get(f"/join/{scene.join_code}/").status_code for _ in range(30)} == {302}


# Logins (django-axes) -----------------------------------------------------------------------


def _login(username: str, password: str, address: str = "10.0.0.1") -> tuple[int, str]:
    client = Client(REMOTE_ADDR=address)
    response = client.post("/accounts/login/", {"username": username, "password": password})
    return response.status_code, response.content.decode()


@pytest.fixture
def janet(django_user_model):
    return django_user_model.objects.create_user("janet", password=PASSWORD)


def test_wrong_passwords_lock_that_name_from_that_address_for_a_while(
    janet, django_user_model, settings
) -> None:
    django_user_model.objects.create_user("frank", password=PASSWORD)
    answers = [_login("janet", f"guess {n}")[0] for n in range(5)]
    assert answers == [200, 200, 200, 200, 429]
    status, page = _login("janet", PASSWORD)  # the right password waits too
    assert status == 429
    minutes = settings.AXES_COOLOFF_TIME.total_seconds() // 60
    assert LOCKED_OUT.format(minutes=int(minutes)) in page
    assert 'name="password"' in page  # the login page, with its form
    assert _login("frank", PASSWORD)[0] == 302  # another name from the same address
    assert _login("janet", PASSWORD, address="10.0.0.2")[0] == 302  # her own phone


def test_the_lock_ends_after_the_cool_off(janet) -> None:
    from axes.models import AccessAttempt

    for n in range(5):
        _login("janet", f"guess {n}")
    assert _login("janet", PASSWORD)[0] == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert _login("janet", PASSWORD)[0] == 302


def test_code_that_authenticates_without_a_request_is_not_locked(janet) -> None:
    from django.contrib.auth import authenticate

    assert authenticate(username="janet", password=PASSWORD) == janet


def test_processes_share_the_buckets_through_redis(settings) -> None:
    """With REDIS_URL each server process reads the same bucket (a fresh connection here
    stands for another process)."""
    import os
    import uuid

    from django.core.cache import cache

    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: each process keeps its own buckets")
    redis = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ["REDIS_URL"],
        "KEY_PREFIX": f"{settings.CACHES['default'].get('KEY_PREFIX', 'test')}-{uuid.uuid4()}",
    }
    settings.CACHES = {"default": dict(redis)}
    bucket = Bucket("shared", rate=0.01, burst=3)
    assert [bucket.wait("u1") for _ in range(3)] == [0.0] * 3
    settings.CACHES = {"default": dict(redis)}  # another process, another connection
    try:
        assert bucket.wait("u1") > 0
    finally:
        bucket.reset("u1")
        cache.close()


def test_on_redis_a_look_at_a_bucket_is_one_round_trip(store, monkeypatch) -> None:
    if store != "redis":
        pytest.skip("the cache in memory has no round trips")
    from redis.connection import AbstractConnection

    commands: list[bytes] = []
    original = AbstractConnection.send_packed_command

    def counted(self, command, *args, **kwargs):
        name = b"".join(command).split(b"\r\n")[2]
        if name not in {b"HELLO", b"CLIENT", b"AUTH", b"SELECT"}:  # a new connection's
            commands.append(name)
        return original(self, command, *args, **kwargs)

    bucket = Bucket("test", rate=1, burst=2)
    assert bucket.wait("u1") == 0.0  # Redis learns the script (if it did not know it)
    monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)
    assert bucket.wait("u1") == 0.0
    assert bucket.wait("u1") > 0
    assert commands == [b"EVALSHA", b"EVALSHA"]


def test_the_throttle_makes_its_cache_once_not_a_request(settings, monkeypatch) -> None:
    """``caches["default"]`` is a new backend in each request's context; the throttle's is
    made once, and again only when ``CACHES`` changes."""
    import contextvars

    from django.core.cache import caches

    made = []
    create = caches.create_connection
    monkeypatch.setattr(
        caches, "create_connection", lambda alias: made.append(alias) or create(alias)
    )
    settings.CACHES = {"default": dict(settings.CACHES["default"])}
    bucket = Bucket("test", rate=1000, burst=1000)
    for _ in range(3):  # three requests: three contexts
        contextvars.Context().run(bucket.wait, "u1")
    assert made == ["default"]
    settings.CACHES = {"default": dict(settings.CACHES["default"])}
    bucket.wait("u1")
    assert made == ["default", "default"]
    bucket.reset("u1")


def test_a_cache_that_does_not_answer_lets_every_tap_through(settings) -> None:
    """Redis away (the cache every process shares) must not turn taps into 500s."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]  # nothing listens here once the socket closes
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    bucket = Bucket("player", rate=1.0, burst=1)
    assert [bucket.wait("u1") for _ in range(3)] == [0.0, 0.0, 0.0]
