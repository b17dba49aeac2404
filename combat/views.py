"""The scene pages: the storyteller's overview and tablet, joining, and the player's phone.

Views stay thin: a tablet's post is a :func:`combat.posts.scene_post` (find the scene and the
screen, parse the form: 400, call the step of :mod:`combat.services`; a refusal answers its
sentence, 409). htmx posts from the tablet get the board back (the same partial the socket
pushes); plain posts get a redirect and a message.
"""

from __future__ import annotations

import json

import segno
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.http.request import split_domain_port
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from characters.models import Character
from combat import board, forms, fragments, posts, selectors, services
from combat.models import Participant, Scene
from combat.posts import scene_post
from combat.services import SceneError
from config.network import lan_addresses
from config.throttle import by_address, by_user, guarded

NO_CHARACTER_IN_CHRONICLE = (
    "You have no character in {chronicle}, the chronicle of this scene: "
    "ask its storyteller to add one."
)
LOOPBACK = {"localhost", "127.0.0.1", "[::1]", "::1"}


def _get_scene_for_storyteller(request: HttpRequest, pk: int) -> Scene:
    """A scene of a chronicle the user runs, else 404 (another chronicle's scene is not there)."""
    scene = selectors.scenes_run_by(request.user).select_related("game_night").filter(pk=pk).first()
    if scene is None:
        raise Http404("No such scene among the chronicles you run.")
    return scene


def _get_scene_for_player(request: HttpRequest, pk: int) -> Scene:
    """A scene the user has (or had) a character in, else 404."""
    scene = selectors.scenes_played_by(request.user).filter(pk=pk).first()
    if scene is None:
        raise Http404("You have no character in this scene.")
    return scene


def _reachable_host(request: HttpRequest) -> str:
    """The host phones on the venue's wifi can reach: this one, unless it is loopback."""
    host = request.get_host()
    domain, port = split_domain_port(host)
    if domain in LOOPBACK or domain.startswith("127."):
        lan = lan_addresses()
        if lan:
            return f"{lan[0]}:{port}" if port else lan[0]
    return host


def join_url(request: HttpRequest, scene: Scene) -> str:
    path = reverse("scene_join_code", kwargs={"code": scene.join_code})
    return f"{request.scheme}://{_reachable_host(request)}{path}"


def _qr_svg(url: str) -> str:
    return segno.make(url, error="m").svg_inline(
        scale=4, border=2, dark="#000", light="#fff", omitsize=True, svgclass="qr", title=url
    )


# The storyteller's overview and tablet ---------------------------------------------------


@login_required
@require_GET
def scene_overview(request: HttpRequest) -> HttpResponse:
    """Every open scene of the chronicles the user runs, and the form that opens one."""
    chronicles = list(
        selectors.chronicles_for_new_scene(request.user).prefetch_related("game_nights")
    )
    return render(
        request,
        "combat/scene_overview.html",
        {
            "scenes": selectors.open_scenes_run_by(request.user),
            "chronicles": chronicles,
            "played": selectors.open_scenes_played_by(request.user),
            "form": forms.OpenSceneForm(user=request.user),
        },
    )


@login_required
@require_POST
def scene_open(request: HttpRequest) -> HttpResponse:
    form = forms.OpenSceneForm(request.POST, user=request.user)
    if not form.is_valid():
        messages.error(request, f"No scene opened. {forms.problems(form)}")
        return redirect("scene_overview")
    data = form.cleaned_data
    try:
        scene = services.scene_open(
            chronicle=data["chronicle"],
            by=request.user,
            name=data["name"],
            ruleset=data["ruleset"] or None,
        )
    except SceneError as error:
        messages.error(request, str(error))
        return redirect("scene_overview")
    return redirect("scene_tablet", pk=scene.pk)


@login_required
@require_GET
def scene_tablet(request: HttpRequest, pk: int) -> HttpResponse:
    """The storyteller's tablet; a player who opens it is sent to their phone."""
    scene = selectors.scenes_run_by(request.user).select_related("game_night").filter(pk=pk).first()
    if scene is None:
        _get_scene_for_player(request, pk)
        return redirect("scene_phone", pk=pk)
    url = join_url(request, scene)
    return render(
        request,
        fragments.TABLET,
        {
            **board.board_state(scene),
            "join_url": url,
            "qr_svg": _qr_svg(url),
            "npc_sheets": selectors.npc_sheets(scene),
            "rulesets": forms.RulesetForm.base_fields["ruleset"].choices,
            "pools_help": forms.POOLS_HELP,
        },
    )


def _step(data: dict) -> dict:
    """The tap's key and the token of the board it was made on, as a step takes them."""
    return {"key": data.get("key") or None, "seen": data.get("token") or None}


@scene_post(forms.ClockForm, reply=posts.clock_reply, lead="Clock not moved.")
def scene_clock(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict) -> None:
    """Advance the game clock. The form's key makes a tap sent twice count once; a tap made on
    an older board (its token) is refused with a sentence and changes nothing."""
    services.scene_advance_clock(
        scene=scene,
        by=request.user,
        seconds=data["seconds"],
        seen=data["token"] or None,
        idempotency_key=data["key"],
    )


@scene_post(forms.SituationForm)
def scene_situation(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict) -> None:
    services.scene_set_situation(
        scene=scene, by=request.user, situation=data["situation"], **_step(data)
    )


@scene_post(forms.RulesetForm)
def scene_ruleset(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict) -> None:
    services.scene_set_ruleset(scene=scene, by=request.user, ruleset=data["ruleset"], **_step(data))


@scene_post(forms.NpcForm, lead="No NPC added.", scene_form=True)
def scene_npcs(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict) -> None:
    """Add an NPC: one of the chronicle's NPC sheets, or a quick NPC with typed-in pools."""
    services.scene_add_npc(
        scene=scene,
        by=request.user,
        character=data["character"],
        name=data["name"],
        pools=data["pools"],
        hidden=data["hidden"],
        **_step(data),
    )


@scene_post(forms.StepForm)
def scene_remove(
    request: HttpRequest, *, scene: Scene, tablet: bool, data: dict, participant_pk: int
) -> None:
    participant = Participant.objects.filter(scene=scene, pk=participant_pk).first()
    if participant is None:
        raise SceneError(services.NOT_IN_SCENE)
    services.scene_remove(scene=scene, by=request.user, participant=participant, **_step(data))


def _closed_reply(
    request: HttpRequest, scene: Scene, tablet: bool, error: str = "", status: int = 200
) -> HttpResponse:
    """After closing: the overview (the tablet of a closed scene has nothing left to do)."""
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Scene closed: {scene.name}.")
    if posts.is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse("scene_overview")
        return response
    return redirect("scene_overview")


@scene_post(forms.StepForm, reply=_closed_reply)
def scene_close(request: HttpRequest, *, scene: Scene, tablet: bool, data: dict) -> None:
    services.scene_close(scene=scene, by=request.user, **_step(data))


# Joining and the phone -------------------------------------------------------------------


def _join_page(
    request: HttpRequest, *, code: str = "", error: str = "", status: int = 200
) -> HttpResponse:
    scene = None
    characters: list[Character] = []
    if code:
        scene = (
            Scene.objects.filter(join_code=code, closed_at__isnull=True)
            .select_related("chronicle")
            .first()
        )
        if scene is None and not error:
            error = services.UNKNOWN_CODE.format(code=code[:6])
            status = 404
        elif scene is not None:
            characters = selectors.joinable_characters(request.user, scene)
            if not characters and not error:
                error = NO_CHARACTER_IN_CHRONICLE.format(chronicle=scene.chronicle)
                status = 403
    return render(
        request,
        "combat/join.html",
        {
            "code": code,
            "scene": scene,
            "characters": characters,
            "error": error,
            "already": selectors.open_scenes_played_by(request.user),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
@guarded(("join_user", by_user), ("join_address", by_address))  # wrong codes are throttled
def scene_join(request: HttpRequest, code: str = "") -> HttpResponse:
    """GET: the code form (prefilled from a scanned link). POST: join with a character."""
    if request.method != "POST":
        code = code.strip().upper()
        mine = selectors.open_scenes_played_by(request.user).filter(join_code=code).first()
        if mine is not None:  # scanned again: back to the phone
            return redirect("scene_phone", pk=mine.pk)
        return _join_page(request, code=code)
    form = forms.JoinForm(request.POST, user=request.user)
    if not form.is_valid():
        posted = request.POST.get("code", "").strip().upper()[:10]
        return _join_page(request, code=posted, error=forms.problems(form), status=400)
    code = form.cleaned_data["code"]
    character = form.cleaned_data["character"]
    scene = Scene.objects.filter(join_code=code, closed_at__isnull=True).first()
    mine = selectors.open_scenes_played_by(request.user).filter(join_code=code).first()
    if character is None and mine is not None:  # in the scene already: back to the phone
        return redirect("scene_phone", pk=mine.pk)
    if character is None and scene is not None:
        own = selectors.joinable_characters(request.user, scene)
        if len(own) != 1:
            return _join_page(request, code=code)
        character = own[0]
    if character is None:
        return _join_page(request, code=code)
    try:
        participant = services.scene_join(code=code, user=request.user, character=character)
    except SceneError as error:
        return _join_page(request, code=code, error=str(error), status=400)
    return redirect("scene_phone", pk=participant.scene_id)


@login_required
@require_GET
def scene_phone(request: HttpRequest, pk: int) -> HttpResponse:
    """The player's phone; a storyteller of the scene without a character in it gets the tablet."""
    scene = selectors.scenes_played_by(request.user).filter(pk=pk).first()
    if scene is None:
        _get_scene_for_storyteller(request, pk)
        return redirect("scene_tablet", pk=pk)
    return render(
        request,
        fragments.PHONE,
        {
            **selectors.public_state(scene),
            **selectors.private_state(scene, request.user),
        },
    )


# The log ---------------------------------------------------------------------------------


def _log_for(request: HttpRequest, pk: int) -> tuple[Scene, list, bool]:
    """The whole log for the scene's storytellers; a player's own log for a player."""
    scene = selectors.scenes_run_by(request.user).filter(pk=pk).first()
    if scene is not None:
        return scene, selectors.log_for_storyteller(scene), True
    scene = _get_scene_for_player(request, pk)
    return scene, selectors.log_for_player(scene, request.user), False


@login_required
@require_GET
def scene_log_json(request: HttpRequest, pk: int) -> HttpResponse:
    scene, entries, whole = _log_for(request, pk)
    body = {
        "scene": scene.name,
        "chronicle": scene.chronicle.name,
        "join_code": scene.join_code,
        "whole": whole,
        "entries": selectors.log_rows(entries, numbered=not whole),
    }
    response = HttpResponse(
        json.dumps(body, indent=2, ensure_ascii=False), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="scene-{scene.pk}-log.json"'
    return response


@login_required
@require_GET
def scene_log_txt(request: HttpRequest, pk: int) -> HttpResponse:
    scene, entries, whole = _log_for(request, pk)
    lines = [f"{scene.name} · {scene.chronicle.name}" + ("" if whole else " (your log)"), ""]
    lines += [f"{row['clock']:>11}  {row['text']}" for row in selectors.log_rows(entries)]
    response = HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="scene-{scene.pk}-log.txt"'
    return response
