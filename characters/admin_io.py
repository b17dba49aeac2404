"""Admin pieces for moving sheets in and out: the JSON export action, the Grapevine upload."""

from __future__ import annotations

import json
import logging
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db import DatabaseError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from characters.access import chronicles_run_by
from characters.grapevine import GrapevineError, read_grapevine
from characters.sheet_export import chronicle_export
from characters.sheet_io import SheetError, sheets_clean, sheets_write

log = logging.getLogger(__name__)


@admin.action(description="Export selected characters as JSON")
def export_characters_action(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet
) -> HttpResponse:
    document = chronicle_export(characters=queryset)
    response = HttpResponse(
        json.dumps(document, indent=2), content_type="application/json; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="characters.json"'
    return response


class GrapevineUploadForm(forms.Form):
    file = forms.FileField(help_text="A Grapevine 3 chronicle file (.gex)")

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        limit = settings.GRAPEVINE_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"The file is {upload.size} bytes; the limit is {limit} bytes."
            )
        try:
            read = read_grapevine(upload.read(), max_bytes=limit)
        except GrapevineError as error:
            reason = str(error).rstrip(".")
            raise forms.ValidationError(f"{upload.name}: {reason}. Nothing was imported.") from None
        self.notes = read.notes
        try:
            self.sheets = sheets_clean(read.sheets, source=upload.name)
        except SheetError as error:
            raise forms.ValidationError(f"{error}. Nothing was imported.") from None
        return upload


def grapevine_upload_view(request: HttpRequest, chronicle_id: int) -> HttpResponse:
    """Upload a .gex into a chronicle the storyteller runs (admin URL, staff only).

    Players named in the file are matched within the chronicles this storyteller runs, or
    get a new account (:mod:`characters.import_players`).
    """
    chronicle = get_object_or_404(chronicles_run_by(request.user), pk=chronicle_id)
    form = GrapevineUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            report = sheets_write(
                chronicle=chronicle,
                sheets=form.sheets,
                players_from=chronicles_run_by(request.user),
                notes=form.notes,
            )
        except (SheetError, DatabaseError) as error:
            log.exception("Grapevine upload into %s refused", chronicle)
            detail = error if isinstance(error, SheetError) else "the database refused it"
            form.add_error("file", f"{detail}. Nothing was imported.")
        else:
            messages.success(request, f"{chronicle}: {report}.")
            for line in report.lines():
                messages.info(request, line)
            return redirect("admin:characters_character_changelist")
    context = {
        **admin.site.each_context(request),
        "form": form,
        "chronicle": chronicle,
        "title": f"Import a Grapevine file into {chronicle}",
    }
    return render(request, "admin/characters/grapevine_upload.html", context)
