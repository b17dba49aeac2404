"""One post style for a scene's screens: parse, authorize, call, answer.

:func:`scene_post` wraps a view that takes one step: it finds the scene and the screen
(:func:`combat.access.screen_for`), reads the form (a form it cannot read: 400, nothing
tried), calls the view's step and answers with ``reply``: the screen with the refusal's
sentence in it when the step refused (:func:`combat.steps.http_status`: 409), else the
screen as it now is. Modelled on ``round_post`` (combat/rounds/views.py)::

    @scene_post(forms.SituationForm)
    def scene_situation(request, *, scene, tablet, data):
        services.scene_set_situation(scene=scene, by=request.user, ...)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, Protocol

from django import forms as django_forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from characters.idempotency import IdempotencyError
from combat import access, board, fragments, live, render_cache, replies, selectors, steps
from combat.forms import problems
from combat.models import Scene
from combat.steps import Refused, http_status

UNREADABLE = "Nothing changed."


class Reply(Protocol):
    def __call__(
        self,
        request: HttpRequest,
        scene: Scene,
        tablet: bool,
        error: str = "",
        status: int = 200,
    ) -> HttpResponse: ...


def is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def screen_reply_for(error_name: str = "error") -> Reply:
    """A reply that answers with the screen the post came from: the board (tablet) or the
    player's own part (phone), the sentence in it as ``error_name`` (each feature's panel
    shows its own: ``round_error``, ``challenge_error``, ``chase_error``), for htmx; a plain
    form post gets the page back by a redirect, the sentence as a message."""

    def reply(
        request: HttpRequest, scene: Scene, tablet: bool, error: str = "", status: int = 200
    ) -> HttpResponse:
        if not is_htmx(request):
            if error:
                messages.error(request, error)
            return redirect("scene_tablet" if tablet else "scene_phone", pk=scene.pk)
        scene = render_cache.scene_now(scene)
        with render_cache.rendering(scene):  # each read once, shared with this seq's pushes
            kept = replies.screen(request, scene, tablet) if status == 200 and not error else None
            if kept is not None:  # as this seq's pushes rendered it (combat.replies)
                return kept
            if tablet:
                context = {**board.board_state(scene), error_name: error, "oob": False}
                return render(request, f"{fragments.TABLET}#board", context, status=status)
            state = selectors.private_state(scene, request.user)
            context = {**state, error_name: error, "oob": False}
            return render(request, f"{fragments.PHONE}#private", context, status=status)

    return reply


#: The scene's own posts: the board with the sentence in its clock panel.
screen_reply = screen_reply_for("error")


def clock_reply(
    request: HttpRequest, scene: Scene, tablet: bool, error: str = "", status: int = 200
) -> HttpResponse:
    """After a clock tap: the clock panel only (htmx). The rest of the board (the log line)
    comes with the push every tablet of the scene gets; the board is not rendered twice."""
    if not is_htmx(request):
        return screen_reply(request, scene, tablet, error, status)
    scene.refresh_from_db()
    context = {**selectors.clock_state(scene), "error": error}
    return render(request, f"{fragments.TABLET}#clock-panel", context, status=status)


def scene_post(
    form_class: type[django_forms.Form] | None = None,
    *,
    reply: Reply = screen_reply,
    phone: bool = False,
    lead: str = UNREADABLE,
    scene_form: bool = False,
    form_kwargs: Callable[[HttpRequest, Scene, dict[str, Any]], dict[str, Any]] | None = None,
    with_form: bool = False,
    screen: Callable[[HttpRequest, int, dict[str, Any]], tuple[Scene, bool] | None] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., HttpResponse]]:
    """Wrap a scene post. ``phone``: a player's phone may post it too (else a phone gets
    404, as a scene it cannot see); ``lead``: the sentence before a form's problems;
    ``scene_form``: the form takes the scene (its choices are the scene's); ``form_kwargs``:
    what else the form takes, from the request, the scene and the URL's other arguments;
    ``with_form``: the step gets the read form too (``form=``), for what it computed;
    ``screen``: the scene and the screen (as :func:`combat.access.screen_for` answers them,
    locked and held) read with the row the URL names, in the transaction, or ``None``: the
    scene is read as usual."""

    # A form that takes nothing of the scene is read before the scene's lock: its cleaning
    # (CPU only, no query) is not held against every other tap of the scene. Its problems
    # are still answered only after the scene is found, as before (404 comes first).
    early = form_class is not None and not scene_form and form_kwargs is None

    def decorate(action: Callable[..., Any]) -> Callable[..., HttpResponse]:
        @login_required
        @require_POST
        @render_cache.one_request  # one step, one commit: its pushes and its answer share reads
        @wraps(action)
        def view(request: HttpRequest, pk: int, **kwargs: Any) -> HttpResponse:
            error, status = "", 200
            form = form_class(request.POST) if early else None  # type: ignore[misc]
            valid = form.is_valid() if form is not None else False
            try:
                # one transaction: the scene read here (and the row the view reads) is the
                # step's lock (combat.steps.request_transaction); committed before the answer
                with live.one_commit(), steps.request_transaction():
                    found = screen(request, pk, kwargs) if screen is not None else None
                    scene, tablet = found or access.screen_for(request, pk, lock=True)
                    if not tablet and not phone:
                        raise Http404(access.NO_SCENE)
                    data: dict[str, Any] = {}
                    if form_class is not None:
                        if form is None:
                            extra: dict[str, Any] = {"scene": scene} if scene_form else {}
                            if form_kwargs is not None:
                                extra.update(form_kwargs(request, scene, kwargs))
                            form = form_class(request.POST, **extra)
                            valid = form.is_valid()
                        if valid:
                            data = form.cleaned_data
                            if with_form:
                                kwargs = {**kwargs, "form": form}
                        else:
                            error, status = f"{lead} {problems(form)}", 400
                    if status == 200:
                        action(request, scene=scene, tablet=tablet, data=data, **kwargs)
            except (Refused, IdempotencyError) as refused:
                return reply(request, scene, tablet, str(refused), http_status(refused))
            return reply(request, scene, tablet, error, status)

        return view

    return decorate
