"""What a side spends from its sheet around a challenge: blood for physical traits before the
test (C5) and, met_werewolf, willpower to buy back a category's lost traits (W7).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from characters.idempotency import IdempotencyError
from characters.models import LedgerKind
from characters.services import LedgerError, ledger_regain
from combat.challenges.access import declare, require_live, take
from combat.challenges.reads import name_of
from combat.challenges.recording import tell
from combat.challenges.refusals import NOT_YOURS, ChallengeError, by_the_rules
from combat.challenges.traits import ledger_write, sheet_character
from combat.models import Challenge, LogKind, Participant, Scene
from combat.rules.night import require_regain
from combat.services import SceneError, lock_open_scene, record_change

BLOOD = declare("challenge.blood")


def challenge_blood(
    *,
    scene: Scene,
    challenge: Challenge,
    by: AbstractBaseUser,
    side: str,
    amount: int,
    token: str | None = None,
    key: str | None = None,
    as_st: bool = False,
) -> Challenge:
    """C5: before the test a side spends blood for physical traits (counted in its total):
    at most 3 a challenge and never past the generation's limit (C12: not when surprised).
    The blood goes through the ledger now; a void gives it back."""

    def rules(scene: Scene, ch: Challenge) -> Challenge:
        engine = require_live(ch)
        if ch.sealed.get("throw"):
            raise ChallengeError("Blood for traits is announced before the test.", "C5")
        character = sheet_character(ch, side)
        if character is None or character.blood < 1:
            raise ChallengeError(f"{name_of(ch, side)} has no blood to spend.", "C5")
        with by_the_rules():
            after = engine.spend_blood(side, amount)
        ledger_write(
            ch,
            character,
            by,
            kind=LedgerKind.BLOOD_SPENT,
            amount=amount,
            reason=f"blood for {amount} physical trait(s) (C5)",
            rule="C5",
        )
        text = f"{name_of(ch, side)} spends {amount} blood for {amount} physical trait(s) (C5)"
        return tell(scene, ch, by, text, engine=after)

    return take(
        BLOOD,
        challenge,
        by=by,
        key=key,
        seen=token,
        asked={"side": side, "as_st": as_st, "blood": amount},
        rules=rules,
    )


def challenge_regain(
    *,
    scene: Scene,
    by: AbstractBaseUser,
    participant: Participant,
    category: str,
    key: str | None = None,
) -> None:
    """W7: from the phone, one willpower buys back every trait lost tonight in a category,
    once per game night per category (the ledger refuses a second time, naming W7)."""
    if (
        participant.character_id is None
        or participant.scene_id != scene.pk
        or participant.removed_at is not None
        or participant.character.player_id != by.pk
    ):
        raise ChallengeError(NOT_YOURS)
    with by_the_rules():
        require_regain(scene.ruleset)  # W0: W7 is met_werewolf's
    with transaction.atomic():
        try:
            scene = lock_open_scene(scene)
            ledger_regain(
                character=participant.character,
                category=category,
                by=by,
                source=f"scene {scene.pk}",
                idempotency_key=key,
            )
        except SceneError as error:
            raise ChallengeError(str(error)) from None
        except LedgerError as error:
            raise ChallengeError(str(error), error.rule_id) from None
        except IdempotencyError as error:
            raise ChallengeError(str(error)) from None
        record_change(
            scene,
            by=by,
            kind=LogKind.LEDGER,
            text=f"{participant.name} regains {category} traits for 1 willpower (W7)",
            characters=[participant.character],
            private_user_ids=[by.pk],
            regions=(),  # the sheet's regions go with the ledger's own announcement
        )
