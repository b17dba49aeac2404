"""Signals of the characters app.

``night_closed`` is sent on commit of the transaction that closes a game night (opening the next
one closes the open one), with ``sender=GameNight``, ``night`` (the row, ``closed_at`` set) and
``by`` (who opened the next night, or None from a script): apps whose rows belong to a night close
them (the scenes of that night, in ``combat``), each in a transaction of its own, so they lock in
their usual order (a scene, then the night) and never wait on the chronicle the opening held.

``sheets_changed`` is sent on commit of a change to sheets (a cost, a regain, a refresh, a new
night), with ``sender=Character``, ``character_ids`` and ``chronicle_ids``: the scenes those
sheets are in show it (``combat.live``).
"""

from django.dispatch import Signal

night_closed = Signal()
sheets_changed = Signal()
