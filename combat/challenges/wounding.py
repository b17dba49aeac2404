"""Wounding a sheet from a challenge (B3): the damage goes through the ledger with the
challenge's source, so a void reverses it with the rest."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from characters.models import LedgerKind
from combat.challenges.reads import name_of
from combat.challenges.traits import ledger_write, sheet_character
from combat.models import Challenge


def wound(ch: Challenge, winner: str, amount: int, by: AbstractBaseUser) -> str:
    """B3: the loser of ``winner``'s blow takes ``amount`` damage on its sheet (a side with no
    sheet, the storyteller's opponent, takes none); the words for the outcome ("" for none)."""
    if not amount:
        return ""
    loser = "defender" if winner == "attacker" else "attacker"
    target = sheet_character(ch, loser)
    if target is not None:
        ledger_write(
            ch,
            target,
            by,
            kind=LedgerKind.HEALTH_DAMAGE,
            amount=amount,
            reason=f"damage from {name_of(ch, winner)} (B3)",
            rule="B3",
        )
    return f"; {name_of(ch, loser)} takes {amount} damage (B3)"
