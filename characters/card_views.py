"""Login card pages: the storyteller's list and printed sheet, and the player's card login."""

from __future__ import annotations

import segno
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from characters import cards
from characters.access import chronicles_run_by
from characters.models import Chronicle, LoginCard
from combat.views import _reachable_host  # the address phones on the venue's wifi reach
from config.auth import BACKEND
from config.throttle import by_address, guarded


def _get_chronicle_for_storyteller(request: HttpRequest, pk: int) -> Chronicle:
    return get_object_or_404(chronicles_run_by(request.user), pk=pk)


def _private(response: HttpResponse) -> HttpResponse:
    patch_cache_control(response, private=True, no_store=True)
    return response


# The storyteller's cards -------------------------------------------------------------------


@login_required
@require_GET
def chronicle_cards(request: HttpRequest, pk: int) -> HttpResponse:
    """Who has a good card for tonight, with a revoke button each, and the print button."""
    chronicle = _get_chronicle_for_storyteller(request, pk)
    night = cards.open_night(chronicle)
    valid = cards.valid_cards(night) if night else {}
    rows = [(player, valid.get(player.pk)) for player in cards.players_of(chronicle)]
    return _private(
        render(
            request,
            "characters/cards/list.html",
            {"chronicle": chronicle, "night": night, "rows": rows},
        )
    )


@login_required
@require_POST
def chronicle_cards_print(request: HttpRequest, pk: int) -> HttpResponse:
    """Make the cards (every player's, or one player's) and show them once, to print."""
    chronicle = _get_chronicle_for_storyteller(request, pk)
    try:
        made = cards.cards_make_for_chronicle(
            chronicle=chronicle, by=request.user, only=request.POST.get("player", "")
        )
    except cards.CardError as error:
        messages.error(request, str(error))
        return redirect("chronicle_cards", pk=chronicle.pk)
    base = f"{request.scheme}://{_reachable_host(request)}{reverse('card_login')}"
    sheet = []
    for printed in made:
        url = f"{base}#{printed.code}"
        qr = segno.make(url, error="m").svg_inline(scale=3, border=2, omitsize=True, title=url)
        sheet.append((printed, qr))
    return _private(
        render(
            request,
            "characters/cards/print.html",
            {
                "chronicle": chronicle,
                "night": cards.open_night(chronicle),
                "sheet": sheet,
                "address": base,
            },
        )
    )


@login_required
@require_POST
def card_revoke(request: HttpRequest, pk: int, card_pk: int) -> HttpResponse:
    chronicle = _get_chronicle_for_storyteller(request, pk)
    card = get_object_or_404(
        LoginCard.objects.select_related("user"), pk=card_pk, night__chronicle=chronicle
    )
    cards.card_revoke(card=card)
    messages.success(
        request, f"{card.user.get_full_name() or card.user.username}'s card is revoked."
    )
    return redirect("chronicle_cards", pk=chronicle.pk)


# The player's card login -------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@guarded(("card_address", by_address))
def card_login(request: HttpRequest) -> HttpResponse:
    """The one door a login card opens: GET the code form (a scanned card's address carries
    the code after ``#``, which card.js sends), POST a code to log in for the night and go to
    the scene. Wrong codes from one address are throttled (``card_address``)."""
    if request.method != "POST":
        return _private(render(request, "characters/cards/login.html", {"code": ""}))
    try:
        card = cards.card_for_code(request.POST.get("code", ""))
    except cards.CardError as error:
        posted = cards.normalize_code(request.POST.get("code", ""))[: cards.CODE_LENGTH]
        return _private(
            render(
                request,
                "characters/cards/login.html",
                {"code": posted, "error": str(error)},
                status=400,
            )
        )
    login(request, card.user, backend=BACKEND)
    request.session.set_expiry(cards.CARD_SESSION_SECONDS)
    request.session.save()
    cards.card_used(card=card, session_key=request.session.session_key)
    return redirect(cards.card_destination(card))
