"""Pages outside the admin: home, a character's sheet (phone and print), a chronicle's desk."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from characters import selectors, services
from characters.forms import GameNightForm, LedgerRecordForm, ReverseForm
from characters.models import Character, Chronicle, GameNight, LedgerEntry


def _get_character_for_viewer(request: HttpRequest, pk: int) -> Character:
    """A character the user may see: their own, or any of a chronicle they run."""
    queryset = selectors.characters_visible_to(request.user).select_related("chronicle", "player")
    return get_object_or_404(queryset.prefetch_related(*selectors.SHEET_PREFETCH), pk=pk)


def _get_chronicle_for_storyteller(request: HttpRequest, pk: int) -> Chronicle:
    return get_object_or_404(selectors.chronicles_run_by(request.user), pk=pk)


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


@login_required
def chronicle_desk(request: HttpRequest, pk: int) -> HttpResponse:
    """The storyteller's page for a chronicle: its characters, game night and ledger."""
    chronicle = _get_chronicle_for_storyteller(request, pk)
    night = GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()
    ledger = (
        LedgerEntry.objects.filter(character__chronicle=chronicle)
        .select_related("character", "game_night", "reverses")
        .prefetch_related("reversed_by")
        .order_by("-pk")[:50]
    )
    return render(
        request,
        "characters/chronicle.html",
        {
            "chronicle": chronicle,
            "night": night,
            "characters": chronicle.characters.select_related("player"),
            "ledger": ledger,
            "record_form": LedgerRecordForm(chronicle=chronicle, initial={"key": uuid.uuid4().hex}),
        },
    )


@login_required
@require_POST
def ledger_record(request: HttpRequest, pk: int) -> HttpResponse:
    """The storyteller records a cost by hand; the form's key makes a double tap count once."""
    chronicle = _get_chronicle_for_storyteller(request, pk)
    form = LedgerRecordForm(request.POST, chronicle=chronicle)
    if not form.is_valid():
        problems = "; ".join(e for errors in form.errors.values() for e in errors)
        messages.error(request, f"Nothing recorded: {problems}")
        return redirect("chronicle", pk=chronicle.pk)
    data = form.cleaned_data
    try:
        entry = services.ledger_spend(
            character=data["character"],
            kind=data["kind"],
            subject=data["subject"],
            category=data["category"],
            amount=data["amount"],
            reason=data["reason"],
            by=request.user,
            idempotency_key=f"{request.user.pk}:{data['key']}",
        )
    except services.LedgerError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Recorded for {entry.character}: {entry}.")
    return redirect("chronicle", pk=chronicle.pk)


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
