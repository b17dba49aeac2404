"""Challenge posts: thin views that read a form, find the scene through the access helpers,
call a service and answer with the actor's region (the phone's prompts, or the tablet's
challenge board). A refused step answers 409 with the sentence (and the rule ID) inside the
region; a form it could not read answers 400; nothing changes in either case."""

from __future__ import annotations

from functools import lru_cache

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import escape
from django.views.decorators.http import require_GET, require_POST

from combat import forms as scene_forms
from combat import render_cache
from combat import selectors as scene_selectors
from combat.challenges import (
    answering,
    forms,
    leaving,
    mob,
    negatives,
    reads,
    retests,
    spending,
    starting,
    storyteller,
    throwing,
)
from combat.challenges.refusals import ChallengeError
from combat.models import Challenge, Scene
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.rules.errors import RuleError
from combat.rules.odds import SPREAD, blind_odds, blind_retests
from combat.rules.terms import Side

PROMPTS = "combat/challenges/prompts.html"
BOARD = "combat/challenges/board.html"


def _scene(request: HttpRequest, pk: int) -> tuple[Scene, bool]:
    """The scene and whether the user storytells it; else 404 (no scene of theirs)."""
    scene = scene_selectors.scenes_run_by(request.user).filter(pk=pk).first()
    if scene is not None:
        return scene, True
    scene = (
        scene_selectors.scenes_played_by(request.user)
        .filter(
            pk=pk,
            participants__character__player=request.user,
            participants__removed_at__isnull=True,
        )
        .first()
    )
    if scene is None:
        raise Http404("You have no character in this scene.")
    return scene, False


def _challenge(request: HttpRequest, scene: Scene, cid: int, is_st: bool) -> Challenge:
    """A challenge of the scene; to a player, one with a hidden NPC on a side is nobody's
    business unless the player's own character is in it (the same 404 as no challenge)."""
    found = Challenge.objects.select_related(
        "attacker__character", "defender__character", "scene"
    ).filter(scene=scene, pk=cid)
    if not is_st:
        mine = Q(attacker__character__player=request.user) | Q(
            defender__character__player=request.user
        )
        seen = (Q(attacker__isnull=True) | Q(attacker__hidden=False)) & (
            Q(defender__isnull=True) | Q(defender__hidden=False)
        )
        found = found.filter(seen | mine).distinct()
    ch = found.first()
    if ch is None:
        raise Http404("No such challenge in this scene.")
    return ch


def _region(
    request: HttpRequest, scene: Scene, as_st: bool, *, error: str = "", status: int = 200
) -> HttpResponse:
    scene.refresh_from_db()
    context = {"scene": scene, "player": request.user, "challenge_error": error}
    # the reads of this seq's pushes (when the step made them and the scene stayed there)
    with render_cache.rendering(scene):
        return render(request, BOARD if as_st else PROMPTS, context, status=status)


def _unreadable(
    request: HttpRequest, scene: Scene, as_st: bool, form, nothing: str = "Nothing changed."
) -> HttpResponse:
    """A form it could not read answers 400, saying what is wrong; nothing changes."""
    problems = scene_forms.problems(form)
    return _region(request, scene, as_st, error=f"{nothing} {problems}", status=400)


def _refused(
    request: HttpRequest, scene: Scene, as_st: bool, error: ChallengeError
) -> HttpResponse:
    """A refused step answers 409 with the sentence (and the rule ID); nothing changes."""
    return _region(request, scene, as_st, error=str(error), status=409)


@login_required
@require_GET
def challenge_region(request: HttpRequest, pk: int) -> HttpResponse:
    """The actor's challenge region as it is now (a phone that missed a push)."""
    scene, as_st = _scene(request, pk)
    return _region(request, scene, as_st)


@login_required
@require_POST
@render_cache.one_request
def challenge_start(request: HttpRequest, pk: int) -> HttpResponse:
    scene, as_st = _scene(request, pk)
    form = forms.StartForm(request.POST, scene=scene, user=request.user)
    if not form.is_valid():
        return _unreadable(request, scene, as_st, form, "Nothing started.")
    try:
        starting.challenge_start(scene=scene, by=request.user, **form.service_kwargs())
    except ChallengeError as error:
        return _refused(request, scene, as_st, error)
    return _region(request, scene, as_st)


@login_required
@require_POST
@render_cache.one_request
def challenge_act(request: HttpRequest, pk: int, cid: int) -> HttpResponse:
    """A side's step: from the player's phone, or from the tablet for an NPC or static side."""
    scene, is_st = _scene(request, pk)
    ch = _challenge(request, scene, cid, is_st)
    form = forms.ActForm(request.POST)
    if not form.is_valid():
        return _unreadable(request, scene, is_st, form)
    d = form.cleaned_data
    side = d["side"]
    as_st = is_st and side in reads.sides_for_st(ch)
    common = {
        "scene": scene,
        "challenge": ch,
        "by": request.user,
        "side": side,
        "key": d.get("key") or None,
        "token": d.get("token") or None,
        "as_st": as_st,
    }
    action = d["action"]
    try:
        if action == "answer":
            answering.challenge_answer(
                **common,
                answer=d["answer"],
                bid=d.get("bid") or "",
                ability=d.get("ability") or "",
                effect=d.get("effect") or "",
                weapon=d.get("weapon"),
                attribute=d.get("attribute") or "",
                skill=d.get("skill") or "",
                bonus=d.get("bonus") or 0,
                prone=d.get("prone", False),
                counterattack=d.get("counterattack", False),
            )
        elif action == "throw":
            throwing.challenge_throw(**common, throw=d["throw"])
        elif action == "by_hand":
            throwing.challenge_by_hand(**common, result=d["result"])
        elif action == "declare":
            throwing.challenge_declare(**common, total=d["total"])
        elif action == "retest":
            retests.challenge_retest(
                **common,
                kind=d["kind"],
                ability=d.get("ability") or "",
                power=d.get("power") or "",
                declared=d.get("declared"),
                trait=d.get("trait") or "",
            )
        elif action == "cancel":
            retests.challenge_cancel(
                **common,
                ability=d.get("ability") or "",
                power=d.get("power") or "",
            )
        elif action == "accept":
            retests.challenge_accept(**common)
        elif action == "relent":
            answering.challenge_relent(**common)
        elif action == "negative":
            negatives.challenge_name_negative(**common, trait=d.get("trait") or "")
        elif action == "blood":
            spending.challenge_blood(**common, amount=d["amount"])
        elif action == "choose":
            # W8: the service itself tells the storyteller (who picks for an absent player)
            mine = {k: v for k, v in common.items() if k != "as_st"}
            negatives.challenge_choose_trait(**mine, trait=d.get("trait") or "")
        elif action == "dispute":
            storyteller.challenge_dispute(**common, text=d.get("text") or "")
    except ChallengeError as error:
        return _refused(request, scene, is_st, error)
    return _region(request, scene, is_st)


@login_required
@require_POST
def challenge_leave(request: HttpRequest, pk: int, cid: int) -> HttpResponse:
    """A player puts away the card of a finished challenge (from that player's phones)."""
    scene, is_st = _scene(request, pk)
    if is_st:
        raise Http404("A storyteller's board keeps the last few finished challenges itself.")
    ch = _challenge(request, scene, cid, False)
    try:
        leaving.challenge_leave(scene=scene, challenge=ch, by=request.user)
    except ChallengeError as error:
        return _refused(request, scene, False, error)
    return _region(request, scene, False)


@login_required
@require_POST
@render_cache.one_request
def challenge_st(request: HttpRequest, pk: int, cid: int) -> HttpResponse:
    """The storyteller's calls on a challenge (from the tablet)."""
    scene, is_st = _scene(request, pk)
    if not is_st:
        raise Http404("Only the scene's storytellers make these calls.")
    ch = _challenge(request, scene, cid, is_st)
    form = forms.StForm(request.POST)
    if not form.is_valid():
        return _unreadable(request, scene, True, form)
    d = form.cleaned_data
    try:
        storyteller.challenge_st(
            scene=scene,
            challenge=ch,
            by=request.user,
            action=d["action"],
            seconds=d.get("seconds") or 0,
            side=d.get("side") or "",
            text=d.get("text") or "",
            token=d.get("token") or None,
            key=d.get("key") or None,
        )
    except ChallengeError as error:
        return _refused(request, scene, True, error)
    return _region(request, scene, True)


@lru_cache(maxsize=256)
def odds_lines(engine: Engine, side: str, hidden: bool) -> tuple[str, ...]:
    """What one side is told of its chances (cached by the engine's state: a state gives
    the same answer every time). ``hidden``: the opponent is a character whose totals and
    ratings that side may not know, so they are averaged over (combat.rules.odds)."""
    mine = Side(side)
    kinds: list = []
    if engine.phase is Phase.RETESTS and engine.leader is not mine:
        kinds = blind_retests(engine, mine, hidden=hidden)
    found = blind_odds(engine, mine, first=tuple(kinds), hidden=hidden)
    lines = [f"{float(found[None]):.0%} to win from here"]
    for kind in kinds:
        rule = engine._rule(kind)
        lines.append(f"{float(found[kind]):.0%} with a {kind.value} retest ({rule})")
    if hidden:
        lines.append(
            f"their traits and ratings are not known to you: taken as within {SPREAD} of yours"
        )
    return tuple(lines)


@login_required
@require_GET
def challenge_odds(request: HttpRequest, pk: int, cid: int) -> HttpResponse:
    """The engine's odds for one side, now and after each retest it may take, from what that
    side may know: the other side's hidden totals and ratings never move them."""
    scene, is_st = _scene(request, pk)
    ch = _challenge(request, scene, cid, is_st)
    side = request.GET.get("side", "")
    allowed = reads.sides_for_st(ch) if is_st else reads.sides_for(ch, request.user)
    if side not in allowed:
        raise Http404("Not your side.")
    engine = reads.engine_of(ch)
    if engine is None or engine.phase is Phase.OVER or not ch.is_open:
        return HttpResponse("No odds: nothing to throw.")
    try:
        lines = odds_lines(engine, side, ch.defender is not None)
    except (RuleError, ValueError, RecursionError):
        return HttpResponse("No odds for this state.")
    return HttpResponse(escape(" · ".join(lines)))


@login_required
@require_POST
@render_cache.one_request
def challenge_regain(request: HttpRequest, pk: int) -> HttpResponse:
    """W7 from the phone: one willpower buys back a category's traits lost tonight."""
    scene, is_st = _scene(request, pk)
    form = forms.RegainForm(request.POST, scene=scene, user=request.user)
    if not form.is_valid():
        return _unreadable(request, scene, is_st, form)
    d = form.cleaned_data
    try:
        spending.challenge_regain(
            scene=scene,
            by=request.user,
            participant=d["participant"],
            category=d["category"],
            key=d.get("key") or None,
        )
    except ChallengeError as error:
        return _refused(request, scene, is_st, error)
    return _region(request, scene, is_st)


@login_required
@require_POST
@render_cache.one_request
def challenge_mob(request: HttpRequest, pk: int, cid: int) -> HttpResponse:
    """C16: a mob member bids (or stays out) from its phone, or drops out of the formed mob
    when it cannot match the negatives named; the storyteller for an NPC (or an absent
    player's drop-out)."""
    scene, is_st = _scene(request, pk)
    ch = _challenge(request, scene, cid, is_st)
    form = forms.MobForm(request.POST, scene=scene, user=request.user)
    if not form.is_valid():
        return _unreadable(request, scene, is_st, form)
    d = form.cleaned_data
    common = {
        "scene": scene,
        "challenge": ch,
        "by": request.user,
        "member": d["member"],
        "token": d.get("token") or None,
        "key": d.get("key") or None,
    }
    try:
        if d.get("drop_out"):
            mob.challenge_mob_drop(**common)
        elif d.get("step_in"):
            mob.challenge_mob_step_in(**common, bid=d.get("bid") or "")
        else:
            mob.challenge_mob_bid(**common, bid=d.get("bid") or "", drop=d.get("drop", False))
    except ChallengeError as error:
        return _refused(request, scene, is_st, error)
    return _region(request, scene, is_st)
