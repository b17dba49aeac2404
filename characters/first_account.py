"""The first storyteller of a fresh venue database: asked for at the terminal, or made with a
one-time link to set its password when there is no terminal.

The link is Django's password-reset link: it works until the password is set (the token is
made from the password's hash), for ``PASSWORD_RESET_TIMEOUT`` at most.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from characters.roles import GROUP, storytellers_group

DEFAULT_NAME = "storyteller"


def storytellers_with_password() -> Any:
    """Active accounts that may storytell and can log in with a password."""
    return [
        user
        for user in get_user_model().objects.filter(
            Q(is_superuser=True) | Q(is_staff=True, groups__name=GROUP), is_active=True
        )
        if user.has_usable_password()
    ]


def make_storyteller(username: str, password: str | None) -> Any:
    """The owner of this venue: a superuser in the Storytellers group (every chronicle, the
    admin, the Grapevine upload). Without a password one is set by the link; then an account
    already named so is taken only if it is such an owner still waiting for its password."""
    users = get_user_model().objects
    with transaction.atomic():
        if password is None:
            waiting = users.filter(username=username, is_superuser=True).first()
            if waiting is not None and not waiting.has_usable_password():
                return waiting
            n = 2
            while users.filter(username=username).exists():
                username, n = f"{DEFAULT_NAME}{n}", n + 1
        user = users.create_user(username=username, password=password)
        user.is_staff = user.is_superuser = True
        user.save(update_fields=["is_staff", "is_superuser"])
        user.groups.add(storytellers_group())
    return user


def set_password_path(user: Any) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": token})


def ask_for_storyteller(
    ask: Callable[[str], str], ask_secret: Callable[[str], str], say: Callable[[str], None]
) -> Any:
    """Ask for the user name and (twice) the password until they are good; make the account."""
    say("No storyteller account yet: make the first one (it runs every chronicle).")
    while True:
        username = ask(f"User name [{DEFAULT_NAME}]: ").strip() or DEFAULT_NAME
        if not get_user_model().objects.filter(username=username).exists():
            break
        say(f"{username} is taken. Another name.")
    while True:
        password = ask_secret("Password: ")
        if password != ask_secret("Password again: "):
            say("The two passwords differ. Again.")
            continue
        candidate = get_user_model()(username=username)
        try:
            password_validation.validate_password(password, candidate)
        except ValidationError as error:
            say(" ".join(error.messages))
            continue
        return make_storyteller(username, password)
