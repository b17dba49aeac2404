"""Reads of chases: the chase of a scene, the sides' pools from their sheets (K2), and what
the tablet, every phone and one player's prompts show.

Each state costs a fixed number of queries whatever the number of participants. A hidden NPC
is never named to the players: the public views call it an unseen pursuer and show only its
successes (its dice would tell its pool).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
)

from chases import rules
from chases.models import Chase, ChaseRoll, ChaseStep, Phase, Role, Side
from chases.pools import runner, sheet_values
from chases.tokens import token_of
from combat.models import Challenge, Combat, Participant, Scene
from combat.regions import says_none
from combat.render_cache import cached

#: What the players see for a hidden NPC, by its role in the chase.
UNSEEN = "An unseen pursuer"
UNSEEN_PREY = "An unseen quarry"
STEPS_SHOWN = 12
TRACK_LENGTH = rules.ESCAPE_LEAD

#: K7, K8: what each maneuver does, as the phones say it.
PREY_EFFECTS = {
    rules.PreyManeuver.BAIT: "the Predator's margin is halved next round",
    rules.PreyManeuver.GUN_IT: "your difficulty −1 next round",
    rules.PreyManeuver.QUICK_REVERSE: "the Predator faces an obstacle",
    rules.PreyManeuver.NEVER_TELL_ME_THE_ODDS: "you both face an obstacle",
    rules.PreyManeuver.IN_THERE: "a new course: you pick one part of the chase pool",
    rules.PreyManeuver.NOPE: "pass the obstacle without a roll",
}
PREDATOR_EFFECTS = {
    rules.PredatorManeuver.TAIL: "the Prey's margin is halved next round",
    rules.PredatorManeuver.GUN_IT: "your difficulty −1 next round",
    rules.PredatorManeuver.HERD: "a new course: you pick one part of the chase pool",
    rules.PredatorManeuver.ATTACK_RUN: "the Lead counts 4 lower for your attacks",
    rules.PredatorManeuver.HEAD_OFF: "your margin is doubled next round",
    rules.PredatorManeuver.DAMNIT: "pass the obstacle without a roll",
}
MANEUVER_LABELS = {
    rules.PreyManeuver.BAIT: "Bait",
    rules.PreyManeuver.GUN_IT: "Gun it!",
    rules.PreyManeuver.QUICK_REVERSE: "Quick Reverse",
    rules.PreyManeuver.NEVER_TELL_ME_THE_ODDS: "Never Tell Me The Odds",
    rules.PreyManeuver.IN_THERE: "In there!",
    rules.PreyManeuver.NOPE: "Nope!",
    rules.PredatorManeuver.TAIL: "Tail",
    rules.PredatorManeuver.GUN_IT: "Gun It!",
    rules.PredatorManeuver.HERD: "Herd",
    rules.PredatorManeuver.ATTACK_RUN: "Attack Run",
    rules.PredatorManeuver.HEAD_OFF: "Head-Off",
    rules.PredatorManeuver.DAMNIT: "Damnit!",
}
#: K7 In there!, K8 Herd: the parts of a chase pool a new course may use.
COURSE_PARTS = [
    "wits",
    "strength",
    "stamina",
    "perception",
    "dexterity",
    "athletics",
    "drive",
    "alertness",
    "stealth",
    "streetwise",
    "survival",
]
#: K9: the pools the storyteller picks an obstacle's roll from.
OBSTACLE_POOLS = [
    ("dexterity", "athletics"),
    ("stamina", "athletics"),
    ("wits", "athletics"),
    ("dexterity", "drive"),
    ("wits", "drive"),
    ("strength", "athletics"),
    ("perception", "alertness"),
    ("wits", "streetwise"),
]
TERRAINS = [
    (rules.Terrain.FOOT.value, "On foot (Dexterity + Athletics)"),
    (rules.Terrain.CAR.value, "By car (Dexterity + Drive)"),
    (rules.Terrain.HEAVY_TRAFFIC.value, "Heavy traffic or a maze (Wits + Drive)"),
    (rules.Terrain.WATER.value, "In water (Strength + Athletics)"),
]
OUTCOME_TEXT = {
    rules.Outcome.ESCAPED.value: "{prey} escaped",
    rules.Outcome.CAUGHT.value: "{prey} was caught",
    rules.Outcome.PREY_OUT.value: "{prey} crashed out",
    rules.Outcome.PREDATOR_OUT.value: "Every pursuer crashed out: {prey} got away",
    rules.Outcome.BOTH_OUT.value: "Everyone crashed out: the chase is over",
    "called_off": "The storyteller called the chase off",
}


#: K11: the rolls of an attack during the chase, named on every phone.
ROLL_LABELS = {"attack": "attacks", "dodge": "dodges", "damage": "damage", "soak": "soaks"}


# The chase of a scene ----------------------------------------------------------------------


# The scene's row, as a change's renderings read it, says whether it has had a chase
# (combat.regions.flag): a scene that never had one reads none.
CHASE_FLAG = "chase_had"


def any_chase() -> QuerySet[Chase]:
    """The chases of the scene ``OuterRef("pk")`` (its flag's rows)."""
    return Chase.objects.filter(scene=OuterRef("pk"))


def current_chase(scene: Scene) -> Chase | None:
    """The scene's running chase, else the last one (its ending stays on every phone), in
    one query; read once for all the renderings of a change (the board, the public part,
    each player's prompts); none when the scene's row says it never had one."""

    def read() -> Chase | None:
        if says_none(scene, CHASE_FLAG):
            return None
        running = ExpressionWrapper(Q(ended_at__isnull=True), output_field=BooleanField())
        # how many chases the scene has had (chases_started), in the same query
        count = Chase.objects.filter(scene=OuterRef("scene")).order_by().values("scene")
        count = count.annotate(n=Count("pk")).values("n")
        chases = Chase.objects.filter(scene=scene).prefetch_related(
            Prefetch(
                "sides",
                queryset=Side.objects.select_related(
                    "participant", "participant__character"
                ).order_by("-role", "pk"),
            )
        )
        chases = chases.annotate(chases_in_scene=Subquery(count))
        return chases.order_by(running.desc(), *Chase._meta.ordering).first()

    return cached(("current_chase", scene.pk), read)


def running_chase(scene: Scene) -> Chase | None:
    """The scene's running chase (:func:`current_chase`'s, when it runs)."""
    chase = current_chase(scene)
    return chase if chase is not None and chase.ended_at is None else None


def chases_started(scene: Scene) -> int:
    """How many chases the scene has had (the board's start form is kept by it): read with
    :func:`current_chase` (none: none yet)."""
    chase = current_chase(scene)
    return chase.chases_in_scene if chase is not None else 0


def _within(name: str) -> str:
    """A name inside a sentence: "caught by an unseen pursuer", never "by An unseen …"."""
    return name[0].lower() + name[1:] if name in (UNSEEN, UNSEEN_PREY) else name


def _moved_on(scene: Scene, chase: Chase) -> bool:
    """A finished chase leaves the phones once the scene moves on to a fight or a challenge
    (the tablet keeps it)."""
    if chase.ended_at is None:
        return False
    after = chase.ended_at
    return (
        Combat.objects.filter(scene=scene, started_at__gt=after).exists()
        or Challenge.objects.filter(scene=scene, created_at__gt=after).exists()
    )


def engine(chase: Chase) -> rules.Chase:
    return rules.Chase.from_dict(chase.state)


def side_name(side: Side, *, public: bool) -> str:
    """The side's name; to the players (``public``) a hidden NPC is only an unseen pursuer
    or an unseen quarry, by its role."""
    if public and side.participant.hidden:
        return UNSEEN_PREY if side.role == Role.PREY else UNSEEN
    return side.participant.name


def joined(names: list[str]) -> str:
    """``["Jane", "Bob", "Ann"]`` → ``"Jane, Bob and Ann"``. Several unseen members of one
    group are counted, not repeated: ``"Jane and 2 unseen quarries"``."""
    unseen = names.count(UNSEEN_PREY)
    if unseen > 1:
        names = [n for n in names if n != UNSEEN_PREY] + [f"{unseen} unseen quarries"]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def names(chase: Chase, *, public: bool) -> dict[str, str]:
    """Engine key (``prey`` or a Predator's key) → the name shown (a group fleeing together
    is one Prey, K1: its members' names joined). A group member's own key names it too."""
    out: dict[str, str] = {}
    group: list[str] = []
    for side in chase.sides.all():
        name = side_name(side, public=public)
        out[side.key] = name
        if side.role == Role.PREY:
            group.append(name)
    out[rules.PREY] = joined(group)
    return out


def _dice(roll: ChaseRoll) -> list[dict[str, Any]]:
    return [{"face": d, "hit": d >= roll.difficulty, "one": d == 1} for d in roll.dice]


def _rolls(step: ChaseStep | None, sides: dict[int, Side], *, public: bool) -> list[dict]:
    if step is None:
        return []
    out = []
    for roll in step.rolls.all():
        side = sides[roll.side_id]
        hidden = public and side.participant.hidden
        out.append(
            {
                "name": side_name(side, public=public),
                "role": side.role,
                "pool": None if hidden else roll.pool,
                "difficulty": roll.difficulty,
                "dice": [] if hidden else _dice(roll),
                "successes": roll.successes,
                "botch": roll.botch,
                "typed": roll.typed,
                "purpose": roll.purpose,
                "purpose_label": ROLL_LABELS.get(roll.purpose, ""),
            }
        )
    return out


def chase_state(scene: Scene, *, public: bool) -> dict[str, Any] | None:
    """What the tablet (``public=False``) or every phone (``public=True``) shows."""
    chase = current_chase(scene)
    if chase is None or (public and _moved_on(scene, chase)):
        return None
    state = engine(chase)
    sides = list(chase.sides.all())
    by_id = {s.pk: s for s in sides}
    group = [s for s in sides if s.role == Role.PREY]
    prey = group[0]
    predators = {s.key: s for s in sides if s.role == Role.PREDATOR}
    shown = names(chase, public=public)
    steps = list(
        ChaseStep.objects.filter(chase=chase)
        .order_by("-number")
        .prefetch_related(Prefetch("rolls", queryset=ChaseRoll.objects.order_by("pk")))[
            :STEPS_SHOWN
        ]
    )
    last_rolled = next((s for s in steps if s.rolls.all()), None)
    difficulty = state.difficulty()
    tracks = []
    for p in state.pursuits:
        lead = p.lead
        cells = max(TRACK_LENGTH, lead) + 1
        tracks.append(
            {
                "key": p.predator,
                "name": shown[p.predator],
                "side": predators[p.predator],
                "lead": lead,
                "status": p.status.value,
                "running": p.running,
                "cells": [
                    {"n": n, "on": n == max(lead, 0), "escape": n >= rules.ESCAPE_LEAD}
                    for n in range(0, cells)
                ],
                "winner": None if p.winner is None else p.winner.value,
                "effects": sorted(e.value.replace("_", " ") for e in p.effects),
                "weapons": state.can_attack(p.predator, rules.AttackMeans.WEAPON),
                "powers": state.can_attack(p.predator, rules.AttackMeans.POWER),
                "prey_weapons": state.can_attack(
                    rules.PREY, rules.AttackMeans.WEAPON, against=p.predator
                ),
                "attack_run": state.attack_run_active(p.predator) if p.running else False,
                "run": p.run,
                "run_left": None if p.run is None else max(p.run - state.rounds, 0),
                "difficulty": difficulty.get(p.predator),
            }
        )
    pending = chase.pending or {}
    maneuvers = [
        {
            **m,
            "name": shown[rules.PREY] if m["role"] == Role.PREY else shown[m["pursuit"]],
            "against": shown[m["pursuit"]],
        }
        for m in pending.get("maneuvers", [])
    ]
    obstacle = pending.get("obstacle")
    if obstacle:
        obstacle = {
            **obstacle,
            "facing_names": [shown[k] for k in obstacle["facing"]],
            "choices_named": {shown[k]: v for k, v in obstacle.get("choices", {}).items()},
        }
    ending = ""
    if chase.outcome:
        ending = OUTCOME_TEXT[chase.outcome].format(prey=shown[rules.PREY])
        caught_by = [_within(t["name"]) for t in tracks if t["status"] == rules.Status.CAUGHT.value]
        if chase.outcome == rules.Outcome.CAUGHT.value and caught_by:
            ending += " by " + ", ".join(caught_by)
    return {
        "chase": chase,
        "token": token_of(chase),
        "state": state,
        "public": public,
        "turn": _turn(chase, state, shown, maneuvers, obstacle, ending),
        "prey": prey,
        "prey_group": group,
        "prey_name": shown[rules.PREY],
        "parties": [{"key": rules.PREY, "name": shown[rules.PREY]}]
        + [{"key": t["key"], "name": t["name"]} for t in tracks if t["running"]],
        "tracks": tracks,
        "several": len(tracks) > 1,
        "round": state.rounds,
        # K10: the Prey's Run, and the rounds it has left (penned in once it runs out).
        "prey_run": state.prey_run,
        "prey_run_left": None if state.prey_run is None else max(state.prey_run - state.rounds, 0),
        "phase": chase.phase,
        "phase_label": Phase(chase.phase).label,
        "course": state.course,
        "prey_difficulty": difficulty[rules.PREY],
        "pool_parts": state.pool,
        "maneuvers": maneuvers,
        "obstacle": obstacle,
        "last_rolls": _rolls(last_rolled, by_id, public=public),
        "last_rolled_text": last_rolled.text if last_rolled else "",
        "steps": steps,
        "ending": ending,
        "sides": sides,
        "predators": predators,
    }


def _turn(
    chase: Chase,
    state: rules.Chase,
    shown: dict[str, str],
    maneuvers: list[dict[str, Any]],
    obstacle: dict[str, Any] | None,
    ending: str,
) -> str:
    """Whose turn it is, as every phone says it."""
    if ending:
        return f"Chase over: {ending}."
    if chase.phase == Phase.MANEUVER:
        who = sorted({m["name"] for m in maneuvers})
        verb = "chooses" if len(who) == 1 else "choose"
        return f"{' and '.join(who)} {verb} a maneuver."
    if chase.phase == Phase.OBSTACLE and obstacle:
        facing = " and ".join(obstacle["facing_names"])
        if not obstacle.get("set"):
            return f"The storyteller sets the obstacle {facing} must face."
        return f"{facing} must face {obstacle.get('label') or 'an obstacle'}."
    return f"The storyteller rolls round {state.rounds + 1}."


def board_state(scene: Scene, participants: Iterable[Participant]) -> dict[str, Any]:
    """The storyteller's chase region: the chase (with each side's next pool) or the start
    form, whose stable id changes only with who is in the scene and how many chases ran."""
    participants = list(participants)
    view = chase_state(scene, public=False)
    chase = view["chase"] if view else None
    digest = hashlib.sha256(
        ",".join(f"{p.pk}:{p.name}" for p in participants).encode()
    ).hexdigest()[:10]
    started = chases_started(scene)
    out: dict[str, Any] = {
        "view": view,
        "start_form_id": f"chase-start-{scene.pk}-{started}-{digest}",
        "start_key": f"chase-start-{scene.pk}-{started}",
        "participants": participants,
        "terrains": TERRAINS,
        "obstacle_pools": [(f"{a}+{b}", f"{a.title()} + {b.title()}") for a, b in OBSTACLE_POOLS],
        "course_parts": COURSE_PARTS,
    }
    if chase is not None and chase.running:
        state = view["state"]
        values = sheet_values(s.participant for s in view["sides"])
        parts = state.pool
        difficulty = state.difficulty()
        rolling = []
        private = names(chase, public=False)
        for key in [rules.PREY, *(p.predator for p in state.pursuits if p.running)]:
            side, pool = runner(
                _members(view, key),
                values,
                parts.attribute,
                parts.ability,
                split=state.split(key),
            )
            rolling.append(
                {
                    "key": key,
                    "name": private[key],
                    "runner": side.participant.name if len(_members(view, key)) > 1 else "",
                    "npc": side.participant.npc,
                    "pool": pool,
                    "difficulty": difficulty[key],
                }
            )
        out["rolling"] = rolling
        obstacle = view["obstacle"]
        if obstacle and obstacle.get("set"):
            out["obstacle_rolling"] = [
                {
                    "key": key,
                    "name": private[key],
                    "pool": runner(
                        _members(view, key),
                        values,
                        obstacle["pool"]["attribute"],
                        obstacle["pool"]["ability"],
                    )[1],
                    "choice": obstacle.get("choices", {}).get(key),
                    "npc": any(s.participant.npc for s in _members(view, key)),
                    "offer": offer_on_obstacle(chase, state, key),
                }
                for key in obstacle["facing"]
            ]
        out["npc_maneuvers"] = [
            {**m, "offers": maneuver_offers(state, m)}
            for m in view["maneuvers"]
            if any(s.participant.npc for s in _members(view, _pending_key(m)))
        ]
        out["attack_sides"] = [
            {"key": s.key, "name": s.participant.name, "role": s.role} for s in view["sides"]
        ]
        out["npc_damage"] = [
            (s.participant.name, chase.npc_damage[str(s.participant_id)])
            for s in view["sides"]
            if chase.npc_damage.get(str(s.participant_id))
        ]
        out["form_id"] = f"chase-{chase.pk}-s{chase.step}"
    return out


def _members(view: dict[str, Any], key: str) -> list[Side]:
    """The sides behind an engine key: every member of the Prey (K1), or one Predator."""
    return view["prey_group"] if key == rules.PREY else [view["predators"][key]]


def _pending_key(pending: dict[str, Any]) -> str:
    return rules.PREY if pending["role"] == Role.PREY else pending["pursuit"]


def maneuver_offers(state: rules.Chase, pending: dict[str, Any]) -> list[dict[str, Any]]:
    """K7, K8: the maneuvers the winner of this pursuit may take now, with cost and effect.

    Nope! and Damnit! are left out (only when an obstacle is confronted); a Prey maneuver
    that would bring the Lead to 0 or below is not offered.
    """
    lead = state.pursuit(pending["pursuit"]).lead
    offers = []
    if pending["role"] == Role.PREY:
        for move in rules.PreyManeuver:
            if move.on_obstacle or lead + move.lead <= 0:
                continue
            offers.append(_offer(move, PREY_EFFECTS[move], f"−{-move.lead} Lead"))
    else:
        for move in rules.PredatorManeuver:
            if move.on_obstacle:
                continue
            offers.append(_offer(move, PREDATOR_EFFECTS[move], f"+{move.lead} Lead to the Prey"))
    return offers


def _offer(move: Any, effect: str, cost: str) -> dict[str, Any]:
    return {
        "value": move.value,
        "label": MANEUVER_LABELS[move],
        "cost": cost,
        "effect": effect,
        "pick": move in (rules.PreyManeuver.IN_THERE, rules.PredatorManeuver.HERD),
    }


def offer_on_obstacle(chase: Chase, state: rules.Chase, key: str) -> dict[str, Any] | None:
    """K7 Nope! (the Prey, −3 on every Lead, only when no Lead would drop to 0 or below) or
    K8 Damnit! (a Predator, +3 to its Lead), while the obstacle waits for its rolls."""
    if key == rules.PREY:
        cost = rules.PreyManeuver.NOPE.lead
        if any(p.lead + cost <= 0 for p in state.pursuits if p.running):
            return None
        return _offer(rules.PreyManeuver.NOPE, PREY_EFFECTS[rules.PreyManeuver.NOPE], "−3 Lead")
    move = rules.PredatorManeuver.DAMNIT
    return _offer(move, PREDATOR_EFFECTS[move], "+3 Lead to the Prey")


def prompts_state(scene: Scene, player: AbstractBaseUser) -> dict[str, Any]:
    """One player's prompts: the maneuvers their character may take now (K7, K8), and Nope!
    or Damnit! when their character faces a set obstacle (K9)."""
    chase = running_chase(scene)
    if chase is None or not getattr(player, "is_authenticated", False):
        return {"chase": None}
    sides = [
        s
        for s in chase.sides.all()
        if s.participant.character_id and s.participant.character.player_id == player.pk
    ]
    if not sides:
        return {"chase": None}
    state = engine(chase)
    all_names = names(chase, public=True)
    mine = {rules.PREY if s.role == Role.PREY else s.key: s for s in sides}
    everyone = list(chase.sides.all())
    roles = []
    for s in sides:
        if s.role == Role.PREY:
            group = [
                side_name(o, public=True) for o in everyone if o.role == Role.PREY and o.pk != s.pk
            ]
            text = "you flee as the Prey" + (f", with {joined(group)} (K1)" if group else "")
        else:
            text = f"you chase {all_names[rules.PREY]} as a Predator"
        roles.append({"character": s.participant.name, "text": text})
    maneuvers = []
    if chase.phase == Phase.MANEUVER:
        for m in chase.pending.get("maneuvers", []):
            key = rules.PREY if m["role"] == Role.PREY else m["pursuit"]
            if key in mine:
                maneuvers.append(
                    {
                        **m,
                        "against": all_names[m["pursuit"]],
                        "offers": maneuver_offers(state, m),
                        "character": all_names[key],
                    }
                )
    obstacle = []
    pending = chase.pending.get("obstacle")
    if chase.phase == Phase.OBSTACLE and pending and pending.get("set"):
        for key in pending["facing"]:
            if key in mine and key not in pending.get("choices", {}):
                offer = offer_on_obstacle(chase, state, key)
                if offer:
                    obstacle.append({"key": key, "offer": offer, "label": pending.get("label", "")})
    return {
        "chase": chase,
        "maneuvers": maneuvers,
        "roles": roles,
        "obstacle_offers": obstacle,
        "course_parts": COURSE_PARTS,
        "prompt_id": f"chase-{chase.pk}-s{chase.step}",
        "token": token_of(chase),
    }
