"""Signals of chases.

``chase_ended`` is sent on commit when a chase ends, with ``sender=Chase`` (the model),
``chase`` (the row: its sides say who caught or escaped whom), ``outcome`` (``"escaped"``,
``"caught"``, ``"prey_out"``, ``"predator_out"`` or ``"both_out"``, K9, K10; or
``"called_off"`` when the storyteller stopped it) and ``origin``
(the dict given to ``start_chase``, e.g. ``{"round_id": ...}``), so the combat a chase came
from can take back a catch.
"""

from django.dispatch import Signal

chase_ended = Signal()
