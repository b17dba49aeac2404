"""Chase pages: thin views over the chase steps (:mod:`chases.starting`, :mod:`chases.running`,
:mod:`chases.maneuvers`, :mod:`chases.obstacles`, :mod:`chases.attacks`).

Every post goes through :func:`combat.posts.scene_post`: parse the form, find the scene and
the screen (:func:`combat.access.screen_for`: the tablet for its storytellers unless the form
says ``from=phone``), take the step, render. A chase's URL names the chase; its scene is found
from it first. The tablet's posts get the board back (the same partial the socket pushes), the
phone's its private part; a refusal comes back in the same place with its sentence (400: a
form it could not read, 409: the chase or scene refused), and nothing changed. Plain posts
redirect.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from chases import attacks, forms, maneuvers, obstacles, running, selectors, starting
from chases.models import Chase
from combat import posts
from combat import selectors as scene_selectors
from combat.models import Scene


def _chase(request: HttpRequest, pk: int) -> Chase:
    """The chase ``pk`` names, else 404; whether the user may post on its scene is
    :func:`combat.access.screen_for`'s call (a scene they neither run nor play in: 404)."""
    chase = Chase.objects.filter(pk=pk).first()
    if chase is None:
        raise Http404("No such chase.")
    return chase


#: The screen the post came from, the refusal's sentence in its chase panel.
_reply = posts.screen_reply_for("chase_error")


def _rolling_keys(chase: Chase) -> list[str]:
    state = selectors.engine(chase)
    return ["prey", *(p.predator for p in state.pursuits if p.running)]


def _facing_keys(chase: Chase) -> list[str]:
    return list((chase.pending.get("obstacle") or {}).get("facing", []))


def chase_post(
    form_class: type, keys: Callable[[Chase], list[str]] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., HttpResponse]]:
    """Wrap a post on a chase (its URL names the chase): find it through the access rules,
    then post on its scene (:func:`combat.posts.scene_post`: the tablet unless the form says
    ``from=phone``); read its form (``keys``: the sides the form asks about), call the action
    with the chase, the form and its data; a form it could not read comes back with its
    sentence (400), a refusal too (409)."""

    def form_kwargs(request: HttpRequest, scene: Scene, url: dict[str, Any]) -> dict[str, Any]:
        return {"keys": keys(url["chase"])} if keys else {}

    def decorate(action: Callable[..., Any]) -> Callable[..., HttpResponse]:
        @wraps(action)
        def step(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict, **url: Any):
            action(request, chase=url["chase"], form=url["form"], data=data)

        on_scene = posts.scene_post(
            form_class, reply=_reply, phone=True, form_kwargs=form_kwargs, with_form=True
        )(step)

        @login_required
        @require_POST
        @wraps(action)
        def view(request: HttpRequest, pk: int) -> HttpResponse:
            chase = _chase(request, pk)
            return on_scene(request, chase.scene_id, chase=chase)

        return view

    return decorate


def _posted(request: HttpRequest, chase: Chase, data: dict) -> dict[str, Any]:
    """What every post on a chase hands its step: the chase, who posts, the token of the state
    the form was drawn for (a stale one is refused) and the key that makes a double tap count
    once."""
    return {"chase": chase, "by": request.user, "token": data["token"], "key": data["key"]}


def _start_form_kwargs(request: HttpRequest, scene: Scene, url: dict[str, Any]) -> dict:
    return {"participants": scene_selectors.active_participants(scene)}


@posts.scene_post(forms.StartForm, reply=_reply, form_kwargs=_start_form_kwargs, with_form=True)
def chase_start(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict, form) -> None:
    """The storyteller starts a chase (from the tablet; a phone gets 404)."""
    by_pk = form.participants
    starting.start_chase(
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
