"""Idempotency keys: scoped to the user and the action, refused when reused for another
request or malformed, and safe under parallel posts."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from characters.idempotency import (
    KeyMalformed,
    KeyReused,
    idempotency_claim,
)
from characters.models import IdempotencyKey, LedgerEntry, Trait
from tests.conftest import client_for
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    TraitFactory,
)


def _claim(user, key="k1", action="ledger.spend", payload=None):
    with transaction.atomic():
        return idempotency_claim(user=user, action=action, key=key, payload=payload or {"a": 1})


@pytest.mark.django_db
def test_it_replays_a_key_with_the_same_payload(storyteller) -> None:
    with transaction.atomic():
        first = idempotency_claim(user=storyteller, action="x", key="k1", payload={"a": 1})
        first.complete(entry=7)
    again = _claim(storyteller, action="x")
    assert (first.replay, again.replay, again.result) == (False, True, {"entry": 7})


@pytest.mark.django_db
def test_it_refuses_a_key_reused_with_another_payload(storyteller) -> None:
    _claim(storyteller)
    with pytest.raises(KeyReused, match="already used for a different request"):
        _claim(storyteller, payload={"a": 2})


@pytest.mark.django_db
def test_it_scopes_keys_to_the_user_and_the_action(storyteller, player) -> None:
    _claim(storyteller)
    assert not _claim(player).replay
    assert not _claim(storyteller, action="challenge.respond", payload={"b": 1}).replay
    assert IdempotencyKey.objects.count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "a" * 65, "bad key", "clé", "x\x00y", "a:b"])
def test_it_refuses_a_malformed_key(storyteller, key) -> None:
    with pytest.raises(KeyMalformed, match="1 to 64 letters"):
        _claim(storyteller, key=key)
    assert not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_it_forgets_a_claim_whose_write_rolled_back(storyteller) -> None:
    with pytest.raises(ValueError), transaction.atomic():
        idempotency_claim(user=storyteller, action="x", key="k1", payload={})
        raise ValueError("the write was refused")
    assert not _claim(storyteller, action="x", payload={}).replay


@pytest.mark.django_db(transaction=True)
def test_it_wants_the_writes_transaction(storyteller) -> None:
    with pytest.raises(RuntimeError, match="inside the write's transaction"):
        idempotency_claim(user=storyteller, action="x", key="k1", payload={})


def _post(client, chronicle, character, **fields):
    quick = Trait.objects.get(character=character, name="Quick")
    data = {
        "character": character.pk,
        "kind": "trait_lost",
        "subject": f"trait:{quick.pk}",
        "amount": 1,
        "reason": "lost a brawl",
        "key": "tap-1",
    }
    data.update(fields)
    return client.post(f"/chronicles/{chronicle.pk}/ledger/", data)


@pytest.mark.django_db
def test_it_refuses_the_same_key_for_another_cost(character, chronicle, storyteller) -> None:
    client = client_for(storyteller)
    assert _post(client, chronicle, character).status_code == 302
    response = _post(client, chronicle, character, kind="willpower_spent", subject="")
    assert response.status_code == 409
    html = response.content.decode()
    assert "already used for a different request" in html
    assert 'name="key" value="tap-1"' not in html, "the form carries a fresh key"
    assert LedgerEntry.objects.count() == 1


@pytest.mark.django_db
def test_it_keeps_two_storytellers_keys_apart(character, chronicle, storyteller) -> None:
    second = StorytellerFactory(username="st2")
    chronicle.storytellers.add(second)
    _post(client_for(storyteller), chronicle, character)
    _post(client_for(second), chronicle, character)
    assert LedgerEntry.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["a" * 65, "a" * 500, "bad key", "", "<script>"])
def test_it_answers_a_bad_key_with_400_and_a_message(
    character, chronicle, storyteller, key
) -> None:
    response = _post(client_for(storyteller), chronicle, character, key=key)
    assert response.status_code == 400
    assert "key must be 1 to 64 letters" in response.content.decode()
    assert not LedgerEntry.objects.exists()


@pytest.mark.django_db
def test_it_accepts_a_key_of_64_characters(character, chronicle, storyteller) -> None:
    assert _post(client_for(storyteller), chronicle, character, key="k" * 64).status_code == 302
    assert LedgerEntry.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_it_never_fails_parallel_posts_with_one_key() -> None:
    storyteller = StorytellerFactory(username="st_keys")
    chronicle = ChronicleFactory(name="Keys Chronicle")
    chronicle.storytellers.add(storyteller)
    GameNightFactory(chronicle=chronicle, number=1)
    character = CharacterFactory(chronicle=chronicle, name="Janet")
    TraitFactory(character=character, category="physical", name="Quick", count=2)
    statuses: list[int] = []
    start = threading.Barrier(8)

    def post() -> None:
        try:
            client = client_for(storyteller)
            start.wait()
            statuses.append(_post(client, chronicle, character, key="same-tap").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [302] * 8
    assert LedgerEntry.objects.count() == 1
