"""A publish that fails once is sent again (combat.live._send): after a Redis restart, the
first use of a pooled connection that went stale fails, and the player's own part, published
first, was lost while the public part that followed on a fresh connection went through, so
no hub saw the phone behind (tests/faults: Redis restarted in the middle of a challenge)."""

from __future__ import annotations

from typing import Any

import pytest

from combat import live


class _Flaky:
    """A layer whose first ``fails`` sends raise, as a stale connection's first use does."""

    def __init__(self, fails: int) -> None:
        self.fails = fails
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        if self.fails:
            self.fails -= 1
            raise ConnectionError("Connection closed by server.")
        self.sent.append((group, message))


@pytest.fixture
def flaky(monkeypatch: pytest.MonkeyPatch):
    def make(fails: int) -> _Flaky:
        layer = _Flaky(fails)
        monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
        return layer

    return make


def test_a_publish_that_fails_once_is_sent_again(flaky) -> None:
    layer = flaky(1)
    live.push_to_user(7, '<div id="x" data-seq="3">x</div>')
    assert [group for group, _ in layer.sent] == ["user.7"]


def test_a_layer_that_keeps_failing_is_logged_and_the_request_goes_on(flaky, caplog) -> None:
    layer = flaky(5)
    live.push_to_user(7, '<div id="x" data-seq="3">x</div>')
    assert layer.sent == []
    assert "could not publish to user.7" in caplog.text
