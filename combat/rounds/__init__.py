"""Combat rounds on the tablet and the phones (issue 11).

Steps (each a declared :class:`combat.steps.Step`, run by :func:`combat.rounds.fight.take`):
``starting``, ``initiative``, ``declaring``, ``answers``, ``resolving`` (with ``planning``,
``grapples``, ``damage``), ``pursuit``, ``storyteller``, ``bookkeeping``; met_bns in ``bns``,
MET in ``met``. Shared: ``fight`` (lock, who acts, record), ``tokens`` (tokens, soft timer),
``errors``. Reads only, for the selectors too: ``reads``, ``planning``, ``bns_reads``,
``met_reads``, ``bns_selectors``, ``selectors``. Then ``views``, ``forms`` and ``urls``.
"""
