"""What a start form offers a participant: the bids of each category, tempers, abilities,
weapons, powers, the traits it may regain (W7) and the form's key (its attacker's latest
challenge, so it changes when a challenge starts and never with the scene's seq).

What it offers from a character's sheet is kept per process under what it is a function of
(:func:`_offer_key`: the sheet's key as :mod:`characters.sheet_cache` keeps it, the
participant's own fields it reads, the scene's ruleset), so a change of the scene that left
the sheet as it was (most of them) neither copies the sheet for it nor reads it again; a cost
(a new ``sheet_version``) offers anew. The rows it offers (weapons) are the sheet cache's own,
shared and only read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from combat.challenges import sheets
from combat.models import Participant, Scene
from combat.rules import night


def last_started(scene: Scene) -> dict[int, int]:
    """Each present participant's latest challenge as attacker (those that started one): a
    start form's idempotency key names it, so the key changes when a challenge starts and
    never with the scene's ``seq`` (a form rendered before a clock tap stays good). Kept on
    the participant's row (``Participant.last_started``, written by the start), so it comes
    with the participants a change's renderings read anyway: no query of its own, however
    long the scene's history."""
    from combat.selectors import active_participants  # it reads the regions of this package

    return {p.pk: p.last_started for p in active_participants(scene) if p.last_started}


def start_choices(
    participant: Participant, scene: Scene, targets: list[Participant], last: int = 0
) -> dict:
    """What the phone's (or tablet's) start form offers for this participant."""
    return {
        "participant": participant,
        **_offered(participant, scene),
        "targets": [t for t in targets if t.pk != participant.pk],
        "key": f"start-{scene.pk}-{participant.pk}-{last}",
        "bns": scene.ruleset == "met_bns",
    }


SIZE = 2048  # participants (a night's scenes' characters)
_kept: OrderedDict[int, tuple[Hashable, dict[str, Any]]] = OrderedDict()
_lock = threading.Lock()


def clear() -> None:
    with _lock:
        _kept.clear()


def _offer_key(participant: Participant, scene: Scene) -> Hashable | None:
    """What :func:`_offer` reads, when the participant comes with its character's row as a
    change's renderings read it (``combat.selectors.active_participants``: its
    ``sheet_version`` and its chronicle's ``open_night``), else None (offered afresh): the
    sheet's key (:func:`characters.sheet_cache._key`: the version, the open night, the
    chronicle's ruleset), the participant's fields it reads and the scene's ruleset."""
    if participant.character_id is None or not Participant.character.is_cached(participant):
        return None
    character = participant.character
    night = getattr(participant, "open_night", False)
    if character is None or night is False or not Scene.chronicle.is_cached(scene):
        return None
    if character.chronicle_id != scene.chronicle_id:
        return None
    sheet = (character.pk, character.sheet_version, night, scene.chronicle.ruleset)
    return (participant.pk, participant.npc, sheet, scene.ruleset)


def offered_kept(participant: Participant, scene: Scene) -> bool:
    """Whether what the participant's form offers is kept at its sheet's key (its sheet is
    not read for it)."""
    key = _offer_key(participant, scene)
    with _lock:
        found = _kept.get(participant.pk)
    return key is not None and found is not None and found[0] == key


#: Where a kept offer (:func:`_offered`) names its key: a start form rendered for it is
#: kept under that key (``combat.templatetags.start_forms``), not a spelling of each value.
OFFER_KEY = "offer_key"


def _offered(participant: Participant, scene: Scene) -> dict[str, Any]:
    """:func:`_offer`, kept under :func:`_offer_key` (one entry per participant: its newest),
    with that key (``OFFER_KEY``)."""
    key = _offer_key(participant, scene)
    if key is None:
        return _offer(participant, scene)
    with _lock:
        found = _kept.get(participant.pk)
        if found is not None and found[0] == key:
            _kept.move_to_end(participant.pk)
            return found[1]
    offered = {**_offer(participant, scene), OFFER_KEY: key}
    with _lock:
        _kept[participant.pk] = (key, offered)
        _kept.move_to_end(participant.pk)
        while len(_kept) > SIZE:
            _kept.popitem(last=False)
    return offered


def _offer(participant: Participant, scene: Scene) -> dict[str, Any]:
    """What the form offers from the participant's sheet (read now)."""
    sheet = sheets.load(participant)
    bids = []
    for category in sheets.CATEGORIES:
        traits = sorted(sheet.traits(category).items())
        if participant.character_id is None:
            count = sheet.pool(category)
            traits = [(category.capitalize(), count)] if count else []
        bids.append((category, traits))
    tempers = []
    if scene.ruleset == "met_werewolf":
        tempers = [(t, sheet.temper(t)) for t in sheets.TEMPERS if sheet.temper(t) > 0]
    return {
        # C7: an Incapacitated character cannot start a challenge: the form says why instead
        "incapacitated": sheet.health().down,
        "bids": bids,
        "tempers": tempers,
        "abilities": sorted(sheet.abilities().items()),
        "weapons": sheet.weapons(),
        "attributes": sorted(sheet.attributes()),
        "powers": sheet.powers(),
        "celerity": sheet.has_power("Celerity"),
        "regain": _regainable(sheet) if night.regains_traits(scene.ruleset) else [],
    }


def _regainable(sheet: sheets.Sheet) -> list[str]:
    """W7: the categories with traits lost tonight (the ledger checks once per night)."""
    if sheet.now is None or sheet.participant.npc or sheet.now["willpower"] < 1:
        return []
    out = []
    for category in sheets.CATEGORIES:
        permanent = sum(sheet.now["permanent_traits"].get(category, {}).values())
        if sheet.trait_count(category) < permanent:
            out.append(category)
    return out
