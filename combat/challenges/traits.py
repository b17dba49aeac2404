"""What a challenge writes to a sheet through the ledger (``source="challenge <pk>"``): retest
costs (C10, W10), a trait crossed off (C3, C16; W8 the loser's pick; W11 at once).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from characters.models import LedgerKind
from characters.services import LedgerError, ledger_spend
from combat.challenges.reads import name_of, participant_of
from combat.challenges.recording import note
from combat.challenges.refusals import ChallengeError
from combat.models import Challenge, ChallengeStatus
from combat.rules.challenge import CHOICE
from combat.rules.challenge import Challenge as Engine
from combat.steps import refusal_ends_step


def sheet_character(ch: Challenge, side: str):
    participant = participant_of(ch, side)
    if participant is None or participant.character_id is None:
        return None
    return participant.character


def ledger_write(ch: Challenge, character, by, *, rule: str, reason: str, **fields: Any) -> None:
    try:
        # a refusal here refuses the challenge's step: the spend needs no savepoint
        with refusal_ends_step():
            ledger_spend(
                character=character,
                by=by,
                reason=f"{ch.what or ch.category} challenge: {reason}",
                source=ch.source,
                **fields,
            )
    except LedgerError as error:
        raise ChallengeError(str(error), error.rule_id or rule) from None


def pay_costs(
    ch: Challenge, before: Engine, after: Engine, by: AbstractBaseUser, *, side_name: str
) -> None:
    """Costs the step added (willpower, ability points, W11's trait crossed off at once)."""
    new_spent = list(after.spent[len(before.spent) :])
    new_lost = list(after.lost_now[len(before.lost_now) :])
    for who, resource, amount in new_spent:
        character = sheet_character(ch, who)
        if character is None:
            continue
        if resource in {"willpower", "rage", "gnosis"}:
            kind = {
                "willpower": LedgerKind.WILLPOWER_SPENT,
                "rage": LedgerKind.RAGE_SPENT,
                "gnosis": LedgerKind.GNOSIS_SPENT,
            }[resource]
            ledger_write(ch, character, by, kind=kind, amount=amount, reason="retest", rule="C10")
        else:
            ledger_write(
                ch,
                character,
                by,
                kind=LedgerKind.ABILITY_SPENT,
                subject=resource,
                amount=amount,
                reason="ability point",
                rule="W10",
            )
    for who, trait in new_lost:
        lose(ch, who, trait, by, reason="failed overbid (W11)")


def lose(ch: Challenge, side: str, trait: str, by, *, reason: str) -> None:
    character = sheet_character(ch, side)
    if character is None:
        return
    if trait == CHOICE:
        # W8: which trait goes is the loser's pick, made on its own phone (or by the
        # storyteller for an absent player); the ledger entry lands when it is chosen.
        ch.options = {**ch.options, "choose": [*ch.options.get("choose", []), side]}
        if ch.status != ChallengeStatus.OVER:  # at the end, the outcome's line says it first
            note_choosing(ch, side)
        return
    cross_off(ch, character, by, trait, reason=reason, rule="C3")


def cross_off(ch: Challenge, character, by, trait: str, *, reason: str, rule: str) -> None:
    """C3: one trait of the challenge's category crossed off the sheet through the ledger
    (a lost bid; C16 a mob member's; W8 the loser's pick)."""
    ledger_write(
        ch,
        character,
        by,
        kind=LedgerKind.TRAIT_LOST,
        subject=trait,
        category=ch.category,
        amount=1,
        reason=reason,
        rule=rule,
    )


def note_choosing(ch: Challenge, side: str) -> None:
    """W8: the history says which side picks the trait it crosses off."""
    note(ch, f"{name_of(ch, side)} chooses a {ch.category} trait to cross off (W8)")
