"""Django admin: the admins' home for sheets.

Every page is scoped to the chronicles the user storytells, as characters.access decides
(superusers see all). The ledger is read-only: it changes through game-night actions
and reversals, never by editing.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from characters import services
from characters.access import (
    characters_run_by,
    chronicles_run_by,
    is_storyteller_of,
    players_offered_to,
    storytellers_offered_to,
)
from characters.admin_io import export_characters_action, grapevine_upload_view
from characters.models import (
    Ability,
    Attribute,
    Character,
    Chronicle,
    Equipment,
    ExperienceEntry,
    GameNight,
    HealthLevel,
    LedgerEntry,
    Power,
    SheetEntry,
    Trait,
)
from config.bounds import parse_id


def _runs(request: HttpRequest, chronicle_id: int | None) -> bool:
    return is_storyteller_of(request.user, chronicle_id)


class RunChronicleFilter(admin.RelatedFieldListFilter):
    """A chronicle filter that names only the chronicles the user storytells."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list:
        ordering = self.field_admin_ordering(field, request, model_admin)
        return field.get_choices(
            include_blank=False,
            ordering=ordering,
            limit_choices_to={"pk__in": chronicles_run_by(request.user)},
        )


class ChronicleScopedAdmin(admin.ModelAdmin):
    """Rows of chronicles the storyteller runs only; FK choices limited the same way."""

    chronicle_path = "chronicle"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        return qs.filter(**{f"{self.chronicle_path}__in": chronicles_run_by(request.user)})

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "chronicle":
            kwargs["queryset"] = chronicles_run_by(request.user)
        if db_field.name == "character":
            kwargs["queryset"] = characters_run_by(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class SheetInline(admin.TabularInline):
    extra = 0
    # Notes and reasons are long texts (real Grapevine files); one line until typed into.
    formfield_overrides = {models.TextField: {"widget": forms.Textarea(attrs={"rows": 1})}}


class TraitInline(SheetInline):
    model = Trait
    fields = ("category", "name", "count", "negative", "stamina_based", "note")


class AbilityInline(SheetInline):
    model = Ability


class PowerInline(SheetInline):
    model = Power


class AttributeInline(SheetInline):
    model = Attribute


class HealthLevelInline(SheetInline):
    model = HealthLevel


class EquipmentInline(SheetInline):
    model = Equipment
    fields = (
        "name",
        "kind",
        "bonus_traits",
        "damage",
        "damage_type",
        "difficulty",
        "range",
        "armor",
        "note",
    )


class SheetEntryInline(SheetInline):
    model = SheetEntry


class ExperienceInline(SheetInline):
    model = ExperienceEntry


class LedgerInline(admin.TabularInline):
    model = LedgerEntry
    fk_name = "character"
    extra = 0
    can_delete = False
    fields = ("created_at", "game_night", "kind", "subject", "category", "amount", "reason")
    readonly_fields = fields
    ordering = ("-pk",)
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Character)
class CharacterAdmin(ChronicleScopedAdmin):
    list_display = ("name", "chronicle", "creature", "affiliation", "player", "npc")
    list_filter = (
        ("chronicle", RunChronicleFilter),
        "creature",
        "npc",
        ("player", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("name", "affiliation", "player__username", "notes")
    list_select_related = ("chronicle", "player")
    actions = (export_characters_action,)
    inlines = (
        TraitInline,
        AbilityInline,
        PowerInline,
        AttributeInline,
        HealthLevelInline,
        EquipmentInline,
        SheetEntryInline,
        ExperienceInline,
        LedgerInline,
    )
    fieldsets = (
        (None, {"fields": ("chronicle", "name", "player", "npc", "creature", "affiliation")}),
        (
            "Pools",
            {"fields": ("generation", "willpower", "blood", "blood_per_turn", "rage", "gnosis")},
        ),
        ("Story", {"fields": ("nature", "demeanor", "narrator", "notes")}),
    )

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "player":
            object_id = (
                request.resolver_match.kwargs.get("object_id") if request.resolver_match else None
            )
            current = (
                characters_run_by(request.user)
                .filter(pk=object_id)
                .values_list("player_id", flat=True)
                .first()
                if parse_id(str(object_id))
                else None
            )
            kwargs["queryset"] = players_offered_to(request.user, current=current)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Chronicle)
class ChronicleAdmin(admin.ModelAdmin):
    list_display = ("name", "ruleset", "character_count", "import_link")
    search_fields = ("name",)
    filter_horizontal = ("storytellers",)
    actions = ("open_next_game_night", "refresh_pools")
    list_display_links = ("name",)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "storytellers":
            kwargs["queryset"] = storytellers_offered_to(request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_urls(self) -> list:
        upload = self.admin_site.admin_view(grapevine_upload_view)
        return [
            path("<int:chronicle_id>/grapevine/", upload, name="characters_chronicle_grapevine"),
            *super().get_urls(),
        ]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return chronicles_run_by(request.user).annotate(character_count=Count("characters"))

    @admin.display(description="Grapevine")
    def import_link(self, obj: Chronicle) -> str:
        url = reverse("admin:characters_chronicle_grapevine", args=[obj.pk])
        return format_html('<a href="{}">Import a .gex file</a>', url)

    @admin.display(ordering="character_count", description="characters")
    def character_count(self, obj: Chronicle) -> int:
        return obj.character_count  # type: ignore[attr-defined]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or _runs(request, obj.pk))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if not change:  # whoever creates a chronicle runs it, or it would vanish from view
            form.instance.storytellers.add(request.user)

    @admin.action(description="Open the next game night")
    def open_next_game_night(self, request: HttpRequest, queryset: QuerySet) -> Any:
        """Confirm first, naming the night each chronicle is on; the confirmation carries
        those numbers, so a second click finds the night already moved on and does nothing."""
        if "confirm" not in request.POST:
            open_nights = {
                night.chronicle_id: night.number
                for night in GameNight.objects.filter(chronicle__in=queryset, closed_at=None)
            }
            rows = [(chronicle, open_nights.get(chronicle.pk)) for chronicle in queryset]
            return TemplateResponse(
                request,
                "admin/characters/open_game_night.html",
                {
                    **self.admin_site.each_context(request),
                    "rows": rows,
                    "title": "Open the next game night?",
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )
        for chronicle in queryset:
            raw = request.POST.get(f"expected_{chronicle.pk}", "").strip()
            expected = parse_id(raw) or 0  # blank: no night was open
            try:
                night = services.game_night_open(
                    chronicle=chronicle, by=request.user, expected_number=expected
                )
            except services.LedgerError as error:
                self.message_user(request, f"{chronicle}: {error}", messages.WARNING)
            else:
                self.message_user(request, f"{chronicle}: game night {night.number} is open.")
        return None

    @admin.action(description="Refresh willpower, blood and health")
    def refresh_pools(self, request: HttpRequest, queryset: QuerySet) -> None:
        for chronicle in queryset:
            try:
                count = services.game_night_refresh(chronicle=chronicle, by=request.user)
            except services.LedgerError as error:
                self.message_user(request, str(error), messages.ERROR)
            else:
                self.message_user(request, f"{chronicle}: {count} characters refreshed.")


@admin.register(GameNight)
class GameNightAdmin(ChronicleScopedAdmin):
    list_display = ("chronicle", "number", "opened_at", "closed_at")
    list_filter = (("chronicle", RunChronicleFilter),)
    readonly_fields = ("chronicle", "number", "opened_at", "opened_by", "closed_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ChronicleScopedAdmin):
    chronicle_path = "character__chronicle"
    list_display = ("created_at", "character", "kind", "subject", "amount", "reason", "reverses")
    list_filter = ("kind", ("game_night__chronicle", RunChronicleFilter))
    search_fields = ("character__name", "subject", "reason")
    list_select_related = ("character", "reverses", "game_night")
    readonly_fields = [f.name for f in LedgerEntry._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
