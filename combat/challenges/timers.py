"""A challenge's timer: the answer's and the cancel window's lengths (C8, W10), set, cleared,
and W8's time to pick a trait. The storyteller's pause stops the clock (no deadline).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from combat.challenges.reads import name_of
from combat.models import Challenge

ANSWER_SECONDS = 90  # an answer, a mob's bids, W8's pick
CANCEL_SECONDS = 30  # C8, W10: a cancel window


def seconds_for(label: str) -> int:
    """How long the timer a label names runs: a cancel window (C8, W10) is short, an
    answer, a bid or a W8 choice has the longer time."""
    return CANCEL_SECONDS if label.endswith("may cancel") else ANSWER_SECONDS


def start_timer(challenge: Challenge, label: str) -> None:
    """Start the timer ``label`` names, at its own length (:func:`seconds_for`); a paused
    challenge keeps the label and no deadline (a resume starts it afresh)."""
    seconds = seconds_for(label)
    challenge.timer_label = label
    challenge.deadline = None if challenge.paused else timezone.now() + timedelta(seconds=seconds)


def clear_timer(challenge: Challenge) -> None:
    challenge.deadline = None
    challenge.timer_label = ""


def choice_timer(ch: Challenge, side: str) -> None:
    """W8: the answer's time for ``side`` to pick the trait it crosses off."""
    start_timer(ch, f"{name_of(ch, side)} to choose a trait (W8)")
