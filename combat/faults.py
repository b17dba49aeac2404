"""Test-only fault points: a served process that kills itself at a named point.

The fault tests (``tests/faults/``) start ``manage.py serve`` with ``STORYTELLER_FAULT`` set to
a point's name (``kill_after_commit``: a change committed, nothing published;
``kill_mid_publish``: one part published, the rest not), and the process SIGKILLs itself the
first time it gets there. Unset (always, outside those tests) a point is one comparison.
"""

from __future__ import annotations

import os
import signal

FAULT = os.environ.get("STORYTELLER_FAULT", "")


def point(name: str) -> None:
    """Die here, at once and without cleaning up, if this is the armed fault."""
    if FAULT and name == FAULT:
        os.kill(os.getpid(), signal.SIGKILL)
