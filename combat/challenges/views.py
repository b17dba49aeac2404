"""Challenge posts: thin views on :func:`combat.posts.scene_post` that read a form, find the
scene and the screen through :func:`combat.access.screen_for` (a storyteller posts from the
tablet unless the form says ``from=phone``), call a service and answer with that screen's
region (the phone's prompts, or the tablet's challenge board). A refused step answers 409
with the sentence (and the rule ID) inside the region; a form it could not read answers 400;
nothing changes in either case."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any

from django import forms as django_forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import escape
from django.views.decorators.http import require_GET

from combat import access, render_cache, replies, steps
from combat.challenges import (
    answering,
    forms,
    leaving,
    mob,
    negatives,
    reads,
    retests,
    selectors,
    spending,
    starting,
    storyteller,
    throwing,
)
from combat.challenges.access import challenge_in, locked_with_scene
from combat.models import Challenge, Scene
from combat.posts import UNREADABLE, scene_post
from combat.rules.challenge import Challenge as Engine
from combat.rules.challenge import Phase
from combat.rules.errors import RuleError
from combat.rules.odds import SPREAD, blind_odds, blind_retests
from combat.rules.terms import Side

PROMPTS = "combat/challenges/prompts.html"
BOARD = "combat/challenges/board.html"
EARLIER = "combat/challenges/earlier.html"


def _present(request: HttpRequest, scene: Scene) -> None:
    """A phone's post needs a character of the user's still in the scene (404: none);
    :func:`access.screen_for` read it with the scene (``present``)."""
    present = getattr(scene, "present", None)
    if present is None:
        present = scene.participants.filter(
            character__player=request.user, removed_at__isnull=True
        ).exists()
    if not present:
        raise Http404("You have no character in this scene.")


def _screen(request: HttpRequest, pk: int) -> tuple[Scene, bool]:
    """The scene and whether the request comes from its tablet (:func:`access.screen_for`)."""
    scene, tablet = access.screen_for(request, pk)
    if not tablet:
        _present(request, scene)
    return scene, tablet


def _challenge(
    request: HttpRequest, scene: Scene, cid: int, tablet: bool, *, lock: bool = False
) -> Challenge:
    """A challenge of the scene; to a phone, one with a hidden NPC on a side is nobody's
    business unless the player's own character is in it (the same 404 as no challenge).
    ``lock``: a post's read, in its transaction after the scene's, is its step's lock
    (:func:`combat.steps.hold`)."""
    ch = steps.holding(Challenge, cid) if lock else None  # read with the scene (_with_scene)
    if ch is None:
        ch = challenge_in(scene.pk, cid, lock=lock)
    if ch is None or not (tablet or _seen_by(ch, request.user)):
        raise Http404("No such challenge in this scene.")
    ch.scene = scene  # the scene read (and, for a post, locked) with who may post
    return steps.hold(ch) if lock else ch


def _with_scene(request: HttpRequest, pk: int, url: dict[str, Any]) -> tuple[Scene, bool] | None:
    """A post on a challenge: the scene and the challenge read, and locked, in one statement
    (:func:`combat.challenges.access.locked_with_scene`) and held for the step. A challenge
    that is not there, or that the poster may not see, is read again as any other: one
    with a hidden NPC takes the same reads as no challenge (and the same 404)."""
    if "cid" not in url:
        return None
    ch = locked_with_scene(request, pk, url["cid"])
    if ch is None:
        return None
    try:
        scene, tablet = access.screen_of(
            request, ch.scene, from_phone=request.POST.get("from") == "phone", lock=False
        )
    except Http404:
        return None  # read again: the same 404 as every other read answers it
    if not (tablet or _seen_by(ch, request.user)):
        return None
    steps.hold(ch)
    return steps.hold(scene), tablet


def _seen_by(ch: Challenge, user: Any) -> bool:
    """Whether a player may see ``ch``: no hidden NPC on a side, or their own character in
    it (both sides are read with the challenge)."""
    sides = [p for p in (ch.attacker, ch.defender) if p is not None]
    if any(p.character_id and p.character.player_id == user.pk for p in sides):
        return True
    return not any(p.hidden for p in sides)


def _region(
    request: HttpRequest, scene: Scene, tablet: bool, error: str = "", status: int = 200
) -> HttpResponse:
    """The screen's region (the tablet's board, the phone's prompts), the sentence in it."""
    scene = render_cache.scene_now(scene)
    context = {"scene": scene, "player": request.user, "challenge_error": error}
    # the reads of this seq's pushes (when the step made them and the scene stayed there)
    with render_cache.rendering(scene):
        if not error and status == 200:  # as this seq's pushes rendered it (combat.replies)
            if tablet:
                kept = replies.region(request, "challenges")
            else:
                kept = replies.included(request, request.user.pk, PROMPTS)
            if kept is not None:
                return HttpResponse(kept)
        return render(request, BOARD if tablet else PROMPTS, context, status=status)


def _scene_and_user(request: HttpRequest, scene: Scene, url: dict[str, Any]) -> dict[str, Any]:
    return {"scene": scene, "user": request.user}


def challenge_post(
    form_class: type[django_forms.Form] | None = None,
    *,
    phone: bool = True,
    lead: str = UNREADABLE,
    user_form: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., HttpResponse]]:
    """A challenge post (:func:`combat.posts.scene_post`, answered with the screen's region):
    a phone needs a character of its user in the scene; a ``cid`` in the URL is the scene's
    challenge (``challenge=``); ``user_form``: the form takes the scene and the user."""

    def decorate(action: Callable[..., Any]) -> Callable[..., HttpResponse]:
        @wraps(action)
        def step(
            request: HttpRequest, *, scene: Scene, tablet: bool, data: dict, **url: Any
        ) -> None:
            if not tablet:
                _present(request, scene)
            if "cid" in url:
                url["challenge"] = _challenge(request, scene, url.pop("cid"), tablet, lock=True)
            action(request, scene=scene, tablet=tablet, data=data, **url)

        return scene_post(
            form_class,
            reply=_region,
            phone=phone,
            lead=lead,
            form_kwargs=_scene_and_user if user_form else None,
            with_form=form_class is not None,
            screen=_with_scene,
        )(step)  # scene_post shares the step's reads and renders (render_cache.one_request)

    return decorate


@login_required
@require_GET
def challenge_region(request: HttpRequest, pk: int) -> HttpResponse:
    """The actor's challenge region as it is now (a phone that missed a push)."""
    scene, tablet = _screen(request, pk)
    return _region(request, scene, tablet)


@login_required
@require_GET
def challenge_earlier(request: HttpRequest, pk: int) -> HttpResponse:
    """A page of the board's fold of earlier challenges (the tablet asks when the storyteller
    opens it: :mod:`combat.challenges.board_reads`), each as the board shows a finished one
    (its void form too). The storyteller's alone, asked as the board is: a player of the
    scene gets the same 404 as a stranger, and nothing of it (not even how many). ``before``:
    the page below that challenge; ``through``: every one down to that challenge (the pages
    the tablet had open, asked again after a change moved them)."""
    scene, tablet = access.screen_for(request, pk)
    if not tablet:
        raise Http404(access.NO_SCENE)
    before, through = _pk_arg(request, "before"), _pk_arg(request, "through")
    scene = render_cache.scene_now(scene)
    with render_cache.rendering(scene):
        page = selectors.earlier_cards(scene, before=before, through=through)
        url = request.path
        return render(request, EARLIER, {"scene": scene, "page": page, "url": url})


def _pk_arg(request: HttpRequest, name: str) -> int | None:
    value = request.GET.get(name, "")
    if not value:
        return None
    if not (value.isascii() and value.isdigit()):  # "²" is a digit to isdigit, not to int
        raise Http404("No such page.")
    return int(value)


@challenge_post(forms.StartForm, lead="Nothing started.", user_form=True)
def challenge_start(request: HttpRequest, *, scene: Scene, tablet: bool, data, form) -> None:
    starting.challenge_start(scene=scene, by=request.user, **form.service_kwargs())


@challenge_post(forms.ActForm)
def challenge_act(
    request: HttpRequest, *, scene: Scene, tablet: bool, data, form, challenge: Challenge
) -> None:
    """A side's step: from the player's phone, or from the tablet for an NPC or static side."""
    d = data
    side = d["side"]
    common = {
        "scene": scene,
        "challenge": challenge,
        "by": request.user,
        "side": side,
        "key": d.get("key") or None,
        "token": d.get("token") or None,
        "as_st": tablet and side in reads.sides_for_st(challenge),
    }
    action = d["action"]
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


@challenge_post()
def challenge_leave(
    request: HttpRequest, *, scene: Scene, tablet: bool, data, challenge: Challenge
) -> None:
    """A player puts away the card of a finished challenge (from that player's phones)."""
    if tablet:
        raise Http404("A storyteller's board keeps the last few finished challenges itself.")
    leaving.challenge_leave(scene=scene, challenge=challenge, by=request.user)


@challenge_post(forms.StForm, phone=False)
def challenge_st(
    request: HttpRequest, *, scene: Scene, tablet: bool, data, form, challenge: Challenge
) -> None:
    """The storyteller's calls on a challenge (from the tablet)."""
    storyteller.challenge_st(
        scene=scene,
        challenge=challenge,
        by=request.user,
        action=data["action"],
        seconds=data.get("seconds") or 0,
        side=data.get("side") or "",
        text=data.get("text") or "",
        token=data.get("token") or None,
        key=data.get("key") or None,
    )


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
    scene, tablet = _screen(request, pk)
    ch = _challenge(request, scene, cid, tablet)
    side = request.GET.get("side", "")
    allowed = reads.sides_for_st(ch) if tablet else reads.sides_for(ch, request.user)
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


@challenge_post(forms.RegainForm, user_form=True)
def challenge_regain(request: HttpRequest, *, scene: Scene, tablet: bool, data, form) -> None:
    """W7 from the phone: one willpower buys back a category's traits lost tonight."""
    spending.challenge_regain(
        scene=scene,
        by=request.user,
        participant=data["participant"],
        category=data["category"],
        key=data.get("key") or None,
    )


@challenge_post(forms.MobForm, user_form=True)
def challenge_mob(
    request: HttpRequest, *, scene: Scene, tablet: bool, data, form, challenge: Challenge
) -> None:
    """C16: a mob member bids (or stays out) from its phone, or drops out of the formed mob
    when it cannot match the negatives named; the storyteller for an NPC (or an absent
    player's drop-out)."""
    d = data
    common = {
        "scene": scene,
        "challenge": challenge,
        "by": request.user,
        "member": d["member"],
        "token": d.get("token") or None,
        "key": d.get("key") or None,
    }
    if d.get("drop_out"):
        mob.challenge_mob_drop(**common)
    elif d.get("step_in"):
        mob.challenge_mob_step_in(**common, bid=d.get("bid") or "")
    else:
        mob.challenge_mob_bid(**common, bid=d.get("bid") or "", drop=d.get("drop", False))
