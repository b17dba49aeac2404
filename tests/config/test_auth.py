"""The signed-in user read with the session (config/auth.py): one statement from a session's
second request on, and still exactly Django's answer: a logout, a deactivated account or a
changed password signs the person out at the next request, and a row read for another user
is never taken."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from config import auth
from config.sessions import SessionStore
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAGE = "/join/"  # a page for people who have logged in


def _signed_in(user) -> tuple[Client, str]:
    client = Client()
    client.force_login(user)
    return client, client.cookies[settings.SESSION_COOKIE_NAME].value


def _reads(client: Client) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        status = client.get(PAGE).status_code
    users = [q["sql"] for q in captured if '"auth_user"' in q["sql"]]
    return status, users


def test_from_the_second_request_the_user_comes_with_the_session():
    client, _ = _signed_in(UserFactory(username="mara"))
    status, users = _reads(client)
    assert status == 200
    status, users = _reads(client)
    assert status == 200
    assert len(users) == 1 and '"django_session"' in users[0]  # one statement, joined


def test_a_deactivated_account_or_a_changed_password_signs_out_at_the_next_request():
    mara = UserFactory(username="mara")
    client, _ = _signed_in(mara)
    assert _reads(client)[0] == 200
    type(mara).objects.filter(pk=mara.pk).update(is_active=False)
    assert _reads(client)[0] == 302

    nico = UserFactory(username="nico")
    client, _ = _signed_in(nico)
    assert _reads(client)[0] == 200
    nico.set_password("another-password-entirely")
    nico.save()
    assert _reads(client)[0] == 302


def test_a_row_read_for_another_user_is_never_taken():
    mara, nico = UserFactory(username="mara"), UserFactory(username="nico")
    client, cookie = _signed_in(mara)
    auth.remember(cookie, nico.pk)  # as if this process had it wrong
    response = client.get(PAGE)
    assert response.status_code == 200
    assert response.wsgi_request.user.pk == mara.pk


def test_a_row_read_with_one_session_is_not_kept_for_the_next():
    from config.auth import UserBackend

    mara = UserFactory(username="mara")
    _, cookie = _signed_in(mara)
    SessionStore(cookie).load()
    SessionStore(cookie).load()  # joined: mara's row kept for this request's backend
    SessionStore("no-such-session-key").load()  # the next session read alone
    with CaptureQueriesContext(connection) as captured:
        assert UserBackend().get_user(mara.pk) == mara
    assert len(captured) == 1  # read again, not taken from the other session's read


def test_a_session_made_before_it_names_model_backend_and_still_signs_in():
    mara = UserFactory(username="mara")
    store = SessionStore()
    store[SESSION_KEY] = str(mara.pk)
    store[BACKEND_SESSION_KEY] = auth.MODEL_BACKEND
    store["_auth_user_hash"] = mara.get_session_auth_hash()
    store.create()
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = store.session_key
    response = client.get(PAGE)
    assert response.status_code == 200 and response.wsgi_request.user.pk == mara.pk
    assert settings.AUTHENTICATION_BACKENDS[-1] == auth.BACKEND  # one backend checks passwords
