"""With DEBUG off (the default) an error page is a plain sentence: no URL list, no traceback,
no exception text, nothing of the code."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.config.error_urls")]

CODE_WORDS = [
    b"Traceback",
    b"urlpatterns",
    b"URLconf",
    b"admin/",
    b"hunter2",
    b"RuntimeError",
    b"chronicle 7",
    b"field x",
    b"a-local-value",
    b"config.urls",
    b"DEBUG",
]


@pytest.mark.parametrize(
    ("path", "status", "sentence", "host"),
    [
        ("/no/such/page/", 404, b"There is nothing at this address", "localhost"),
        ("/boom/", 500, b"The server could not do that", "localhost"),
        ("/forbidden/", 403, b"You are not allowed to do that", "localhost"),
        ("/bad/", 400, b"Something in that request was not right", "localhost"),
        ("/", 400, b"Something in that request was not right", "stranger.example"),
    ],
)
def test_it_shows_a_plain_sentence_and_nothing_of_the_code(
    settings, path: str, status: int, sentence: bytes, host: str
) -> None:
    assert settings.DEBUG is False
    response = Client(raise_request_exception=False).get(path, HTTP_HOST=host)
    assert response.status_code == status
    assert sentence in response.content
    for word in CODE_WORDS:
        assert word not in response.content, word
