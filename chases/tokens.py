"""The chase screen's one token ("the state you saw"): keyed with the server's secret over the
chase's step counter, which only goes up (:func:`combat.steps.token`)."""

from __future__ import annotations

from chases.models import Chase
from combat import steps

KIND = "chase"


def token_of(chase: Chase) -> str:
    """The token every screen of ``chase`` carries in its forms (``token``) until it moves."""
    return steps.token(KIND, chase.pk, chase.step)
