"""Browser tests: Playwright drives Debian's chromium against the real ASGI app (uvicorn).

No browser is ever downloaded: the tests launch /usr/bin/chromium headless, and are skipped,
saying so, when it is not installed (``apt-get install chromium``).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

CHROMIUM = Path("/usr/bin/chromium")
SKIP_REASON = f"browser tests skipped: {CHROMIUM} not found (apt-get install chromium)"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in item.nodeid:
            item.add_marker(pytest.mark.browser)
            if not CHROMIUM.exists():
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _ThreadedServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test process keeps its own handlers
        pass


_served: list[_ThreadedServer] = []  # the session's live server, once started
QUIET_WAIT = 10.0  # seconds a test's last sockets and requests get to end before the flush


def _wait_until_quiet(server: _ThreadedServer) -> None:
    """Until no connection and no request or socket task of the live server is left. A
    transactional test's flush (TRUNCATE) racing a request or a socket's disconnect (its
    presence row) deadlocked in PostgreSQL now and then, failing the next test. What is still
    there after ``QUIET_WAIT`` is a leak (a task that never ends): it is named in a warning."""
    deadline = time.monotonic() + QUIET_WAIT
    state = server.server_state
    while (state.connections or state.tasks) and time.monotonic() < deadline:
        time.sleep(0.05)
    if state.connections or state.tasks:
        warnings.warn(_not_quiet(state), stacklevel=2)


def _not_quiet(state: object) -> str:
    """The live server's connections and tasks left, each task with its chain of awaits."""
    lines = [f"the live server was not quiet after {QUIET_WAIT:.0f} s:"]
    for connection in list(state.connections):  # type: ignore[attr-defined]
        scope = getattr(connection, "scope", None) or {}
        lines.append(
            f"  connection {type(connection).__name__} {scope.get('type')} {scope.get('path')}"
        )
    for task in list(state.tasks):  # type: ignore[attr-defined]
        lines.append(f"  task {task!r}")
        lines.extend(f"    {where}" for where in _awaits(task))
    return "\n".join(lines)


def _awaits(task: asyncio.Task) -> list[str]:
    """Where a task waits: each coroutine it awaits, down to the innermost, and any task it
    waits for in turn (``Task.print_stack`` shows the outermost frame only)."""
    out: list[str] = []
    coro: object = task.get_coro()
    seen = 0
    while coro is not None and seen < 60:
        seen += 1
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            out.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        inner = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        waiter = getattr(task, "_fut_waiter", None)
        if inner is None or not hasattr(inner, "send"):
            if isinstance(waiter, asyncio.Task) and waiter is not task:
                out.append(f"waits for {waiter!r}")
                task, coro = waiter, waiter.get_coro()
                continue
            break
        coro = inner
    return out


@pytest.fixture(autouse=True)
def _server_quiet_before_flush(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a browser test, before pytest-django empties the database: close every browser
    context the test left open, then let the live server finish what they started (autouse,
    so it is set up after pytest-django's database fixture and torn down before it)."""
    yield
    if "browser" in request.fixturenames:
        for context in list(request.getfixturevalue("browser").contexts):
            context.close()
    if _served:
        _wait_until_quiet(_served[0])


@pytest.fixture(scope="session")
def live_url(django_db_setup: None, django_db_blocker: pytest.FixtureRequest) -> Iterator[str]:
    """The app served by uvicorn on a free loopback port, in a thread of this process."""
    from config.asgi import application

    port = _free_port()
    server = _ThreadedServer(
        uvicorn.Config(
            application,
            host="127.0.0.1",
            port=port,
            lifespan="off",
            ws="websockets-sansio",
            log_level="warning",
        )
    )
    _served[:] = [server]
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start within 10 s")
            time.sleep(0.05)
        yield f"http://localhost:{port}"
        server.should_exit = True
        thread.join(timeout=10)


# Module scope: Playwright's loop must be gone before pytest-asyncio's tests run.
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import expect, sync_playwright

    # Every expect() waits on its condition and ends as soon as it holds; the ceiling is 15 s
    # rather than Playwright's 5 s, as CI's two cores run the rest of the suite beside these.
    expect.set_options(timeout=15_000)

    # Playwright's sync API keeps an event loop in the test thread; the tests' own ORM calls
    # (making the cast, flushing the database) are plain sync code, so Django's async guard
    # must stand down for as long as the browser runs.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    page = context.new_page()
    yield page
    context.close()
