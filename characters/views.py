"""Pages outside the admin: home, a character's sheet (phone and print), a chronicle's desk."""

from __future__ import annotations

import json
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from characters import selectors, services
from characters.forms import GameNightForm, LedgerRecordForm, ReverseForm, subject_choices
from characters.models import Character, Chronicle, GameNight, LedgerEntry, LedgerKind
from characters.night_report import night_report

# Ids and numbers in URLs beyond what the columns hold name nothing: a 404, never a 500.
_MAX_ID = 2**31 - 1


def _get_character_for_viewer(request: HttpRequest, pk: int) -> Character:
    """A character the user may see: their own, or any of a chronicle they run."""
    queryset = selectors.characters_visible_to(request.user).select_related("chronicle", "player")
    return get_object_or_404(queryset.prefetch_related(*selectors.SHEET_PREFETCH), pk=pk)


def _get_chronicle_for_storyteller(request: HttpRequest, pk: int) -> Chronicle:
    return get_object_or_404(selectors.chronicles_run_by(request.user), pk=pk)


def _get_night_for_storyteller(request: HttpRequest, pk: int, number: int) -> GameNight:
    """A game night of a chronicle the user storytells; 404 for anyone else."""
    if pk > _MAX_ID or number > _MAX_ID:
        raise Http404("No such game night.")
    chronicle = _get_chronicle_for_storyteller(request, pk)
    return get_object_or_404(
        GameNight.objects.select_related("chronicle"), chronicle=chronicle, number=number
    )


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """A player's characters; for a storyteller, the chronicles they run too."""
    own = Character.objects.filter(player=request.user).select_related("chronicle")
    return render(
        request,
        "home.html",
        {"characters": own, "chronicles": selectors.chronicles_run_by(request.user)},
    )


@login_required
def character_sheet(request: HttpRequest, pk: int) -> HttpResponse:
    character = _get_character_for_viewer(request, pk)
    return render(request, "characters/sheet.html", selectors.sheet(character))


@login_required
def character_print(request: HttpRequest, pk: int) -> HttpResponse:
    character = _get_character_for_viewer(request, pk)
    return render(request, "characters/print.html", selectors.sheet(character))


def _desk(
    request: HttpRequest, chronicle: Chronicle, form: LedgerRecordForm | None = None, status=200
) -> HttpResponse:
    """The chronicle page; after a refused cost, with the form as typed and its errors."""
    characters = list(
        chronicle.characters.select_related("player", "chronicle").prefetch_related(
            "traits", "abilities", "health"
        )
    )
    now = selectors.current_values_for(characters)
    if form is None:
        form = LedgerRecordForm(characters=characters, now=now, initial={"key": uuid.uuid4().hex})
    else:
        form.fields["subject"].choices = subject_choices(characters, now)
    night = GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()
    nights = GameNight.objects.filter(chronicle=chronicle).order_by("-number")[:20]
    ledger = (
        LedgerEntry.objects.filter(character__chronicle=chronicle)
        .select_related("character", "game_night", "reverses")
        .prefetch_related("reversed_by")
        .order_by("-pk")[:50]
    )
    context = {
        "chronicle": chronicle,
        "night": night,
        "nights": nights,
        "characters": characters,
        "ledger": ledger,
        "record_form": form,
    }
    return render(request, "characters/chronicle.html", context, status=status)


@login_required
def chronicle_desk(request: HttpRequest, pk: int) -> HttpResponse:
    """The storyteller's page for a chronicle: its characters, game night and ledger."""
    return _desk(request, _get_chronicle_for_storyteller(request, pk))


@login_required
@require_GET
def night_report_page(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """The night report, made to print: every scene's log, each character's ledger."""
    night = _get_night_for_storyteller(request, pk, number)
    context = {
        "report": night_report(night),
        "chronicle_pk": night.chronicle_id,
        "opened": night.opened_at,
        "closed": night.closed_at,
    }
    return render(request, "characters/night_report.html", context)


@login_required
@require_GET
def night_report_json(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    night = _get_night_for_storyteller(request, pk, number)
    body = json.dumps(night_report(night), indent=2, ensure_ascii=False)
    response = HttpResponse(body, content_type="application/json")
    filename = f"chronicle-{night.chronicle_id}-night-{night.number}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# Where a refusal of the services shows on the form: their arguments by form field.
_FIELD_OF_ARGUMENT = {"subject": "subject", "amount": "amount", "kind": "kind"}


@login_required
@require_POST
def ledger_record(request: HttpRequest, pk: int) -> HttpResponse:
    """The storyteller records a cost by hand; the form's key makes a double tap count once.

    A refused cost shows the page again with what was typed and the error beside its field.
    """
    chronicle = _get_chronicle_for_storyteller(request, pk)
    characters = list(
        chronicle.characters.select_related("chronicle").prefetch_related(
            "traits", "abilities", "health"
        )
    )
    now = selectors.current_values_for(characters)
    form = LedgerRecordForm(request.POST, characters=characters, now=now)
    if not form.is_valid():
        return _desk(request, chronicle, form, status=400)
    data = form.cleaned_data
    try:
        entry = _record(request, data)
    except services.LedgerError as error:
        if not error.key_reused:
            field = _FIELD_OF_ARGUMENT.get(error.field or "")
            if error.field == "category":
                field = "category" if data["kind"] == LedgerKind.TRAIT_REGAINED else "damage_type"
            form.add_error(field, str(error))
            return _desk(request, chronicle, form, status=400)
        fresh = request.POST.copy()
        fresh["key"] = uuid.uuid4().hex  # the next try is a new request
        form = LedgerRecordForm(fresh, characters=characters, now=now)
        form.is_valid()
        form.add_error(None, str(error))
        return _desk(request, chronicle, form, status=409)
    messages.success(request, f"Recorded for {entry.character}: {entry}.")
    return redirect("chronicle", pk=chronicle.pk)


def _record(request: HttpRequest, data: dict) -> LedgerEntry:
    if data["kind"] == LedgerKind.TRAIT_REGAINED:
        return services.ledger_regain(
            character=data["character"],
            category=data["category"],
            reason=data["reason"],
            by=request.user,
            idempotency_key=data["key"],
        )
    part = data["trait"] or data["ability"]
    return services.ledger_spend(
        character=data["character"],
        kind=data["kind"],
        subject=part.name if part is not None else "",
        category=(
            data["trait"].category
            if data["trait"] is not None
            else data["damage_type"]
            if data["kind"] == LedgerKind.HEALTH_DAMAGE
            else ""
        ),
        amount=data["amount"],
        reason=data["reason"],
        by=request.user,
        idempotency_key=data["key"],
    )


@login_required
@require_POST
def game_night_open(request: HttpRequest, pk: int) -> HttpResponse:
    chronicle = _get_chronicle_for_storyteller(request, pk)
    form = GameNightForm(request.POST)
    if not form.is_valid():
        messages.error(request, "That request was not understood; nothing changed.")
        return redirect("chronicle", pk=chronicle.pk)
    try:
        night = services.game_night_open(
            chronicle=chronicle, by=request.user, expected_number=form.cleaned_data["expected"]
        )
    except services.LedgerError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Game night {night.number} is open: a fresh ledger.")
    return redirect("chronicle", pk=chronicle.pk)


@login_required
@require_POST
def game_night_refresh(request: HttpRequest, pk: int) -> HttpResponse:
    chronicle = _get_chronicle_for_storyteller(request, pk)
    try:
        count = services.game_night_refresh(chronicle=chronicle, by=request.user)
    except services.LedgerError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Willpower, blood and health refreshed for {count} characters.")
    return redirect("chronicle", pk=chronicle.pk)


@login_required
@require_POST
def ledger_reverse(request: HttpRequest, pk: int, entry_pk: int) -> HttpResponse:
    chronicle = _get_chronicle_for_storyteller(request, pk)
    entry = LedgerEntry.objects.filter(character__chronicle=chronicle, pk=entry_pk).first()
    if entry is None:
        raise Http404("No such ledger entry in this chronicle.")
    form = ReverseForm(request.POST)
    if not form.is_valid():
        messages.error(request, services.REASON_REQUIRED)
        return redirect("chronicle", pk=chronicle.pk)
    try:
        services.ledger_reverse(entry=entry, by=request.user, reason=form.cleaned_data["reason"])
    except services.LedgerError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Reversed: {entry}.")
    return redirect("chronicle", pk=chronicle.pk)
