"""Challenges phone to phone (issue 10).

Reads: ``reads`` (what a row says; selectors and writes both read it), ``selectors`` (cards
per audience), ``sheets``. The write steps, one module each: ``starting``, ``answering``,
``throwing``, ``retests``, ``negatives``, ``spending``, ``mob``, ``storyteller``, ``leaving``;
what they share: ``access`` (lock, key, who acts), ``recording`` (history, log, pushes),
``outcome``, ``traits`` (crossing traits off), ``wounding``, ``timers``, ``building`` (the
engine from the sheets), ``refusals``.
"""
