"""Test-only fault points: a served process that kills itself at a named point.

The fault tests (``tests/faults/``) start ``manage.py serve`` with ``STORYTELLER_FAULT`` set to
a point's name (``kill_after_commit``: a change committed, nothing published;
``kill_mid_publish``: one part published, the rest not), and the process SIGKILLs itself the
first time it gets there. Unset (always, outside those tests) a point is one comparison.

A drop (:func:`once`) loses pushes instead: ``drop_own_parts``, the players' own parts of
the first scene change the process publishes (the public part and the board still go).
"""

from __future__ import annotations

import logging
import os
import signal

FAULT = os.environ.get("STORYTELLER_FAULT", "")
log = logging.getLogger(__name__)


def point(name: str) -> None:
    """Die here, at once and without cleaning up, if this is the armed fault."""
    if FAULT and name == FAULT:
        os.kill(os.getpid(), signal.SIGKILL)


_dropping: list[object] = []  # the one change whose sends an armed drop loses


def once(name: str, change: object) -> bool:
    """Whether to lose this send: if ``name`` is the armed fault, every send of the first
    ``change`` that gets here (and of no other)."""
    if not FAULT or name != FAULT:
        return False
    if not _dropping:
        _dropping.append(change)
    if _dropping[0] != change:
        return False
    log.warning("fault %s: a push of change %s lost", name, change)
    return True
