"""Database work the browser tests do beside Playwright."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def off_loop(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run ``fn`` in a thread of its own and return what it returns (or raise what it raised).

    The test thread runs Playwright's event loop, and a service publishes its pushes on commit
    through ``async_to_sync``, which a running loop forbids. The thread's database connection
    is closed (given back to PostgreSQL's pool) before it ends: a connection left checked out
    keeps the test database in use, and its drop at the end of the run fails."""
    out: dict[str, object] = {}

    def run() -> None:
        from django.db import connection

        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as error:  # re-raised in the test thread
            out["error"] = error
        finally:
            connection.close()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]  # type: ignore[return-value]
