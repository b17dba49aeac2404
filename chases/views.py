"""Chase pages: thin views over the chase steps (:mod:`chases.starting`, :mod:`chases.running`,
:mod:`chases.maneuvers`, :mod:`chases.obstacles`, :mod:`chases.attacks`).

Parse the form, find the scene and chase through the access rules, take the step, render.
The tablet's posts get the board back (the same partial the socket pushes), the phone's its
private part; a refusal comes back in the same place with its sentence (400: a form it could
not read, 409: the chase or scene refused), and nothing changed. Plain posts redirect.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from characters.idempotency import IdempotencyError
from chases import attacks, forms, maneuvers, obstacles, running, selectors, starting
from chases.models import Chase
from combat import board as scene_board
from combat import fragments, steps
from combat import selectors as scene_selectors
from combat.models import Scene


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def _scene_for_storyteller(request: HttpRequest, pk: int) -> Scene:
    scene = scene_selectors.scenes_run_by(request.user).filter(pk=pk).first()
    if scene is None:
        raise Http404("No such scene among the chronicles you run.")
    return scene


def _chase(request: HttpRequest, pk: int) -> Chase:
    """A chase of a scene the user runs or has a character in, else 404."""
    chase = Chase.objects.select_related("scene").filter(pk=pk).first()
    if chase is None:
        raise Http404("No such chase.")
    runs = scene_selectors.scenes_run_by(request.user).filter(pk=chase.scene_id).exists()
    plays = scene_selectors.scenes_played_by(request.user).filter(pk=chase.scene_id).exists()
    if not (runs or plays):
        raise Http404("No such chase.")
    return chase


def _on_tablet(request: HttpRequest, scene: Scene) -> bool:
    return request.POST.get("via") == "tablet" and (
        scene_selectors.scenes_run_by(request.user).filter(pk=scene.pk).exists()
    )


def _reply(
    request: HttpRequest, scene: Scene, *, error: str = "", status: int = 200
) -> HttpResponse:
    scene = Scene.objects.select_related("chronicle", "storyteller", "game_night").get(pk=scene.pk)
    tablet = _on_tablet(request, scene)
    if _is_htmx(request):
        if tablet:
            context = scene_board.board_state(scene)
            template = f"{fragments.TABLET}#board"
        else:
            context = scene_selectors.private_state(scene, request.user)
            template = f"{fragments.PHONE}#private"
        context = {**context, "chase_error": error, "oob": False}
        return render(request, template, context, status=status)
    if error:
        messages.error(request, error)
    return redirect("scene_tablet" if tablet else "scene_phone", pk=scene.pk)


def _bad(request: HttpRequest, scene: Scene, form: Any) -> HttpResponse:
    return _reply(request, scene, error=f"Nothing changed. {forms.problems(form)}", status=400)


def _run(request: HttpRequest, scene: Scene, call: Any) -> HttpResponse:
    try:
        call()
    except (steps.Refused, IdempotencyError) as error:
        return _reply(request, scene, error=str(error), status=steps.http_status(error))
    return _reply(request, scene)


def _rolling_keys(chase: Chase) -> list[str]:
    state = selectors.engine(chase)
    return ["prey", *(p.predator for p in state.pursuits if p.running)]


def _facing_keys(chase: Chase) -> list[str]:
    return list((chase.pending.get("obstacle") or {}).get("facing", []))


def chase_post(
    form_class: type, keys: Callable[[Chase], list[str]] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., HttpResponse]]:
    """Wrap a post on a chase: find it through the access rules, read its form (``keys``: the
    sides the form asks about), call the action with the chase, the form and its data; a form
    it could not read comes back with its sentence (400), a refusal too (409)."""

    def decorate(action: Callable[..., Any]) -> Callable[..., HttpResponse]:
        @login_required
        @require_POST
        @wraps(action)
        def view(request: HttpRequest, pk: int) -> HttpResponse:
            chase = _chase(request, pk)
            form = form_class(request.POST, keys=keys(chase)) if keys else form_class(request.POST)
            if not form.is_valid():
                return _bad(request, chase.scene, form)
            data = form.cleaned_data
            return _run(
                request, chase.scene, lambda: action(request, chase=chase, form=form, data=data)
            )

        return view

    return decorate


def _posted(request: HttpRequest, chase: Chase, data: dict) -> dict[str, Any]:
    """What every post on a chase hands its step: the chase, who posts, the token of the state
    the form was drawn for (a stale one is refused) and the key that makes a double tap count
    once."""
    return {"chase": chase, "by": request.user, "token": data["token"], "key": data["key"]}


@login_required
@require_POST
def chase_start(request: HttpRequest, pk: int) -> HttpResponse:
    scene = _scene_for_storyteller(request, pk)
    participants = scene_selectors.active_participants(scene)
    form = forms.StartForm(request.POST, participants=participants)
    if not form.is_valid():
        return _bad(request, scene, form)
    data = form.cleaned_data
    by_pk = form.participants
    return _run(
        request,
        scene,
        lambda: starting.start_chase(
            scene=scene,
            by=request.user,
            predators=[by_pk[p] for p in data["predators"]],
            prey=[by_pk[p] for p in data["prey"]],
            start=data["start"],
            head_start=data["head_start"],
            course_difficulty=data["difficulty"],
            terrain=data["terrain"],
            sprint_rounds=data["sprint_rounds"],
            prey_run=data["prey_run"],
            predator_run=data["predator_run"],
            dice={"prey": data["prey_dice"]},
            key=data["key"],
        ),
    )


@chase_post(forms.DiceForm, keys=_rolling_keys)
def chase_round(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    running.chase_round(**_posted(request, chase, data), dice=form.dice, pools=form.pools)


@chase_post(forms.ManeuverForm)
def chase_maneuver(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    maneuvers.chase_maneuver(
        **_posted(request, chase, data),
        pursuit=data["pursuit"],
        role=data["role"],
        maneuver=data["maneuver"] or None,
        pick=data["pick"] or None,
    )


@chase_post(forms.ObstacleForm, keys=_rolling_keys)
def chase_obstacle(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    obstacles.chase_obstacle_set(
        **_posted(request, chase, data),
        label=data["label"],
        difficulty=data["difficulty"],
        pool=tuple(data["pool"].split("+", 1)),
        facing=data["facing"],
    )


@chase_post(forms.ChoiceForm)
def chase_obstacle_choice(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    obstacles.chase_obstacle_choice(**_posted(request, chase, data), who=data["who"])


@chase_post(forms.DiceForm, keys=_facing_keys)
def chase_obstacle_roll(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    obstacles.chase_obstacle_roll(**_posted(request, chase, data), dice=form.dice, pools=form.pools)


@chase_post(forms.CourseForm)
def chase_course(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    running.chase_set_course(**_posted(request, chase, data), difficulty=data["difficulty"])


@chase_post(forms.AttackForm)
def chase_attack(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    attacks.chase_attack(
        **_posted(request, chase, data),
        attacker=data["attacker"],
        target=data["target"],
        means=data["means"],
        weapon=data["weapon"] or None,
        pool=data["pool"],
        difficulty=data["difficulty"],
        damage=data["damage"],
        damage_type=data["damage_type"] or None,
        cover=data["cover"],
        dice=form.dice,
    )


@chase_post(forms.StepForm)
def chase_call_off(request: HttpRequest, *, chase: Chase, form: Any, data: dict) -> None:
    running.chase_call_off(**_posted(request, chase, data))
