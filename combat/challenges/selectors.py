"""What each audience sees of a scene's challenges: cards per side, the storyteller's board,
the public line.

Hidden information stays here: a card is built for one viewer (``attacker``, ``defender``,
``st`` or ``public``) and only a side's own card reads its sealed throw or total. The other
side and the storyteller get "locked in" and nothing else; an overbid's announced total is
never stored in what is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.timezone import get_current_timezone

from combat.challenges import board_reads, finished, reads, sheets, start_form
from combat.challenges.reads import cancel_choices
from combat.models import Challenge, ChallengeStatus, Participant, Scene
from combat.offers import Offers
from combat.render_cache import cached, health_now, known
from combat.rules.challenge import Phase, has_werewolf_tests, kinds_of_test
from combat.rules.profiles import Family
from combat.rules.terms import RetestKind, Side

RECENT = reads.RECENT  # finished challenges the public part keeps showing
KEPT = reads.KEPT  # a player's own finished challenges its phone keeps until they leave them

RETEST_WORDS = {
    RetestKind.POWER: "Power retest",
    RetestKind.ABILITY: "Ability retest",
    RetestKind.OVERBID: "Overbid",
    RetestKind.WILLPOWER: "Willpower retest",
    RetestKind.FREE: "Free retest",
}


def _challenges(scene: Scene, recent: int = RECENT) -> list[Challenge]:
    """The open challenges, then the ``recent`` last finished ones: the players' public
    part's, from the rows a phone may show (:func:`reads.phone_rows`), the last finished ones
    no hidden NPC took part in: a hidden NPC's challenge, never shown to players, must not
    push a line they saw out of the list either (a gap they could count). (The storyteller's
    board reads its own: :mod:`combat.challenges.board_reads`.)"""
    rows = reads.phone_rows(scene, reads.NO_PLAYERS)
    waiting = reads.still_open(rows)
    return waiting + _newest(rows, waiting, recent, lambda c: not reads.has_hidden(c))


def _own_challenges(scene: Scene, user: AbstractBaseUser, own: list[int]) -> list[Challenge]:
    """A player's phone: the open challenges that may give it a card (a side of the player's,
    a mob of a character's, a place to step into: C16), and the finished ones the player's
    characters took part in that the player has not left yet (``options["left"]``), however
    many others finish in the scene (at most ``KEPT``, newest first). Picked from the scene's
    index of them (:func:`_phone_index`, made once for every player of a change): a shared
    scene's player no longer looks through every challenge of the scene."""
    index = _phone_index(scene, _players_rendered(scene, user))
    at = set(index.open_by_player.get(user.pk, ())) | set(index.step_in)
    for pk in own:
        at.update(index.open_by_member.get(pk, ()))
    waiting = [index.waiting[i] for i in sorted(at)]
    done: dict[int, Challenge] = {}
    for pk in own:
        done.update(index.done_by.get(pk, {}))
    kept = []
    for position in sorted(done, reverse=True):  # the newest first, as _newest reads them
        c = done[position]
        if user.pk not in c.options.get("left", ()):
            kept.append(c)
            if len(kept) >= KEPT:
                break
    return waiting + kept


@dataclass(frozen=True)
class PhoneIndex:
    """The scene's challenges as the players' own parts pick from them (:func:`_phone_index`):
    ``waiting`` the open ones (:func:`reads.still_open`); by position in it, those with a side
    played by a player (``open_by_player``), with a character in their mob, or dropped out of
    it (``open_by_member``, C16), those one may step into (``step_in``: live, with a place left
    by a drop-out, C16); and the finished ones each participant took part in (``done_by``:
    participant id -> position in the rows -> row)."""

    waiting: list[Challenge]
    open_by_player: dict[int, list[int]]
    open_by_member: dict[int, list[int]]
    step_in: list[int]
    done_by: dict[int, dict[int, Challenge]]


def _players_rendered(scene: Scene, user: AbstractBaseUser) -> frozenset[int]:
    """The players whose own parts this rendering makes: those of the change
    (``("private_users", scene.pk)``, set by :func:`combat.fragments.scene_change_parts`) when
    ``user`` is one of them, else ``user`` alone. A shared scene's change renders the parts of
    the players it concerns, not of everyone present: the phones' list is read for them."""
    together = known(("private_users", scene.pk))
    if together and user.pk in together:
        return frozenset(together)
    return frozenset((user.pk,))


def _phone_index(scene: Scene, players: reads.Players = None) -> PhoneIndex:
    """The index of the rows a phone of ``players`` (None: any present player) may show
    (:func:`reads.phone_rows`), made once for every own part a change renders."""
    players = reads.listed_for(scene, players)

    def make() -> PhoneIndex:
        rows = reads.phone_rows(scene, players)
        waiting = reads.still_open(rows)
        held = {c.pk for c in waiting}
        by_player: dict[int, list[int]] = {}
        by_member: dict[int, list[int]] = {}
        step_in = []
        for i, ch in enumerate(waiting):
            for player in {reads.player_of(ch, s) for s in ("attacker", "defender")} - {None}:
                by_player.setdefault(player, []).append(i)
            for pk in _mob_of(ch):
                by_member.setdefault(pk, []).append(i)
            if ch.status == ChallengeStatus.LIVE and ch.options.get("mob_dropped"):
                step_in.append(i)  # _may_step_in says for whom
        done_by: dict[int, dict[int, Challenge]] = {}
        for position, c in enumerate(rows):
            if c.pk in held:
                continue
            for pk in (c.attacker_id, c.defender_id):
                if pk is not None:
                    done_by.setdefault(pk, {})[position] = c
            for pk in _mob_of(c):  # C16: its members took part too
                done_by.setdefault(pk, {})[position] = c
        return PhoneIndex(waiting, by_player, by_member, step_in, done_by)

    return cached(("challenge_phone_index", scene.pk, players), make)


def _mob_of(ch: Challenge) -> set[int]:
    """C16: the participants in the challenge's mob or dropped out of it."""
    options = ch.options
    if not (options.get("mob") or options.get("mob_dropped")):
        return set()
    return {int(pk) for pk in options.get("mob", {})} | set(options.get("mob_dropped", []))


def _newest(
    rows: list[Challenge], waiting: list[Challenge], most: int | None, wanted: Any
) -> list[Challenge]:
    """The ``most`` newest of ``rows`` (None: all) that are not ``waiting`` and are
    ``wanted``, newest first. ``rows`` come by pk (:func:`reads.phone_rows`): read from the
    newest, a night's older rows are not looked at once enough are found, and ``waiting`` is
    matched by pk (a model's ``==`` per pair cost a night's rows times the open ones)."""
    held = {c.pk for c in waiting}
    out: list[Challenge] = []
    for c in reversed(rows):
        if most is not None and len(out) >= most:
            break
        if c.pk not in held and wanted(c):
            out.append(c)
    return out


def _status(ch: Challenge, names: dict[str, str]) -> str:
    """Where the challenge stands, in words: while it waits for an answer, whose (C11: the
    player's own bid in a test the storyteller called; C16: a mob that forms before the
    defender is asked)."""
    awaiting = ch.options.get("awaiting", "")
    if ch.status == ChallengeStatus.ANSWER and awaiting == "attacker":
        return f"Waiting for {names['attacker']}'s bid"
    if ch.status == ChallengeStatus.ANSWER and awaiting == "mob":
        return "Waiting for the mob to bid (C16)"
    return ch.get_status_display()


def _bids(ch: Challenge) -> dict[str, str]:
    out = {}
    for side in ("attacker", "defender"):
        opts = ch.options.get(side, {})
        bid = opts.get("bid") or ""
        if ch.options.get("ruleset") == "met_bns" and opts.get("attribute"):
            parts = [opts.get("attribute"), opts.get("skill")]
            bid = " + ".join(p for p in parts if p) + " (test pool, B1)"
        out[side] = bid
    return out


def card(ch: Challenge, viewer: str) -> dict[str, Any]:
    """One challenge as ``viewer`` may see it, with the moves the rules allow it now (a
    finished one built once per process: :mod:`combat.challenges.finished`)."""
    return finished.card(ch, viewer, _card)


def _card(ch: Challenge, viewer: str) -> dict[str, Any]:
    engine = reads.engine_of(ch)
    sealed_throws = ch.sealed.get("throw", {})
    sealed_totals = ch.sealed.get("declare", {})
    names = {s: reads.name_of(ch, s, seen=viewer == "st") for s in ("attacker", "defender")}
    leader = engine.leader.value if engine is not None and engine.leader else ""
    data: dict[str, Any] = {
        "ch": ch,
        "viewer": viewer,
        "names": names,
        "bids": _bids(ch),
        "round": reads.round_token(ch, engine),  # the token a throw's form posts
        "throw_at": reads.round_of(engine),  # which throw the card asks about (the "now" key)
        "phase": engine.phase.value if engine else "answer",
        "leader": leader,
        "leader_name": names.get(leader, ""),
        "locked": {s: s in sealed_throws for s in ("attacker", "defender")},
        "declared": {s: s in sealed_totals for s in ("attacker", "defender")},
        "wins": (engine.wins, engine.opponent_wins) if engine else (0, 0),
        "extended": bool(engine and engine.mode.value == "extended"),
        "announced": _announced(ch, engine),
        "awaiting": ch.options.get("awaiting", ""),
        "status": _status(ch, names),
        "dispute": ch.options.get("dispute", ""),
        "moves": Offers(),
        "mob": [
            {"member": m, "bid": ch.options["mob"].get(str(m.pk), {}).get("bid", "")}
            for m in reads.mob_members(ch)
        ],
        "mob_side": ch.options.get("mob_side", "attacker"),
        "mob_dropped": reads.mob_dropped(ch),
        "must_drop": reads.must_drop(ch, engine),
        "blood": _blood(engine),
        "choosing": [names[s] for s in dict.fromkeys(ch.options.get("choose", []))],
        "expired": _expired(ch, viewer, names),
        "by_hand": _by_hand(ch, engine, names),
    }
    if viewer in ("attacker", "defender"):
        data["my_throw"] = sealed_throws.get(viewer, "")
        data["my_total"] = sealed_totals.get(viewer)
        data["moves"] = moves(ch, engine, viewer)
    return data


def _by_hand(ch: Challenge, engine: Any, names: dict[str, str]) -> dict[str, str] | None:
    """C3: a result thrown by hand one side recorded, waiting for the other to confirm."""
    pending = reads.by_hand_pending(ch, engine) if ch.is_open else None
    if pending is None:
        return None
    other = "defender" if pending["side"] == "attacker" else "attacker"
    return {
        **pending,
        "by": names[pending["side"]],
        "other": names[other],
        "words": reads.by_hand_words(ch, pending["result"]),
    }


def _expired(ch: Challenge, viewer: str, names: dict[str, str]) -> str:
    """What a timer that ran out says: a side is told the storyteller decides; the
    storyteller is told which calls it has at this step (the app never decides)."""
    if viewer != "st":
        return "Time is up: the storyteller decides."
    label = ch.timer_label
    if ch.status == ChallengeStatus.OVER:
        return f"Time is up ({label}): your call — choose for them below, or wait."
    if ch.status == ChallengeStatus.ANSWER:
        awaiting = ch.options.get("awaiting", "")
        if awaiting == "mob":
            return (
                f"Time is up ({label}): your call — keep whoever has not bid out of the mob"
                " (C16), add time, set a winner or void."
            )
        if awaiting == "defender":
            return (
                f"Time is up ({label}): your call — force the answer ({names['defender']}"
                " does not bid: the effect happens, no test, C1), add time, set a winner or void."
            )
        return f"Time is up ({label}): your call — add time, set a winner or void."
    return f"Time is up ({label}): your call — force the step, add time or set a winner."


def _blood(engine: Any) -> dict[str, int]:
    """C5: blood traits each side announced (said at the table: both sides see them)."""
    if engine is None:
        return Offers()
    out = {"attacker": engine.attacker.blood + engine.attacker.blood_kept}
    if engine.defender is not None:
        out["defender"] = engine.defender.blood + engine.defender.blood_kept
    return Offers((k, v) for k, v in out.items() if v)


def _announced(ch: Challenge, engine: Any) -> str:
    if engine is None or engine.announced is None or engine.phase is not Phase.THROWS:
        return ""
    r = engine.announced
    # each retest is announced under what it uses: a power's name, an ability's
    what = (r.power if r.kind is RetestKind.POWER else r.ability) or ""
    detail = f"{r.kind.value}: {what}" if what else r.kind.value
    return f"{reads.name_of(ch, r.by.value)} is retesting ({detail})"


def moves(ch: Challenge, engine: Any, side: str) -> dict[str, Any]:
    """The moves the engine allows ``side`` right now (nothing else is offered)."""
    out: dict[str, Any] = Offers()
    me = ch.attacker if side == "attacker" else ch.defender
    if ch.status == ChallengeStatus.OVER and side in ch.options.get("choose", []):
        out["choose"] = choose_choices(ch, side)
        return out
    if not ch.is_open:
        return out
    if ch.status == ChallengeStatus.ANSWER:
        awaiting = ch.options.get("awaiting")
        if awaiting == side and me is not None:
            out["answer"] = answer_choices(ch, me)
        elif awaiting == "defender" and side == "attacker" and me is not None:
            out["relent"] = True  # C2, W5: either side, before the test
        return out
    if engine is None or engine.phase is Phase.OVER:
        return out
    mine = Side(side)
    if engine.throws == 0 and engine.mode.value == "contested" and not ch.sealed.get("throw"):
        out["relent"] = True
    must_drop = reads.must_drop(ch, engine)
    if must_drop and me is not None and me.name in must_drop:
        out["drop_out"] = me.pk  # C16: no throw until it drops out
    if engine.phase is Phase.THROWS and not must_drop:
        out["throw"] = True
    if engine.phase is Phase.THROWS:
        first = engine.throws == 0 and not ch.sealed.get("throw")
        if first and me is not None:
            blood = blood_choices(ch, engine, mine)
            if blood:
                out["blood"] = blood
        if first and engine.mode.value == "contested" and me is not None:
            out["negative"] = True  # C5, W8: before the first throw
        other_retest = engine.announced is not None and engine.announced.by is not mine
        if other_retest and not ch.sealed.get("throw") and me is not None:
            out["cancel"] = cancel_choices(ch, engine, mine)
    declares = side == "attacker" or engine.defender is not None
    undeclared = side not in ch.sealed.get("declare", {})
    if engine.phase is Phase.DECLARATIONS and undeclared and declares:
        out["declare"] = {"most": engine.total(mine)}
    if engine.phase is Phase.RETESTS and engine.leader is not None and engine.leader is not mine:
        # C11: a static opponent (the storyteller) takes the result; it has no retests
        out["retests"] = retest_choices(ch, engine, mine) if me is not None else []
        out["accept"] = True
    return out


def blood_choices(ch: Challenge, engine: Any, side: Side) -> dict[str, Any] | None:
    """C5: blood for physical traits before the test: what this side may still spend (at
    most 3 a challenge, its generation's limit, the blood it has left)."""
    if ch.category != "physical" or engine.profile.family is Family.POOLS:
        return None
    contender = engine.side(side)
    if contender.surprised:
        return None  # C12
    me = ch.attacker if side is Side.ATTACKER else ch.defender
    sheet = sheets.load(me)
    if sheet.now is None or sheet.character is None or sheet.character.blood < 1:
        return None
    left = sheet.now["blood"]
    cap = min(3 - contender.blood_kept, contender.blood_per_turn)
    most = min(cap - contender.blood, left)
    if most < 1:
        return None
    return {
        "most": most,
        "spent": contender.blood,
        "cap": cap,
        "left": left,
        "kept": contender.blood_kept,
    }


def choose_choices(ch: Challenge, side: str) -> dict[str, Any]:
    """W8: the current traits of the category the loser may pick from (its sheet)."""
    me = ch.attacker if side == "attacker" else ch.defender
    traits = sorted(sheets.load(me).traits(ch.category).items()) if me is not None else []
    return {
        "side": side,
        "name": reads.name_of(ch, side),
        "traits": traits,
        "count": ch.options.get("choose", []).count(side),
    }


def member_card(ch: Challenge, member: Participant) -> dict[str, Any]:
    """C16: a mob member's card: the challenge, and its bid while the mob forms."""
    data = card(ch, "member")
    data["member"] = member
    data["dropped"] = member.pk in ch.options.get("mob_dropped", [])
    data["drop_out"] = not data["dropped"] and member.name in data["must_drop"]
    waiting = ch.status == ChallengeStatus.ANSWER and ch.options.get("awaiting") == "mob"
    if waiting and not ch.options["mob"].get(str(member.pk)):
        sheet = sheets.load(member)
        bids = sorted(sheet.traits(ch.category).items())
        if member.character_id is None:
            bids = [(ch.category.capitalize(), sheet.pool(ch.category))]
        data["mob_bids"] = bids
    return data


def _may_step_in(ch: Challenge, member: Participant) -> bool:
    """C16: a place left by a drop-out, before the first throw, for a character not in it
    (never into a challenge with a hidden NPC)."""
    if ch.status != ChallengeStatus.LIVE or not ch.options.get("mob_dropped"):
        return False
    if any(p is not None and p.hidden for p in (ch.attacker, ch.defender)):
        return False
    if reads.in_challenge(ch, member):
        return False
    engine = reads.engine_of(ch)
    return engine is not None and engine.can_step_in()


def step_in_card(ch: Challenge, member: Participant) -> dict[str, Any]:
    """C16: the card offered to a character who may step into a mob for one who dropped."""
    data = card(ch, "member")
    data["member"] = member
    data["step_in_bids"] = sorted(sheets.load(member).traits(ch.category).items())
    return data


def _stamina_only(ch: Challenge, participant: Participant, sheet: sheets.Sheet) -> str:
    """The rule by which this defender bids only Stamina-based physical traits, if one does:
    C12 (surprised: an Incapacitated defender, say) or C15 (outpaced by Celerity)."""
    if ch.defender_id != participant.pk:
        return ""
    if reads.is_surprised(ch.options, sheet):
        return "C12"
    return "C15" if reads.is_outpaced(ch.options, sheet) else ""


def answer_choices(ch: Challenge, participant: Participant) -> dict[str, Any]:
    sheet = sheets.load(participant)
    ruleset = ch.options.get("ruleset")
    temper = ch.category in sheets.TEMPERS
    bids = [] if temper else sorted(sheet.traits(ch.category).items())
    limit = _stamina_only(ch, participant, sheet)
    if limit and ch.category == "physical":
        # the bids the engine takes: the storyteller's ruling, else not flagged otherwise
        ruling, flags = ch.options.get("stamina_ruling"), sheet.stamina_flags()
        bids = [(n, c) for n, c in bids if ruling or (ruling is None and flags.get(n) is not False)]
    abilities = sorted(sheet.abilities().items())
    weapons = sheet.weapons()
    attributes = sorted(sheet.attributes()) if ruleset == "met_bns" else []
    # Issue 19, good defaults: what the defender most likely uses is already picked.
    theirs = ch.options.get("attacker", {})
    named = theirs.get("skill") or theirs.get("ability") or ""
    return {
        "limit": limit,
        "bids": bids,
        "temper": temper,
        "count": sheet.trait_count(ch.category) if not temper else sheet.temper(ch.category),
        "abilities": abilities,
        "weapons": weapons,
        "attributes": attributes,
        # B1: the attribute of the challenge's category; C8: the ability the attack named,
        # when this side has it; the weapon carried, for a physical challenge
        "default_attribute": next(
            (a for a in attributes if a.casefold() == ch.category.casefold()), ""
        ),
        "default_ability": named if any(n == named for n, _v in abilities) else "",
        "default_weapon": weapons[0].pk if weapons and ch.category == "physical" else None,
        "bns": ruleset == "met_bns",
        "quick": participant.character_id is None,
    }


def retest_choices(ch: Challenge, engine: Any, side: Side) -> list[dict[str, Any]]:
    """Each retest this side may still take, with its cost and what is left (rule ID)."""
    me = ch.attacker if side is Side.ATTACKER else ch.defender
    sheet = sheets.load(me)
    family = engine.profile.family
    # C8: the ability the other side uses is the one a met_classic ability retest opposes
    opposing = engine.side(side.other).ability if engine.defender is not None else None
    named = engine.side(side).ability or ""  # the ability the bid named
    out = []
    for kind, rule in engine.allowed_retests(side):
        item: dict[str, Any] = Offers(kind=kind.value, label=RETEST_WORDS[kind], rule=rule)
        if kind is RetestKind.WILLPOWER:
            left = sheet.temper("willpower")
            if left < 1:
                continue
            item["cost"] = f"1 willpower ({left} left)"
        elif kind is RetestKind.ABILITY:
            if family is Family.WEREWOLF:
                options = [
                    (n, sheet.ability_points(n))
                    for n in sorted(sheet.abilities())
                    if sheet.ability_points(n) > 0 and engine.may_retest_with(side, n)
                ]
                if not options:
                    continue
                item["abilities"] = options
                item["cost"] = "1 point of the ability (W10); the other side may cancel"
            else:
                options = [
                    (n, r)
                    for n, r in sorted(sheet.abilities().items())
                    if r > 0 and engine.may_retest_with(side, n, opposing=opposing)
                ]
                if not options:
                    continue  # C8: no rating of this side's can beat theirs
                item["abilities"] = options
                # C8: the opposing rating is named when the retest is called, not before
                item["cost"] = (
                    "nothing spent; your rating must beat theirs in the opposing ability,"
                    " named when you retest (C8)"
                    if engine.defender is not None
                    else "nothing spent; any rating above 0 retests a difficulty (C8)"
                )
        elif kind is RetestKind.OVERBID:
            if family is Family.POOLS:
                item["cost"] = "your pool is at least double theirs (B2)"
            else:
                item["most"] = engine.total(side)
                item["cost"] = (
                    "announce a total; at least double theirs, or the named trait is lost (W11)"
                    if family is Family.WEREWOLF
                    else "announce a total; theirs must be at most half (C9)"
                )
                if family is Family.WEREWOLF and not engine._temper:
                    item["traits"] = sorted(sheet.traits(ch.category).items())
                    # W11: said before the tap: the named trait is at risk either way
                    item["label"] = "Overbid (risks a trait)"
                    item["cost"] = (
                        "you name another trait to risk: lost at once unless your total is at"
                        " least double theirs; if it is, it and your bid are both at risk (W11)"
                    )
        elif kind is RetestKind.POWER:
            if not sheet.powers():
                continue
            item["powers"] = sheet.powers()
            item["cost"] = "a power that retests this; an identical power cancels it (C8)"
        elif kind is RetestKind.FREE:
            # C6 (clarified 2026-11-26): Wounded or worse
            hurt = engine.side(side.other).health.value.capitalize()
            item["cost"] = f"free: your opponent is {hurt} (C6)"
        if "abilities" in item:
            # the ability the bid named comes preselected (else the first one offered)
            offered = [n for n, _v in item["abilities"]]
            item["default"] = next((n for n in offered if n.casefold() == named.casefold()), "")
        out.append(item)
    return out


def player_cards(scene: Scene, user: AbstractBaseUser) -> dict[str, Any]:
    """A player's challenge cards (their characters' sides) and the start form: read once
    for the renderings of one change (its push, the step's answer)."""
    return cached(("challenge_prompts", scene.pk, user.pk), lambda: _player_cards(scene, user))


def _own(scene: Scene, user: AbstractBaseUser) -> list[Participant]:
    """The user's characters in the scene, from the one read of its participants a change's
    renderings share (:func:`combat.selectors.active_participants`). When a change renders
    several players' own parts (``("private_users", scene.pk)``, set by
    :func:`combat.fragments.scene_change_parts`) the sheets of all of them (the start forms')
    are read in one batch: each part read its own before; those whose forms' offers are
    kept at their sheets' keys are not (:func:`start_form.offered_kept`)."""
    from combat.selectors import active_participants  # it reads the regions of this module

    everyone = active_participants(scene)
    together = known(("private_users", scene.pk))
    if together and user.pk in together and _starts_offered(scene):
        players = set(together)
        cached(
            ("challenge_players_sheets", scene.pk, tuple(together)),
            lambda: sheets.load_many(
                p
                for p in everyone
                if _played(p) in players and not start_form.offered_kept(p, scene)
            ),
        )
    by_player = cached(("challenge_played_by", scene.pk), lambda: _by_player(everyone))
    return list(by_player.get(user.pk, ()))


def _by_player(everyone: list[Participant]) -> dict[int | None, list[Participant]]:
    """The participants by their characters' player (:func:`_played`), in their order."""
    out: dict[int | None, list[Participant]] = {}
    for p in everyone:
        out.setdefault(_played(p), []).append(p)
    return out


def _played(p: Participant) -> int | None:
    """The player of a participant's character (None: an NPC, a static opponent)."""
    return None if p.npc or p.character_id is None else p.character.player_id


def _starts_offered(scene: Scene) -> bool:
    return scene.is_open and scene.ruleset != "wod_dice"


def _player_cards(scene: Scene, user: AbstractBaseUser) -> dict[str, Any]:
    own = _own(scene, user)
    ids = [p.pk for p in own]
    cards = []
    if ids:
        for ch in _own_challenges(scene, user, ids):
            for side in reads.sides_for(ch, user):
                cards.append(card(ch, side))
            for member in own:
                dropped = member.pk in ch.options.get("mob_dropped", [])
                if str(member.pk) in ch.options.get("mob", {}) or dropped:
                    cards.append(member_card(ch, member))
                elif _may_step_in(ch, member):
                    cards.append(step_in_card(ch, member))
    # A phone's start form takes its targets from the public part (#scene-targets), so a
    # newcomer needs no re-render of every phone's private part.
    last = reads.phone_last_started(scene) if own else {}
    starts = (
        [start_form.start_choices(p, scene, [], last.get(p.pk, 0)) for p in own]
        if _starts_offered(scene)
        else []
    )
    return {"cards": cards, "starts": starts, "modes": modes_of(scene)}


def board_cards(scene: Scene) -> dict[str, Any]:
    """The storyteller's board: the open challenges (and those waiting on a choice, W8), the
    ``board_reads.SHOWN`` newest finished ones and how many finished ones are older
    (``earlier``: the fold the tablet opens on demand, :func:`earlier_cards`), with the moves
    of the sides the storyteller plays (NPCs, static opponents) and the calls (read once for
    the renderings of one change: its push, the tablet's answer). Under ``cards``, each
    card's data (:func:`board_card`), but challenges whose section is a function of their
    row (:func:`settled_key`) one after the other come as one entry, ``{"run":
    [(settled_key, row), ...]}``: their sections are rendered once per process, and a run's
    whole (:mod:`combat.templatetags.board_runs`), not built or rendered on every change
    (:func:`board_card_list` builds them all). Bounded however long the night: the reads are
    :func:`board_reads.board_rows`'s."""
    return cached(("challenge_board", scene.pk), lambda: _board_cards(scene))


def _card_entries(rows: list[Challenge]) -> list[dict[str, Any]]:
    """The board's entries for ``rows``: a card's data, or a run of settled ones."""
    cards: list[dict[str, Any]] = []
    # the defenders' health the calls on surprise read (C12), in one read
    health_now(
        ch.defender.character_id for ch in rows if _surprise_asked(ch) and ch.defender.character_id
    )
    for ch in rows:
        key = settled_key(ch)
        if key is None:
            cards.append(board_card(ch))
        elif cards and "run" in cards[-1]:
            cards[-1]["run"].append((key, ch))
        else:  # such cards in a row: rendered as one (combat.templatetags.board_runs)
            cards.append({"run": [(key, ch)]})
    return cards


def earlier_cards(
    scene: Scene, before: int | None = None, through: int | None = None
) -> dict[str, Any]:
    """A page of the board's fold of earlier challenges (:func:`board_reads.earlier`), as the
    board's entries (:func:`_card_entries`), with how many are left and where the next page
    starts."""
    page = board_reads.earlier(scene, before, through)
    return {"cards": _card_entries(page.rows), "more": page.more, "before": page.before}


def _board_cards(scene: Scene) -> dict[str, Any]:
    # the whole night stays reachable (void, history): the older ones behind the fold
    held = board_reads.board_rows(scene)
    cards = _card_entries(held.waiting + held.recent)
    from combat.selectors import active_participants  # it reads the regions of this module

    everyone = active_participants(scene)  # the one read every audience of a change shares
    npcs = [p for p in everyone if p.npc or p.character_id is None]
    pcs = [p for p in everyone if not (p.npc or p.character_id is None)]
    starts = scene.is_open and scene.ruleset != "wod_dice" and bool(npcs)
    # Only the NPCs' start forms name their latest challenge; the test form's key names the
    # scene's newest, which the board's list holds: no query of its own without an NPC.
    last = start_form.last_started(scene) if starts else {}
    return {
        "cards": cards,
        "earlier": held.earlier,
        "earlier_version": held.version,
        "npc_starts": [
            start_form.start_choices(p, scene, everyone, last.get(p.pk, 0)) for p in npcs
        ]
        if starts
        else [],
        "pcs": pcs,
        # The storyteller's test form: its key (and kept form's id) changes when any challenge
        # of the scene starts, never with the scene's seq.
        "test_key": f"start-{scene.pk}-test-{held.newest}",
        "modes": modes_of(scene),
        # W0: target counts and races (W13), a required bid (W14) are met_werewolf's
        "werewolf_tests": scene.ruleset != "wod_dice" and has_werewolf_tests(scene.ruleset),
    }


def settled_key(ch: Challenge) -> tuple[Any, ...] | None:
    """What a challenge's section of the board is a function of when the storyteller has no
    call on it beyond its row, or None (build and render it every time). Such a challenge is

    - over or void, with no timer, no W8 choice and no mob (C16), or
    - open between two players' characters (no side the storyteller plays, no mob, no W8
      choice): its calls are the row's (a forced step, the winner) but, before the
      defender's bid, the ruling on surprise (C12), which reads the defender's health.

    Its section is then a function of the row's pk and ``step`` (every write but a player
    leaving it, which the board does not show, moves it: :mod:`combat.challenges.finished`),
    of the sides as the board names them (pk, name, hidden: a rename, a reveal), with a
    timer of the time zone its time is written in, and of whether the defender is surprised
    (:func:`st_surprised`, in the key); as
    :func:`combat.templatetags.finished_cards.card_key` keys the card itself."""
    options = ch.options or {}
    if options.get("choose") or options.get("mob") or options.get("mob_dropped"):
        return None
    if ch.is_open:
        if options.get("awaiting") == "mob" or reads.sides_for_st(ch):
            return None
        engine = reads.engine_of(ch)
        if engine is not None and engine.mob:
            return None
    elif ch.deadline is not None:
        return None
    zone = get_current_timezone() if ch.deadline is not None else None
    return (ch.pk, ch.step, _who(ch.attacker), _who(ch.defender), zone, st_surprised(ch))


def _surprise_asked(ch: Challenge) -> bool:
    """Whether the storyteller may rule on surprise now (C12: before the defender's bid)."""
    return ch.status == ChallengeStatus.ANSWER and ch.defender is not None


def st_surprised(ch: Challenge) -> bool | None:
    """C12: before the defender's bid, whether the defender is surprised (the storyteller's
    call on it), else None. Read from the defender's health alone, all that
    :func:`reads.is_surprised` reads of a sheet (:func:`health_now`: no whole sheet). Read
    once per row (a change's renderings read their rows afresh): its section, built while
    the board renders, reads what its key read."""
    if not _surprise_asked(ch):
        return None
    held = ch.__dict__.get("_st_surprised")
    if held is not None:
        return held
    defender, character = ch.defender, ch.defender.character_id
    now = health_now([character]).get(character) if character else None
    surprised = reads.is_surprised(ch.options, sheets.Sheet(defender, None, now))
    ch.__dict__["_st_surprised"] = surprised
    return surprised


def _who(participant: Participant | None) -> tuple[Any, ...] | None:
    return None if participant is None else (participant.pk, participant.name, participant.hidden)


def board_card(ch: Challenge) -> dict[str, Any]:
    """One challenge as the storyteller's board shows it: the storyteller's card, with the
    moves of the sides it plays (NPCs, static opponents) and its calls."""
    data = card(ch, "st")
    data["npc_members"] = [
        member_card(ch, m) for m in reads.mob_members(ch) if m.npc or m.character_id is None
    ]
    data["st_sides"] = (
        [{"side": s, **card(ch, s)} for s in reads.sides_for_st(ch)] if ch.is_open else []
    )
    # W8: the storyteller may choose for an absent player (or an NPC)
    data["st_choose"] = [
        choose_choices(ch, s)
        for s in dict.fromkeys(ch.options.get("choose", []))
        if ch.status == ChallengeStatus.OVER
    ]
    # C16: the storyteller may drop out a member for an NPC or an absent player
    everyone = reads.mob_participants(ch) if data["must_drop"] else {}
    data["st_drops"] = [everyone[n] for n in data["must_drop"] if n in everyone]
    # C16: and keep out of a forming mob a player's character that does not answer
    forming = ch.status == ChallengeStatus.ANSWER and ch.options.get("awaiting") == "mob"
    data["st_keep_out"] = (
        [m for m in reads.unanswered(ch) if not (m.npc or m.character_id is None)]
        if forming
        else []
    )
    data["st_surprised"] = st_surprised(ch)
    data["st_force"] = ch.status == ChallengeStatus.LIVE or (
        ch.status == ChallengeStatus.ANSWER and ch.options.get("awaiting") in {"mob", "defender"}
    )
    return data


def board_card_list(scene: Scene) -> list[dict[str, Any]]:
    """Every card of the board, each settled run's too, as :func:`board_card` builds them."""
    out: list[dict[str, Any]] = []
    for entry in board_cards(scene)["cards"]:
        if "run" in entry:
            out.extend(board_card(ch) for _, ch in entry["run"])
        else:
            out.append(entry)
    return out


def modes_of(scene: Scene) -> list[str]:
    """The kinds of challenge the scene's ruleset has, in the order of reads.MODES (W0: no
    extended challenge outside met_werewolf)."""
    return list(_modes(scene.ruleset))


@cache
def _modes(ruleset: str) -> tuple[str, ...]:
    """A ruleset's kinds (the engine's rules, which never change in a process)."""
    if ruleset == "wod_dice":
        return ()
    kinds = {mode.value for mode in kinds_of_test(ruleset)}
    return tuple(m for m in reads.MODES if m in kinds)


def public_lines(scene: Scene) -> list[dict[str, Any]]:
    """What every player sees: who is in a challenge with whom, and how it ended (hidden
    NPCs never; no bid, throw or total)."""
    out = []
    for ch in _challenges(scene):
        parts = [p for p in (ch.attacker, ch.defender) if p is not None]
        if any(p.hidden for p in parts):
            continue
        out.append(
            {
                "ch": ch,
                "names": " vs ".join(p.name for p in parts) + ("" if ch.defender else " (test)"),
                "state": _status(ch, {"attacker": ch.attacker.name}),
                # who won and the effect in words; what the sheets lost is for the sides
                "outcome": ch.options.get("public_outcome", ch.outcome)
                if ch.status == ChallengeStatus.OVER
                else "",
            }
        )
    return out
