"""Round posts from the tablet and the phones: parse, authorize, call a service, render.

The tablet's posts get the board back (``#scene-board``), a phone's its private part
(``#scene-private``), each with the refusal in it when the rules or the state refused; the
other screens follow through the scene's pushes. Who may do what is the services' call
(only the storyteller runs the round; a player acts only for their own characters).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from combat import access, fragments, render_cache, replies
from combat import board as scene_board
from combat import selectors as scene_selectors
from combat.models import Participant, Scene
from combat.posts import scene_post
from combat.rounds import (
    answers,
    bns,
    bookkeeping,
    declaring,
    errors,
    fight,
    forms,
    initiative,
    met,
    met_reads,
    pursuit,
    reads,
    resolving,
    starting,
    storyteller,
)
from config.bounds import parse_id

NO_FIGHT = errors.NO_COMBAT


def _reply(
    request: HttpRequest, scene: Scene, tablet: bool, error: str = "", status: int = 200
) -> HttpResponse:
    if request.headers.get("HX-Request") != "true":
        return redirect("scene_tablet" if tablet else "scene_phone", pk=scene.pk)
    scene = render_cache.scene_now(scene)
    # each read once, shared with this seq's pushes when the step made them (render_cache)
    with render_cache.rendering(scene):
        kept = replies.screen(request, scene, tablet) if status == 200 and not error else None
        if kept is not None:  # as this seq's pushes rendered it (combat.replies)
            return kept
        if tablet:
            context = {**scene_board.board_state(scene), "round_error": error, "oob": False}
            return render(request, f"{fragments.TABLET}#board", context, status=status)
        context = {
            **scene_selectors.private_state(scene, request.user),
            "round_error": error,
            "oob": False,
        }
        return render(request, f"{fragments.PHONE}#private", context, status=status)


def round_post(form_class: type | None) -> Callable:
    """A round post (:func:`combat.posts.scene_post`, from the tablet or a phone): the view
    gets the scene's running fight; a post with no fight running (but a start) is refused."""

    def decorate(action: Callable[..., Any]) -> Callable[..., HttpResponse]:
        @wraps(action)
        def step(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict) -> None:
            combat = reads.running_combat(scene, lock=True)  # the step's lock too
            if combat is None and action.__name__ != "round_start":
                raise errors.RoundError(NO_FIGHT)
            action(request, scene=scene, combat=combat, data=data)

        return scene_post(form_class, reply=_reply, phone=True)(step)

    return decorate


def _participant(request: HttpRequest, scene: Scene, pk: int | None) -> Participant | None:
    """The participant a posted id names for this user (a hidden NPC is nobody to a player:
    the same sentence as an id of nobody, :mod:`combat.access`)."""
    return access.participant_named_by(scene, request.user, pk)


@round_post(None)
def round_start(request: HttpRequest, *, scene: Scene, combat, data) -> None:
    chosen = _chosen(request, scene)
    if scene.ruleset == "met_bns":
        bns.bns_start(scene=scene, by=request.user, participants=chosen)
    elif scene.ruleset in met_reads.MET_RULESETS:
        met.met_start(scene=scene, by=request.user, participants=chosen)
    else:
        starting.combat_start(scene=scene, by=request.user, participants=chosen)


def _chosen(request: HttpRequest, scene: Scene) -> list[Participant]:
    ids = [pk for pk in map(parse_id, request.POST.getlist("who")) if pk]
    return list(access.participants_named_by(scene, request.user).filter(pk__in=ids))


@round_post(forms.InitiativeForm)
def round_initiative(request, *, scene, combat, data) -> None:
    initiative.combat_initiative(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        roll=data["roll"],
        key=data["key"] or None,
    )


@round_post(None)
def round_roll_missing(request, *, scene, combat, data) -> None:
    fight.require_storyteller(request.user, scene)
    initiative.combat_roll_missing(combat=combat, by=request.user)


@round_post(forms.TokenForm)
def round_begin(request, *, scene, combat, data) -> None:
    initiative.combat_begin_round(
        combat=combat, by=request.user, at=data["token"] or None, key=data["key"] or None
    )


@round_post(forms.DeclareForm)
def round_declare(request, *, scene, combat, data) -> None:
    declaring.combat_declare(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        action=data["action"],
        target=_participant(request, scene, data["target"]),
        maneuver=data["maneuver"] or "basic",
        weapon=data["weapon"],
        actions=data["actions"] or 1,
        extra=[(action, _participant(request, scene, pk)) for action, pk in data["also"] or []],
        haste=data["haste"],
        at=data["token"] or None,
        key=data["key"] or None,
    )


@round_post(forms._Base)
def round_skip(request, *, scene, combat, data) -> None:
    storyteller.combat_skip(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        at=data["token"] or None,
        key=data["key"] or None,
    )


@round_post(forms.ResolveForm)
def round_resolve(request, *, scene, combat, data) -> None:
    resolving.combat_resolve(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        attack_difficulty=data["attack_difficulty"],
        defense_difficulty=data["defense_difficulty"],
        attack_dice=data["attack_dice"],
        defense_dice=data["defense_dice"],
        damage_dice=data["damage_dice"],
        soak_dice=data["soak_dice"],
        effect=data["effect"],
        forced=data["forced"],
        forced_difficulty=data["forced_difficulty"],
        forced_dice=data["forced_dice"],
        at=data["token"] or None,
    )


@round_post(forms.AbortForm)
def round_abort(request, *, scene, combat, data) -> None:
    reason, _, attacker = data["reason"].partition(":")
    answers.combat_abort(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        reason=reason,
        attacker=_participant(request, scene, parse_id(attacker)),
        dice=data["dice"] or None,
        key=data["key"] or None,
    )


@round_post(forms.CommittedForm)
def round_committed(request, *, scene, combat, data) -> None:
    answers.combat_answer_committed(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        attacker=_participant(request, scene, data["attacker"]) if data["attacker"] else None,
        answer=data["answer"],
        key=data["key"] or None,
    )


@round_post(forms.OutForm)
def round_out(request, *, scene, combat, data) -> None:
    storyteller.combat_set_out(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        out=data["out"],
        key=data["key"] or None,
    )


@round_post(forms.PursueForm)
def round_pursue(request, *, scene, combat, data) -> None:
    """K4: the storyteller taps the attacker's choice after a surviving escape."""
    pursuit.combat_pursue(
        combat=combat,
        by=request.user,
        predator=_participant(request, scene, data["participant"]),
        pursue=data["pursue"],
        at=data["token"] or None,
        key=data["key"] or None,
    )


@round_post(forms.RemindForm)
def round_remind(request, *, scene, combat, data) -> None:
    bookkeeping.combat_remind(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        text=data["text"],
        key=data["key"] or None,
    )


@round_post(forms.EffectForm)
def round_effect(request, *, scene, combat, data) -> None:
    storyteller.combat_add_effect(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        name=data["name"],
        rounds=data["rounds"],
        key=data["key"] or None,
    )


@round_post(forms.PauseForm)
def round_pause(request, *, scene, combat, data) -> None:
    storyteller.combat_pause(
        combat=combat, by=request.user, paused=data["paused"], key=data["key"] or None
    )


@round_post(forms.TokenForm)
def round_book_keeping(request, *, scene, combat, data) -> None:
    bookkeeping.combat_book_keeping(
        combat=combat, by=request.user, at=data["token"] or None, key=data["key"] or None
    )


@round_post(forms.TokenForm)
def round_next(request, *, scene, combat, data) -> None:
    bookkeeping.combat_next_round(
        combat=combat, by=request.user, at=data["token"] or None, key=data["key"] or None
    )


@round_post(forms.KeyForm)
def round_end(request, *, scene, combat, data) -> None:
    storyteller.combat_end(combat=combat, by=request.user, key=data["key"] or None)


# met_bns (B4-B11) ------------------------------------------------------------------------


@round_post(forms.MediateForm)
def round_bns_mediate(request, *, scene, combat, data) -> None:
    bns.bns_mediate(combat=combat, by=request.user, agreed=data["agreed"], key=data["key"] or None)


@round_post(forms.AssessForm)
def round_bns_assess(request, *, scene, combat, data) -> None:
    bns.bns_assess(
        combat=combat,
        by=request.user,
        participants=_chosen(request, scene),
        started_by=_participant(request, scene, data["started_by"]),
        key=data["key"] or None,
    )


@round_post(forms.BnsActForm)
def round_bns_act(request, *, scene, combat, data) -> None:
    bns.bns_act(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        standard=data["standard"] or None,
        simple=data["simple"] or None,
        target=_participant(request, scene, data["target"]),
        against_physical=data["against_physical"],
        ranged_far=data["ranged_far"],
        pool={k: data[k] or None for k in ("attribute", "skill", "weapon")},
        at=data["token"] or None,
        key=data["key"] or None,
    )


@round_post(forms._Base)
def round_bns_finish(request, *, scene, combat, data) -> None:
    bns.bns_finish(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        key=data["key"] or None,
    )


@round_post(forms._Base)
def round_bns_delay(request, *, scene, combat, data) -> None:
    bns.bns_delay(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        key=data["key"] or None,
    )


@round_post(forms._Base)
def round_bns_resume(request, *, scene, combat, data) -> None:
    bns.bns_resume(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        key=data["key"] or None,
    )


@round_post(forms._Base)
def round_bns_escape(request, *, scene, combat, data) -> None:
    bns.bns_escape_announce(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        key=data["key"] or None,
    )


@round_post(forms._Base)
def round_bns_intent(request, *, scene, combat, data) -> None:
    bns.bns_escape_intent(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        key=data["key"] or None,
    )


@round_post(forms.SettleForm)
def round_bns_escape_settle(request, *, scene, combat, data) -> None:
    bns.bns_escape_settle(
        combat=combat,
        by=request.user,
        can_be_attacked=not data["cannot_be_attacked"],
        key=data["key"] or None,
    )


@round_post(forms.CelerityForm)
def round_bns_celerity(request, *, scene, combat, data) -> None:
    bns.bns_celerity(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        rounds=data["rounds"],
        key=data["key"] or None,
    )


@round_post(forms.TokenForm)
def round_bns_end_round(request, *, scene, combat, data) -> None:
    bns.bns_end_round(
        combat=combat, by=request.user, at=data["token"] or None, key=data["key"] or None
    )


# met_classic and met_werewolf (C15, C16) --------------------------------------------------


@round_post(forms.MetCelerityForm)
def round_met_celerity(request, *, scene, combat, data) -> None:
    met.met_celerity_announce(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        level=data["level"],
        follow_ups=data["follow_ups"],
        key=data["key"] or None,
    )


@round_post(forms.MetTakeForm)
def round_met_take(request, *, scene, combat, data) -> None:
    met.met_celerity_take(
        combat=combat,
        by=request.user,
        participant=_participant(request, scene, data["participant"]),
        action=data["action"],
        key=data["key"] or None,
    )


@round_post(forms.MediateForm)
def round_met_mob(request, *, scene, combat, data) -> None:
    targets = {}
    for key, value in request.POST.items():
        attacker, target = parse_id(key.removeprefix("target_")), parse_id(value)
        if key.startswith("target_") and attacker and target:
            targets[_participant(request, scene, attacker)] = _participant(request, scene, target)
    met.met_mob(
        combat=combat,
        by=request.user,
        targets=targets,
        agreed=data["agreed"],
        key=data["key"] or None,
    )


@round_post(forms.KeyForm)
def round_met_next(request, *, scene, combat, data) -> None:
    met.met_next_round(combat=combat, by=request.user, key=data["key"] or None)
