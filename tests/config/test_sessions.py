"""The session store (config/sessions.py): Django's database sessions, its read written once.
A logout, an expiry or a deleted row ends a session at the next request, as before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from config.sessions import SessionStore
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAGE = "/join/"  # a page for people who have logged in


def _logged_in() -> tuple[Client, str]:
    client = Client()
    client.force_login(UserFactory(username="mara"))
    return client, client.cookies[settings.SESSION_COOKIE_NAME].value


def _stranger_with(cookie: str) -> Client:
    stranger = Client()
    stranger.cookies[settings.SESSION_COOKIE_NAME] = cookie
    return stranger


def test_it_is_the_engine_and_reads_what_was_stored():
    assert settings.SESSION_ENGINE == "config.sessions"
    store = SessionStore()
    store["seen"] = [1, 2]
    store.save()
    assert SessionStore(store.session_key).load() == {"seen": [1, 2]}
    assert SessionStore("no-such-session-key").load() == {}


def test_a_logout_ends_the_session_for_anyone_holding_its_cookie():
    client, cookie = _logged_in()
    assert client.get(PAGE).status_code == 200
    assert _stranger_with(cookie).get(PAGE).status_code == 200  # the cookie is the session
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=cookie).exists()
    assert _stranger_with(cookie).get(PAGE).status_code == 302  # to the login page


def test_an_expired_or_deleted_session_is_nobody():
    client, cookie = _logged_in()
    Session.objects.filter(session_key=cookie).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    assert client.get(PAGE).status_code == 302
    client, cookie = _logged_in()
    Session.objects.filter(session_key=cookie).delete()
    assert client.get(PAGE).status_code == 302


def test_a_sessions_data_read_again_unchanged_is_verified_once(monkeypatch):
    import uuid

    from django.core import signing

    store = SessionStore()
    store["seen"] = [1, 2]
    store["mark"] = uuid.uuid4().hex  # data no other test signed (the cache is the process's)
    store.save()
    verified = []
    loads = signing.loads
    monkeypatch.setattr(signing, "loads", lambda *a, **k: verified.append(1) or loads(*a, **k))
    first = SessionStore(store.session_key).load()
    first["seen"].append(3)  # a request changing its copy changes nobody else's
    assert SessionStore(store.session_key).load() == {"seen": [1, 2], "mark": store["mark"]}
    assert len(verified) == 1  # the second read took the payload verified by the first
    store["seen"] = [4]
    store.save()
    assert SessionStore(store.session_key).load()["seen"] == [4]


def test_session_data_whose_signature_fails_is_an_empty_session_every_time():
    store = SessionStore()
    store["seen"] = [1]
    store.save()
    row = Session.objects.get(session_key=store.session_key)
    forged = row.session_data[:-1] + ("A" if row.session_data[-1] != "A" else "B")
    Session.objects.filter(pk=row.pk).update(session_data=forged)
    for _ in range(2):
        assert SessionStore(store.session_key).load() == {}
