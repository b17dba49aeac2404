"""What a challenge row says, read without writing: its engine, who plays each side and for
whom, the names its words use (a hidden NPC is unseen to players), the round a sealed throw
belongs to, a mob's members, the checks the sheets decide (surprise, Celerity, blood kept).

Selectors and the write modules both read from here; this module imports only models, the
sheets and the pure engine.
"""

from __future__ import annotations

import functools
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import BooleanField, Case, ExpressionWrapper, F, OuterRef, Q, QuerySet, When
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTransform
from django.db.models.sql import Query

from combat.challenges import finished, sheets
from combat.models import Challenge, ChallengeStatus, Participant, Scene
from combat.regions import says_none
from combat.render_cache import cached
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.rules.profiles import Family
from combat.rules.terms import RetestKind, Side
from combat.steps import token
from config.prepared import Prepared, PreparedValues, copy_row

#: What a step of a challenge changes on the storyteller's board (combat.fragments.REGIONS).
CHALLENGE_REGIONS = ("challenges",)


THROWS = ("rock", "paper", "scissors")


MODES = ("contested", "static", "simple", "difficult", "extended")


# Engines built lately, by the challenge's pk and ``step``, each with the state it was built
# from: an open challenge's row is read afresh on every change of its scene, and a shared
# scene's change built every open challenge's engine again though one of them moved.
_engines: finished.Memo[tuple[dict[str, Any], Engine]] = finished.Memo(2048)


def engine_of(challenge: Challenge) -> Engine | None:
    """The challenge's engine, from its ``state``: built once per state a row holds (the
    engine is immutable, and a step sets a new ``state`` rather than changing it in place),
    so the reads of one tap share it; and once per process for a row's pk and ``step`` while
    its state is the one it was built from (compared whole: a row that moved, or a state
    written and rolled back, is built again, never served stale)."""
    state = challenge.state
    if not state:
        return None
    built = challenge.__dict__.get("_engine_of")
    if built is not None and built[0] is state:
        return built[1]
    key = (challenge.pk, challenge.step)
    kept = _engines.find(key) if challenge.pk is not None else None
    if kept is not None and kept[0] == state:
        engine = kept[1]
    else:
        engine = Engine.from_dict(state)
        if challenge.pk is not None:
            _engines.keep(key, (state, engine))
    challenge.__dict__["_engine_of"] = (state, engine)  # keeps ``state``: its id stays its own
    return engine


def forget_engines() -> None:
    """Forget the engines built (a test database gives a pk twice)."""
    _engines.clear()


def participant_of(challenge: Challenge, side: str) -> Participant | None:
    """Who plays ``side``; ``None`` for the storyteller's static or simple opponent."""
    return challenge.attacker if side == "attacker" else challenge.defender


def is_st_side(challenge: Challenge, side: str) -> bool:
    """The storyteller plays a side that is an NPC, or the static/simple opponent."""
    participant = participant_of(challenge, side)
    return participant is None or participant.npc or participant.character_id is None


def player_of(challenge: Challenge, side: str) -> int | None:
    participant = participant_of(challenge, side)
    return None if participant is None else member_player(participant)


def sides_for_st(challenge: Challenge) -> list[str]:
    """The sides the storyteller plays from the tablet (NPCs, the static opponent)."""
    return [s for s in ("attacker", "defender") if is_st_side(challenge, s)]


def sides_for(challenge: Challenge, user: AbstractBaseUser, *, as_st: bool = False) -> list[str]:
    """The sides ``user`` may act for: a player their own character's; a storyteller (from
    the tablet) the NPC and static sides. Nobody acts for a character not theirs."""
    if as_st:
        return sides_for_st(challenge)
    return [s for s in ("attacker", "defender") if player_of(challenge, s) == user.pk]


def _in_order(ids: list[int]) -> list[Participant]:
    """The participants of ``ids``, in that order (any gone from the table are left out)."""
    if not ids:
        return []
    found = {p.pk: p for p in Participant.objects.filter(pk__in=ids).select_related("character")}
    return [found[pk] for pk in ids if pk in found]


def mob_members(challenge: Challenge) -> list[Participant]:
    """C16: the mob's other attackers (beyond the primary, who throws)."""
    return _in_order([int(pk) for pk in challenge.options.get("mob", {})])


def member_player(member: Participant) -> int | None:
    if member.character_id is None or member.npc:
        return None
    return member.character.player_id


def mob_dropped(challenge: Challenge) -> list[Participant]:
    """C16: the members who dropped out (they still see how it ends)."""
    return _in_order(challenge.options.get("mob_dropped", []))


def players_of(challenge: Challenge) -> list[int]:
    ids = [player_of(challenge, s) for s in ("attacker", "defender")]
    ids += [member_player(m) for m in (*mob_members(challenge), *mob_dropped(challenge))]
    return [i for i in dict.fromkeys(ids) if i]


def characters_of(challenge: Challenge) -> list:
    parts = [challenge.attacker, challenge.defender, *mob_members(challenge)]
    return [p.character for p in parts if p is not None and p.character_id is not None]


#: A hidden NPC in a challenge's words (cards, history, log): players learn what it does to
#: them, never who it is (as chases say "an unseen pursuer").
UNSEEN = {"attacker": "An unseen attacker", "defender": "An unseen defender"}


def name_of(challenge: Challenge, side: str, *, seen: bool = False) -> str:
    """The side's name as the challenge's words say it: a hidden NPC is unseen there, since
    players read them; ``seen``, its name (the storyteller's board)."""
    participant = participant_of(challenge, side)
    if participant is None:
        return "the storyteller"
    if participant.hidden and not seen:
        return UNSEEN.get(side, UNSEEN["attacker"])
    return participant.name


def has_hidden(challenge: Challenge) -> bool:
    """A hidden NPC is on a side: no line of the challenge is public."""
    return any(p is not None and p.hidden for p in (challenge.attacker, challenge.defender))


def scene_players(scene: Scene) -> list[int]:
    """Every player with a character in the scene (C16: who may step into a mob)."""
    return list(
        Participant.objects.filter(
            scene=scene, removed_at__isnull=True, npc=False, character__isnull=False
        )
        .values_list("character__player_id", flat=True)
        .distinct()
    )


def round_of(engine: Engine | None) -> str:
    """Which throw a sealed throw or total belongs to: a late one from an earlier round is
    refused (both sides throw at the same step, so the step itself cannot be asked)."""
    if engine is None:
        return ""
    return f"{engine.throws}.{len(engine.used)}.{len(engine.spent)}.{engine.phase.value}"


def step_token(ch: Challenge) -> str:
    """The token of the step a screen saw (``steps.token`` over the challenge's ``step``,
    which every step moves on): what a side's or the storyteller's form posts."""
    return token("challenge", ch.pk, ch.step)


def round_token(ch: Challenge, engine: Engine | None = None) -> str:
    """The token of the throw a sealed throw or total belongs to (:func:`round_of`): both
    sides throw at the same step, so the other side locking in leaves it current.
    ``engine``: the challenge's engine when the caller has it already."""
    return token("challenge.round", ch.pk, round_of(engine or engine_of(ch)))


BY_HAND = {  # C3: the pair of throws a result thrown by hand stands for
    "attacker": ("rock", "scissors"),
    "defender": ("scissors", "rock"),
    "draw": ("rock", "rock"),
}


def by_hand_words(ch: Challenge, result: str) -> str:
    return "a draw" if result == "draw" else f"{name_of(ch, result)} won"


def by_hand_pending(ch: Challenge, engine: Engine | None) -> dict[str, str] | None:
    """The result by hand one side recorded for this throw, waiting for the other side (or
    the storyteller) to confirm it; ``None`` when none (or one for an earlier throw)."""
    pending = ch.options.get("by_hand")
    if not pending or engine is None or pending.get("round") != round_of(engine):
        return None
    return pending


BLOOD_LASTS = 300  # C5: game seconds blood traits last after the conflict's last challenge


def _blood_keepers(scene_id: int, but: int, wanted: list[int]) -> QuerySet[Challenge]:
    """The options of the scene's finished challenges that kept blood (but ``but``) with one
    of ``wanted`` on a side, newest first: :func:`blood_kept_of` takes each participant's
    from the newest that names it, and only a side's are named (``outcome._keep_blood``). By
    the sides' indexes (migration 0007): the participants' own challenges, not the scene's."""
    found = Challenge.objects.filter(
        Q(attacker_id__in=wanted) | Q(defender_id__in=wanted),
        scene_id=scene_id,
        status=ChallengeStatus.OVER,
        options__has_key="blood_traits",
    )
    return found.exclude(pk=but).order_by("-pk").values_list("options")


# its SQL compiled once (config.prepared)
_BLOOD_KEEPERS = PreparedValues(_blood_keepers)


def blood_kept_of(challenge: Challenge, participants: list[Participant | None]) -> dict[int, int]:
    """C5: blood traits each participant (by id) bought earlier in this conflict that still
    last: those it held in its latest finished challenge of the scene, when that ended less
    than five game minutes ago (each challenge they last through moves the end on). One query,
    over the participants' finished challenges that kept blood only (not every challenge of
    the night); its SQL built once."""
    wanted = [
        p.pk for p in participants if p is not None and p.character_id is not None
    ]  # a quick NPC keeps no blood
    if challenge.category != "physical" or not wanted:
        return {}
    scene = challenge.scene
    out: dict[int, int] = {}
    for (options,) in _BLOOD_KEEPERS.run(scene.pk, challenge.pk or 0, wanted):
        for pk in wanted:
            held = options.get("blood_traits", {}).get(str(pk))
            if held is not None and pk not in out:
                out[pk] = held if options.get("blood_until", -1) >= scene.game_time else 0
        if len(out) == len(wanted):
            break
    return out


def is_surprised(options: dict[str, Any], defender: sheets.Sheet) -> bool:
    """C12: the attacker said so (from behind, Unseen Presence…); C7: opponents of an
    Incapacitated character normally have surprise. The storyteller's call, once given
    (Heightened Senses or Telepathy may prevent it, C12), stands over both."""
    ruling = options.get("surprise_ruling")
    if ruling is not None:
        return bool(ruling)
    return bool(options.get("surprise")) or defender.health().down


def is_outpaced(options: dict[str, Any], defender: sheets.Sheet) -> bool:
    """C15: the target of Celerity actions it cannot match."""
    return bool(options.get("celerity")) and not defender.has_power("Celerity")


def unanswered(ch: Challenge) -> list[Participant]:
    """C16: the mob's members who have not bid yet (while the mob forms)."""
    pending = {pk for pk, answer in ch.options.get("mob", {}).items() if not answer}
    return [m for m in mob_members(ch) if str(m.pk) in pending]


def mob_participants(ch: Challenge) -> dict[str, Participant]:
    """C16: everyone of the mob by the name the engine knows them by, the primary first."""
    primary = participant_of(ch, ch.options.get("mob_side", "attacker"))
    out = {primary.name: primary} if primary is not None else {}
    for member in mob_members(ch):
        out.setdefault(member.name, member)
    return out


def in_challenge(ch: Challenge, participant: Participant) -> bool:
    """Whether the participant is on either side of the challenge, or was (C16 drop-outs)."""
    ids = {p.pk for p in (ch.attacker, ch.defender) if p is not None}
    ids |= {int(pk) for pk in ch.options.get("mob", {})}
    ids |= set(ch.options.get("mob_dropped", []))
    return participant.pk in ids


def cancel_choices(ch: Challenge, engine: Any, side: Side) -> dict[str, Any]:
    """C8, W10: what ``side`` may cancel the announced retest with (an ability point, the same
    power); the card offers it and a cancel window is timed only when there is one."""
    me = ch.attacker if side is Side.ATTACKER else ch.defender
    sheet = sheets.load(me)
    pending = engine.announced
    out: dict[str, Any] = {"abilities": [], "powers": [], "default": engine.side(side).ability}
    if pending.kind is RetestKind.ABILITY and engine.profile.family is Family.WEREWOLF:
        used = engine._used(RetestKind.ABILITY, side)
        if not used:
            out["abilities"] = [
                (name, sheet.ability_points(name))
                for name in sorted(sheet.abilities())
                if sheet.ability_points(name) > 0
            ]
    if pending.kind is RetestKind.POWER and pending.power in sheet.powers():
        out["powers"] = [pending.power]
    return out


# The scene's row, as a change's renderings read it, says whether it has had a challenge
# (combat.regions.flag): a scene that never had one (a fight's, a chase's) reads none.
CHALLENGE_FLAG = "challenge_had"


def any_challenge() -> QuerySet[Challenge]:
    """The challenges of the scene ``OuterRef("pk")`` (its flag's rows)."""
    return Challenge.objects.filter(scene=OuterRef("pk"))


def scene_rows(scene: Scene) -> list[Challenge]:
    """Every challenge of the scene's night, by pk (the oldest first), as a change's renderings
    would read them (their sides the participants those read anyway; only those taken out of
    the scene since read apart). No change's rendering reads them all now: the phones read
    :func:`phone_rows`, the board :mod:`combat.challenges.board_reads`, each bounded whatever
    the night holds. Kept as the whole read those bounded ones are tested against (their picks
    from it equal theirs), and for a rendering of one row as a change reads it."""
    # kept when there are none too: this seq's renderings share it
    return cached(("challenges", scene.pk), lambda: _rows_of(scene, _listing(scene), None))


RECENT = 3  # finished challenges the public part (and the board's short list) keeps showing
KEPT = 10  # a player's own finished challenges its phone keeps until the player leaves them


#: Whose own finished challenges a phone list holds (:func:`phone_rows`): None, every present
#: player's; a set of user ids, only theirs (the empty set: none, the open ones and the
#: ``RECENT`` newest alone, as the players' public part and who the open ones wait on read).
Players = frozenset[int] | None
NO_PLAYERS: Players = frozenset()  # the phones' list without any player's own rows


def phone_rows(scene: Scene, players: Players = None) -> list[Challenge]:
    """The challenges a phone may show (the players' public part, a player's own part, who
    the open ones wait on): the open ones and those waiting on a choice, the ``RECENT`` newest
    of the others, and each of ``players``' (None: every present player's) ``KEPT`` newest
    they took part in and have not left, however many others finish (the rows of a mob's
    challenge too: its members are in its options). A subset of :func:`scene_rows` (the same
    row objects in one change's renderings) that holds every row the phones' selectors choose
    from it, read whole only for those; listed from :func:`_phone_listing` (not every
    challenge of the scene): what a change costs does not grow with the challenges the scene
    ever had, nor with the players of a shared scene whose parts it does not render."""
    players = listed_for(scene, players)

    def read() -> list[Challenge]:
        listing = _phone_listing(scene, players)
        return _rows_of(scene, listing, _phone_pks(scene, listing, RECENT, KEPT, players))

    return cached(("challenges_phone", scene.pk, players), read)


def listed_for(scene: Scene, players: Players) -> Players:
    """Whose own rows :func:`phone_rows` reads for ``players``: theirs in a scene of more than
    ``FEW`` present players, everyone's (None) in a smaller one: there one read serves every
    rendering of a change (a sheet's push, the own parts, the public part)."""
    if players is not None and len(_played(scene)) <= FEW:
        return None
    return players


def _phone_listing(scene: Scene, players: Players = None) -> list[tuple[Any, ...]]:
    """The scene's challenges a phone may show, listed as :func:`_listed` lists them but only
    a bounded superset of what :func:`_phone_pks` picks (:func:`_phone_listed`): the rows
    still waiting, the ``RECENT`` newest no hidden NPC took part in, and for each present
    participant of ``players`` (None: every player) and side the ``KEPT`` newest its player
    has not left. Every row :func:`_phone_pks` would pick from the whole listing is among
    them, and it picks the same from these (the newest of a kind are the newest of a
    superset): a listing made for more players in the same change serves too (a change
    renders the own parts before the public part, which takes theirs)."""
    made: dict[Players, list[tuple[Any, ...]]] = cached(("challenge_phone_lists", scene.pk), dict)
    for made_for, listing in made.items():
        if made_for is None or (players is not None and players <= made_for):
            return listing
    made[players] = _phone_listed_for(scene, players)
    return made[players]


def _phone_listed_for(scene: Scene, players: Players) -> list[tuple[Any, ...]]:
    if says_none(scene, CHALLENGE_FLAG):
        return []
    played = list(_played(scene, players).items())
    if not played:
        return _lists.run(scene.pk, phones=True)
    if len(played) <= PARTS:
        return _lists.run(scene.pk, [p for p, _ in played], [u for _, u in played], phones=True)
    # a crowded scene: a statement for each ``PARTS`` of them (SQLite refuses a compound
    # SELECT of more than 500 terms), their rows merged by pk (the rows still waiting and
    # the ``RECENT`` newest come with each: the same rows)
    found: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(played), PARTS):
        chunk = played[start : start + PARTS]
        for item in _lists.run(scene.pk, [p for p, _ in chunk], [u for _, u in chunk], phones=True):
            found[item[0]] = item
    return [found[pk] for pk in sorted(found)]


#: A scene of at most this many present players' participants reads them all for any of its
#: phones (:func:`listed_for`): a sheet's push and the change's own parts, each for other
#: players, share one read; a shared scene of more reads for the players asked.
FEW = 8

#: The present players' participants one statement of the phones' list holds (2 arms each:
#: under SQLite's 500 terms of a compound SELECT, and a shape ``config.prepared`` prepares).
PARTS = 64


def _played(scene: Scene, players: Players = None) -> dict[int, int]:
    """The scene's present participants a player plays (of ``players``; None: any), by id:
    their players' ids (read once for a change's renderings: a shared scene's phones' list
    asks it several times)."""
    from combat.selectors import active_participants  # it reads the features' regions

    def read() -> dict[int, int]:
        return {
            p.pk: p.character.player_id
            for p in active_participants(scene)
            if not (p.npc or p.character_id is None)
        }

    every = cached(("challenge_played", scene.pk), read)
    if players is None:
        return dict(every)
    return {pk: user for pk, user in every.items() if user in players}


def _phone_pks(
    scene: Scene, listing: list[tuple[Any, ...]], recent: int, kept: int, players: Players = None
) -> set[int]:
    """Which of the listed challenges :func:`phone_rows` holds (see it), from the listing
    alone (:func:`_listed`) and the scene's present participants' players (of ``players``;
    None: every one)."""
    played = _played(scene, players)
    out: set[int] = set()
    counted: dict[int, int] = {}
    for pk, _step, status, left, attacker, defender, always, hidden, *_ in reversed(listing):
        if status in _OPEN or always:  # open, waiting on a choice, or a mob's (C16)
            out.add(pk)
            continue
        if recent > 0 and not hidden:  # the public part's: none a hidden NPC took part in
            recent -= 1
            out.add(pk)
        for player in {played.get(attacker), played.get(defender)}:
            mine = player is not None and player not in (left or ())
            if mine and counted.get(player, 0) < kept:
                counted[player] = counted.get(player, 0) + 1
                out.add(pk)
    return out


def phone_last_started(scene: Scene) -> dict[int, int]:
    """Each present player's participant's latest challenge as attacker (what
    :func:`combat.challenges.start_form.last_started` says of them), from their rows
    (``Participant.last_started``) as a change's renderings read them: a player's start form
    costs no query of its own."""
    from combat.challenges.start_form import last_started  # it reads this module's sheets

    played = _played(scene)
    return {pk: last for pk, last in last_started(scene).items() if pk in played}


def _listing(scene: Scene) -> list[tuple[Any, ...]]:
    """The scene's challenges listed (:func:`_listed`), once for a change's renderings."""

    def read() -> list[tuple[Any, ...]]:
        return [] if says_none(scene, CHALLENGE_FLAG) else _lists.run(scene.pk, phones=False)

    return cached(("challenge_list", scene.pk), read)


def _rows_of(scene: Scene, listing: list[tuple[Any, ...]], pks: set[int] | None) -> list[Challenge]:
    """The rows of the listed challenges (``pks`` of them; None: every one), in order, each
    read once for a change's renderings (the board's list and the phones' share them)."""
    if not listing:
        return []
    made: dict[int, Challenge] = cached(("challenge_rows", scene.pk), dict)
    wanted = [item for item in listing if (pks is None or item[0] in pks) and item[0] not in made]
    if wanted:
        rows = _read(scene.pk, wanted)
        sides = sides_of(scene, rows)
        for row in rows:
            # as ``row.scene = scene`` etc. set them, without the descriptors' checks (the ids
            # are the row's own): the scene being rendered, not a copy of its row per challenge
            related = row._state.fields_cache
            related["scene"] = scene
            related["attacker"] = sides[row.attacker_id]
            related["defender"] = (
                sides.get(row.defender_id) if row.defender_id is not None else None
            )
            if "token" not in row.__dict__:  # a kept row's comes with it (its pk and step's)
                row.token = step_token(row)  # what a form of its card posts (steps.token)
            made[row.pk] = row
    return [made[pk] for pk, *_ in listing if pk in made and (pks is None or pk in pks)]


#: What a challenge's list reads whole (its open rows): every field but those it lists.
_OPEN = (ChallengeStatus.ANSWER, ChallengeStatus.LIVE)  # as ``Challenge.is_open`` says


def _whole_fields() -> list[Any]:
    return [f for f in Challenge._meta.concrete_fields if f.attname not in ("id", "step")]


def _listed(scene_id: int) -> QuerySet[Challenge]:
    """The scene's challenges as tuples: pk, ``step``, status, who left each
    (``options["left"]``, the one write that moves no step: :mod:`combat.challenges.leaving`),
    its sides' participant ids, whether a phone shows it whatever its age (``always``: a
    loser's choice waits, W8; a mob's, C16, whose members are in its options), whether a
    hidden NPC is on a side (``hidden``: no public line, :func:`has_hidden`), then an open
    one's every other field (:func:`_whole_fields`; NULL for the others): an open row is
    never kept (:data:`finished.rows`), so a change reads it anyway, and with the list it
    costs no query of its own."""
    return _listing_of(Challenge.objects.filter(scene=scene_id))


def _listing_of(rows: QuerySet[Challenge]) -> QuerySet[Challenge]:
    """``rows`` listed as :func:`_listed` says, by pk."""
    is_open = Q(status__in=_OPEN)
    whole = {
        f"whole_{f.attname}": Case(When(is_open, then=F(f.attname)), default=None, output_field=f)
        for f in _whole_fields()
    }
    always = Q(options__has_key="choose") | Q(options__has_key="mob")
    always |= Q(options__has_key="mob_dropped")
    hidden = Q(attacker__hidden=True) | Q(defender__hidden=True)
    rows = rows.order_by("pk").annotate(
        left=KeyTransform("left", "options"),
        side_a=F("attacker_id"),
        side_d=F("defender_id"),
        always=ExpressionWrapper(always, output_field=BooleanField()),
        hidden=ExpressionWrapper(hidden, output_field=BooleanField()),
        **whole,
    )
    return rows.values_list(*LISTED, *whole)


#: A listing's leading columns (:func:`_listed`), converted as read; an open row's other
#: fields follow as the database gave them (:data:`_lists`).
LISTED = ("id", "step", "status", "left", "side_a", "side_d", "always", "hidden")


def _whole(scene_id: int, ids: list[int]) -> QuerySet[Challenge]:
    return Challenge.objects.filter(scene=scene_id, pk__in=ids)


def _phone_listed(
    scene_id: int, parts: list[int] | None = None, users: list[int] | None = None
) -> QuerySet[Challenge]:
    """:func:`_listed`, of the challenges :func:`_phone_arms` picks (``parts``: the present
    players' participants, ``users`` their players, in the same order)."""
    sql, _count = _phone_arms(connection.vendor, len(parts or ()))
    values = [scene_id, scene_id, scene_id, scene_id]
    twice = connection.vendor == "postgresql"  # each side's arm names it twice there
    for part, user in zip(parts or (), users or (), strict=True):
        values += [part, part, user, part, part, user] if twice else [part, user, part, user]
    column = (
        f"{connection.ops.quote_name(Challenge._meta.db_table)}.{connection.ops.quote_name('id')}"
    )
    if connection.vendor == "postgresql":
        # the ids first, once (an InitPlan), then each row by its key: an ``IN`` gave the
        # planner the choice to walk the scene's rows and look each up (a fresh table's
        # statistics say the scene has one)
        picked = f"{column} = ANY(ARRAY({sql}))"
    else:
        picked = f"{column} IN ({sql})"
    # no scene's condition: the ids are the scene's, each read by its key
    return _listing_of(
        Challenge.objects.filter(RawSQL(picked, values, output_field=BooleanField()))
    )


@functools.cache
def _phone_arms(vendor: str, parts: int) -> tuple[str, int]:
    """The ids :func:`_phone_listing` lists, as one statement of ``2 + 2 * parts`` arms, and
    its number of parameters. Each arm reads an index and stops at its limit, however long
    the scene's history (migration 0007):

    - the rows still waiting (open, a loser's choice, W8; a mob's, C16): the scene's partial
      index ``combat_ch_scene_waiting`` (the arm says its condition word for word, so both
      databases use it);
    - the ``RECENT`` newest of the others no hidden NPC took part in (``(scene, id)``,
      backwards);
    - for each participant, as attacker and as defender, the ``KEPT`` newest of the others
      its player has not left (``options["left"]``; ``(attacker, id)``, ``(defender, id)``).

    (Each participant's newest as attacker, its start form's key, is its row's own:
    ``Participant.last_started``, :func:`phone_last_started`.)

    Parameters: the scene's id four times, then for each participant its id (twice on
    PostgreSQL) and its player's, twice."""
    q = connection.ops.quote_name
    table = q(Challenge._meta.db_table)
    people = q(Participant._meta.db_table)
    waiting = _waiting_condition(vendor)
    newest = (
        f"SELECT * FROM (SELECT {q('id')} FROM {table} WHERE {{where}}"
        f" AND NOT {waiting}{{extra}} ORDER BY {{order}}{q('id')} DESC LIMIT {{limit}}) {{name}}"
    )
    if vendor == "postgresql":
        kept = (
            f" AND NOT COALESCE({table}.{q('options')} -> 'left'"
            " @> jsonb_build_array(CAST(%s AS bigint)), FALSE)"
        )
    else:
        kept = (
            f" AND NOT EXISTS (SELECT 1 FROM json_each({table}.{q('options')}, '$.left') j"
            " WHERE j.value = %s)"
        )
    # the scene's hidden NPCs read once (a hashed subquery), not looked up for each row: the
    # arm stays a walk of ``(scene, id)`` backwards whatever the planner thinks of the table
    hiding = f"SELECT {q('id')} FROM {people} WHERE {q('scene_id')} = %s AND {q('hidden')}"
    seen = (
        f" AND {q('attacker_id')} NOT IN ({hiding})"
        f" AND ({q('defender_id')} IS NULL OR {q('defender_id')} NOT IN ({hiding}))"
    )
    arms = [
        f"SELECT {q('id')} FROM {table} WHERE {q('scene_id')} = %s AND {waiting}",
        newest.format(
            where=f"{q('scene_id')} = %s", order="", extra=seen, limit=RECENT, name="recent"
        ),
    ]
    for n in range(parts):
        for side in ("attacker_id", "defender_id"):
            where, order = f"{q(side)} = %s", ""
            if vendor == "postgresql":
                # The statement is prepared: PostgreSQL's generic plan, which knows no
                # participant, takes a side as ``1/n_distinct`` of the table and walked the
                # primary key backwards for it; for a side with no such row (a history of
                # others', bench/tap_cost.py --history) it read every row, 4.5 ms a call.
                # Its range in ``(side, id)``, ordered by both (an equality would let the
                # planner drop the side from the order), is a walk of that index alone.
                where = f"({q(side)}, {q('id')}) BETWEEN (%s, 0) AND (%s, {2**63 - 1})"
                order = f"{q(side)} DESC, "
            name = f"{side[0]}{n}"
            arms.append(newest.format(where=where, order=order, extra=kept, limit=KEPT, name=name))
    return " UNION ALL ".join(arms), 4 + (6 if vendor == "postgresql" else 4) * parts


@functools.cache
def _waiting_condition(vendor: str) -> str:
    """The condition of the index ``combat_ch_scene_waiting`` as the database was given it
    (its literals written in): a partial index serves a query whose WHERE says it."""
    index = next(i for i in Challenge._meta.indexes if i.name == "combat_ch_scene_waiting")
    query = Query(Challenge, alias_cols=False)
    where = query.build_where(index.condition)
    sql, params = where.as_sql(query.get_compiler(connection=connection), connection)
    editor = connection.schema_editor()
    return "(" + sql % tuple(editor.quote_value(p) for p in params) + ")"


def _either_listed(
    scene_id: int, parts: list[int] | None = None, users: list[int] | None = None, *, phones: bool
) -> QuerySet[Challenge]:
    """The phones' list (:func:`_phone_listed`) or every challenge of the scene
    (:func:`_listed`): one prepared read, so an open row's fields are converted one way."""
    return _phone_listed(scene_id, parts, users) if phones else _listed(scene_id)


# Their SQL is built once per process (config.prepared).
_lists = PreparedValues(_either_listed, raw_from=len(LISTED))
_rows = Prepared(_whole, model=Challenge)


def _read(scene_id: int, listed: list[tuple[Any, ...]]) -> list[Challenge]:
    """The rows of the ``listed`` challenges (:func:`_listed`), in order: an open one from its
    listing with all its fields, made once per step while the listing reads the same
    (:data:`finished.open_rows`); a finished
    one's row taken from this process's memo when it holds that step (:data:`finished.rows`:
    a row at a step never changes, and a finished challenge's rows are most of a night's),
    the others read whole in one query (and a finished one kept). Each caller gets rows of
    its own."""
    found: dict[int, Challenge] = {}
    for item in listed:
        pk, step, status, left = item[:4]
        if status in _OPEN:
            # compared as listed (its fields as the database gave them), made only when new
            kept_open = finished.open_rows.find((pk, step))
            if kept_open is None or kept_open[0] != item:  # a write that moved no step
                kept_open = (item, _kept_open(_lists.finish(item)))
                finished.open_rows.keep((pk, step), kept_open)
            found[pk] = copy_row(kept_open[1])
            continue
        kept = finished.rows.find((pk, step))
        if kept is not None:
            found[pk] = _left_now(copy_row(kept), left)
    wanted = [item[0] for item in listed if item[0] not in found]
    for row in _rows.run(scene_id, wanted) if wanted else ():
        if not row.is_open:
            kept = copy_row(row)
            kept.token = step_token(kept)  # type: ignore[attr-defined]
            finished.rows.keep((row.pk, row.step), kept)
        found[row.pk] = row
    return [found[item[0]] for item in listed if item[0] in found]  # none deleted since


def _kept_open(item: tuple[Any, ...]) -> Challenge:
    """An open challenge's row as :data:`finished.open_rows` keeps it at its step: with the
    token its forms post and its engine (:func:`engine_of`), made once for every change
    that shows it at that step (a shared scene's other open challenges stay as they were)."""
    row = _opened(item)
    row.token = step_token(row)  # type: ignore[attr-defined]
    engine_of(row)
    return row


def _opened(item: tuple[Any, ...]) -> Challenge:
    """An open challenge's row from its listing (:func:`_listed`, every column converted:
    ``_lists.finish``), as a whole read makes it."""
    names, whole = _columns()
    values = dict(zip(names, item, strict=True))
    return Challenge.from_db(DEFAULT_DB_ALIAS, whole, [values[name] for name in whole])


@functools.cache
def _columns() -> tuple[tuple[str, ...], list[str]]:
    """The listing's column names, each whole field's under its own name (``whole_`` off),
    and the model's fields in their order (``from_db``'s)."""
    names = tuple(n.removeprefix("whole_") for n in _lists.names(0, phones=False))
    return names, [f.attname for f in Challenge._meta.concrete_fields]


def _left_now(row: Challenge, left: list[int] | None) -> Challenge:
    """``row`` saying who left it as the database says now (``None``: nobody yet)."""
    if left != row.options.get("left"):
        options = {k: v for k, v in row.options.items() if k != "left"}
        row.options = options if left is None else {**options, "left": left}
    return row


def sides_of(scene: Scene, rows: list[Challenge]) -> dict[int, Participant]:
    """The participants on a side of ``rows``, by id: the scene's present ones as a change's
    renderings read them, the others (taken out since) in one query."""
    from combat.selectors import active_participants  # it reads the features' regions

    found = {p.pk: p for p in active_participants(scene)}
    wanted = {pk for row in rows for pk in (row.attacker_id, row.defender_id) if pk is not None}
    missing = wanted - set(found)
    if missing:
        gone = Participant.objects.filter(pk__in=missing)
        found |= {p.pk: p for p in gone.select_related("character", "character__player")}
    return found


def still_open(rows: list[Challenge]) -> list[Challenge]:
    """The open challenges and those waiting on a loser's choice."""
    # W8: a finished challenge still waiting on a loser's choice stays with the open ones
    return [c for c in rows if c.is_open or c.options.get("choose")]


def must_drop(ch: Challenge, engine: Any) -> list[str]:
    """C16: who of the mob cannot match the negatives named and must drop out (before the
    first throw only)."""
    if engine is None or not ch.is_open or engine.throws or engine.phase is not Phase.THROWS:
        return []
    return engine.must_drop_out()
