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


def _logs_in(client: Client, username: str, password: str = "pw-for-tests") -> None:
    response = client.post("/accounts/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.content[:300]


def _who(client: Client) -> int | None:
    response = client.get(PAGE)
    return response.wsgi_request.user.pk if response.status_code == 200 else None


def test_a_login_as_someone_else_in_the_same_browser_is_that_person_from_then_on():
    """The second login takes a new key (Django flushes the first person's session): this
    process knew the old key as Mara's, and the browser is Nico's at once, not Mara's."""
    mara, nico = UserFactory(username="mara"), UserFactory(username="nico")
    browser = Client()
    _logs_in(browser, "mara")
    old = browser.cookies[settings.SESSION_COOKIE_NAME].value
    assert [_who(browser), _who(browser)] == [mara.pk, mara.pk]  # the second one joined
    _logs_in(browser, "nico")
    assert browser.cookies[settings.SESSION_COOKIE_NAME].value != old
    assert [_who(browser), _who(browser)] == [nico.pk, nico.pk]
    stolen = Client()
    stolen.cookies[settings.SESSION_COOKIE_NAME] = old  # Mara's old key: nobody's now
    assert _who(stolen) is None


def test_a_password_change_keeps_its_browser_and_signs_the_others_out():
    mara = UserFactory(username="mara")
    here, there = Client(), Client()
    for browser in (here, there):
        _logs_in(browser, "mara")
        assert [_who(browser), _who(browser)] == [mara.pk, mara.pk]
    changed = here.post(
        "/accounts/password_change/",
        {
            "old_password": "pw-for-tests",
            "new_password1": "a-brand-new-secret-9",
            "new_password2": "a-brand-new-secret-9",
        },
    )
    assert changed.status_code == 302
    assert [_who(here), _who(here)] == [mara.pk, mara.pk]
    assert _who(there) is None


def test_a_logout_elsewhere_ends_a_session_this_process_knows():
    """Another process's logout deletes the row; this one still knows the key as Mara's and
    reads nobody with it."""
    mara = UserFactory(username="mara")
    client, cookie = _signed_in(mara)
    assert [_who(client), _who(client)] == [mara.pk, mara.pk]
    assert auth.owner(cookie) == mara.pk
    SessionStore(cookie).delete()  # the logout, as another process makes it
    assert _who(client) is None


def test_a_user_row_read_with_a_session_is_not_kept_past_that_request():
    """A request that reads the session but never asks who is signed in leaves the row it read
    behind in its context: the next read of that user's session (a deactivation between)
    reads afresh and signs out."""
    mara = UserFactory(username="mara")
    client, cookie = _signed_in(mara)
    assert [_who(client), _who(client)] == [mara.pk, mara.pk]
    SessionStore(cookie).load()  # joined, the row kept, never taken
    type(mara).objects.filter(pk=mara.pk).update(is_active=False)
    assert _who(client) is None


def test_the_admin_reads_staff_from_the_joined_row_as_it_is_now():
    mara = UserFactory(username="mara", is_staff=True, is_superuser=True)
    client, _ = _signed_in(mara)
    assert [client.get("/admin/").status_code for _ in range(2)] == [200, 200]
    type(mara).objects.filter(pk=mara.pk).update(is_staff=False)
    assert client.get("/admin/").status_code == 302  # to the admin's login
