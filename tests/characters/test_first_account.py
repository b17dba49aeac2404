"""The first storyteller of a fresh venue: asked for at the terminal, or made with a one-time
link to set the password."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from characters import first_account
from characters.access import is_storyteller

pytestmark = pytest.mark.django_db


def test_it_asks_until_the_passwords_match_and_are_good_enough() -> None:
    answers = iter(["", "storyteller"])  # user name: the default
    secrets = iter(
        ["Correct-Horse-9", "Correct-Horse-8", "short", "short", *["Correct-Horse-9"] * 2]
    )
    said: list[str] = []
    user = first_account.ask_for_storyteller(
        lambda _q: next(answers), lambda _q: next(secrets), said.append
    )
    assert user.username == "storyteller"
    assert user.check_password("Correct-Horse-9")
    assert is_storyteller(user) and user.is_superuser
    assert any("differ" in line for line in said)
    assert any("too short" in line for line in said)
    assert first_account.storytellers_with_password() == [user]


def test_the_one_time_link_sets_the_password_once() -> None:
    user = first_account.make_storyteller(first_account.DEFAULT_NAME, None)
    assert not user.has_usable_password() and first_account.storytellers_with_password() == []
    link = first_account.set_password_path(user)
    browser = Client()
    form_page = browser.get(link, follow=True)
    assert b"Set your password" in form_page.content
    done = browser.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "Night-Owl-2026", "new_password2": "Night-Owl-2026"},
        follow=True,
    )
    assert b"Password set" in done.content
    user.refresh_from_db()
    assert user.check_password("Night-Owl-2026")
    assert b"used already" in Client().get(link, follow=True).content


def test_it_never_takes_over_an_account_of_that_name() -> None:
    get_user_model().objects.create_user(username="storyteller", password="players-own-pw-1")
    made = first_account.make_storyteller(first_account.DEFAULT_NAME, None)
    assert made.username == "storyteller2"
    assert get_user_model().objects.get(username="storyteller").check_password("players-own-pw-1")
