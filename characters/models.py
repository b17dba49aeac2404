"""Chronicles, character sheets, game nights and the per-night ledger.

A sheet holds permanent values only. What a game night costs (traits lost, ability points and
willpower spent, once-per-night uses, damage) is written to the ledger of that night, never by
editing the sheet; current values are derived (see ``characters.selectors``).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q


class Ruleset(models.TextChoices):
    """The four rule profiles of RULES.md."""

    MET_CLASSIC = "met_classic", "Mind's Eye Theatre (classic)"
    MET_WEREWOLF = "met_werewolf", "Mind's Eye Theatre: Werewolf"
    MET_BNS = "met_bns", "Mind's Eye Theatre: test pools"
    WOD_DICE = "wod_dice", "World of Darkness dice"


def default_options() -> dict[str, bool]:
    """House rules with the RULES.md defaults (W2 abilities add; G4 Control decays)."""
    return {"abilities_add": True, "control_decay": True}


class Chronicle(models.Model):
    name = models.CharField(max_length=120, unique=True)
    ruleset = models.CharField(
        max_length=20,
        choices=Ruleset.choices,
        default=Ruleset.MET_CLASSIC,
        help_text="The ruleset its scenes use unless a scene picks another.",
    )
    options = models.JSONField(default=default_options, blank=True, help_text="House rules.")
    storytellers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="chronicles_run", blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Creature(models.TextChoices):
    VAMPIRE = "vampire", "Vampire"
    WEREWOLF = "werewolf", "Werewolf"
    MAGE = "mage", "Mage"
    CHANGELING = "changeling", "Changeling"
    WRAITH = "wraith", "Wraith"
    MORTAL = "mortal", "Mortal"
    GHOUL = "ghoul", "Ghoul"
    KINFOLK = "kinfolk", "Kinfolk"
    FERA = "fera", "Fera"
    OTHER = "other", "Other"


def blood_per_turn(generation: int | None) -> int:
    """Blood a vampire may spend in one turn, by generation (the C5 limit on blood traits)."""
    if generation is None or generation >= 10:
        return 1
    return {9: 2, 8: 3, 7: 4, 6: 6, 5: 8}.get(generation, 10)


def new_sheet_version() -> int:
    """A fresh sheet version: random, never a counter, so a version written by a transaction
    that rolled back is never written again with other contents (``characters.sheet_versions``).
    """
    return secrets.randbits(62) + 1


class Character(models.Model):
    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="characters")
    name = models.CharField(max_length=120)
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="characters",
    )
    npc = models.BooleanField("NPC", default=False)
    creature = models.CharField(max_length=20, choices=Creature.choices, default=Creature.MORTAL)
    affiliation = models.CharField(max_length=80, blank=True, help_text="Clan, tribe, tradition…")
    generation = models.PositiveSmallIntegerField(null=True, blank=True)
    willpower = models.PositiveSmallIntegerField(default=0)
    blood = models.PositiveSmallIntegerField(default=0, help_text="Blood pool (maximum).")
    blood_per_turn = models.PositiveSmallIntegerField(
        default=1, help_text="Blood that may be spent per turn (from the generation)."
    )
    rage = models.PositiveSmallIntegerField(default=0)
    gnosis = models.PositiveSmallIntegerField(default=0)
    nature = models.CharField(max_length=80, blank=True)
    demeanor = models.CharField(max_length=80, blank=True)
    narrator = models.CharField(max_length=120, blank=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Changes with every write to the character, its sheet's rows or its ledger: the key of
    # the per-process sheet cache (``characters.sheet_cache``, ``characters.sheet_versions``).
    sheet_version = models.BigIntegerField(default=new_sheet_version, editable=False)

    class Meta:
        ordering = ["chronicle", "name"]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "name"], name="character_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class Category(models.TextChoices):
    """Trait categories (RULES.md, Shared terms)."""

    PHYSICAL = "physical", "Physical"
    SOCIAL = "social", "Social"
    MENTAL = "mental", "Mental"


class Trait(models.Model):
    """A named trait with a count (``Tough x2``), possibly negative (C5, W8)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="traits")
    category = models.CharField(max_length=10, choices=Category.choices)
    name = models.CharField(max_length=120)
    count = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1)])
    negative = models.BooleanField(default=False)
    stamina_based = models.BooleanField(
        "Stamina-based",
        null=True,
        blank=True,
        default=None,
        help_text="A physical trait of Stamina (C12, C15: all a surprised defender may bid). "
        "Unknown: the storyteller decides at the table.",
    )
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["category", "negative", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "category", "negative", "name"], name="trait_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} x{self.count}"


class Ability(models.Model):
    """An ability with its rating: MET ``Dodge x2`` and wod_dice dots share it."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="abilities")
    name = models.CharField(max_length=120)
    rating = models.PositiveSmallIntegerField(default=1)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "abilities"
        constraints = [models.UniqueConstraint(fields=["character", "name"], name="ability_unique")]

    def __str__(self) -> str:
        return f"{self.name} {self.rating}"


class Power(models.Model):
    """A discipline, gift or other power with its level (``Celerity: Alacrity``)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="powers")
    name = models.CharField(max_length=120)
    level = models.PositiveSmallIntegerField(default=1)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["character", "name"], name="power_unique")]

    def __str__(self) -> str:
        return self.name


class Attribute(models.Model):
    """wod_dice attributes in dots (Strength, Wits…) or met_bns values (Physical…)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="attributes")
    name = models.CharField(max_length=40)
    value = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="attribute_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.value}"


class SheetEntry(models.Model):
    """Lists the rules do not read: backgrounds, influences, merits, flaws…"""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="entries")
    list_name = models.CharField(max_length=80)
    name = models.CharField(max_length=120)
    value = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["list_name", "name"]
        verbose_name_plural = "sheet entries"

    def __str__(self) -> str:
        return f"{self.list_name}: {self.name}"


class HealthLevel(models.Model):
    """One level of a character's health track, with its boxes and wound penalty (D2)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="health")
    name = models.CharField(max_length=80)
    boxes = models.PositiveSmallIntegerField(default=1)
    penalty = models.SmallIntegerField(default=0)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order"]

    def __str__(self) -> str:
        return self.name


# Default tracks per ruleset: wod_dice is RULES.md D2; MET's follows the seeds.
HEALTH_TRACKS: dict[str, list[tuple[str, int, int]]] = {
    "wod_dice": [
        ("Bruised", 1, 0),
        ("Hurt", 1, -1),
        ("Injured", 1, -1),
        ("Wounded", 1, -2),
        ("Mauled", 1, -2),
        ("Crippled", 1, -5),
        ("Incapacitated", 1, 0),
    ],
    "met": [("Healthy", 1, 0), ("Bruised", 1, 0), ("Wounded", 1, 0), ("Incapacitated", 1, 0)],
}


class DamageType(models.TextChoices):
    BASHING = "bashing", "Bashing"
    LETHAL = "lethal", "Lethal"
    AGGRAVATED = "aggravated", "Aggravated"


class Equipment(models.Model):
    class Kind(models.TextChoices):
        WEAPON = "weapon", "Weapon"
        ARMOR = "armor", "Armor"
        ITEM = "item", "Item"

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="equipment")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.ITEM)
    bonus_traits = models.PositiveSmallIntegerField(default=0)
    negative_traits = models.CharField(max_length=200, blank=True)
    damage = models.PositiveSmallIntegerField(default=0, help_text="Damage dice or levels.")
    damage_type = models.CharField(max_length=12, choices=DamageType.choices, blank=True)
    difficulty = models.PositiveSmallIntegerField(null=True, blank=True)
    range = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Yards.")
    armor = models.PositiveSmallIntegerField(default=0, help_text="Armor rating (soak dice).")
    concealable = models.BooleanField(default=False)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["kind", "name"]
        verbose_name_plural = "equipment"

    def __str__(self) -> str:
        return self.name


# Experience comes in half points and quarter points (``change="0.5"``): two decimals.
XP_DIGITS, XP_DECIMALS = 8, 2


def _xp() -> models.DecimalField:
    return models.DecimalField(max_digits=XP_DIGITS, decimal_places=XP_DECIMALS, default=0)


class ExperienceEntry(models.Model):
    """One line of a sheet's experience history, as Grapevine keeps it."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="experience")
    date = models.DateTimeField(null=True, blank=True)
    change = _xp()
    kind = models.CharField(max_length=20, blank=True)
    reason = models.TextField(blank=True)
    unspent = _xp()
    earned = _xp()

    class Meta:
        ordering = ["date", "pk"]
        verbose_name_plural = "experience entries"

    def __str__(self) -> str:
        return f"{self.change:+} {self.reason[:60]}".strip()


class GameNight(models.Model):
    """One event of a chronicle; exactly one is open at a time."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="game_nights")
    number = models.PositiveIntegerField()
    opened_at = models.DateTimeField(auto_now_add=True)
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["chronicle", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "number"], name="game_night_number"),
            models.UniqueConstraint(
                fields=["chronicle"],
                condition=Q(closed_at__isnull=True),
                name="one_open_game_night",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.chronicle} · night {self.number}"


class LedgerKind(models.TextChoices):
    TRAIT_LOST = "trait_lost", "Trait lost"
    TRAIT_REGAINED = "trait_regained", "Traits regained"
    ABILITY_SPENT = "ability_spent", "Ability point spent"
    WILLPOWER_SPENT = "willpower_spent", "Willpower spent"
    BLOOD_SPENT = "blood_spent", "Blood spent"
    RAGE_SPENT = "rage_spent", "Rage spent"
    GNOSIS_SPENT = "gnosis_spent", "Gnosis spent"
    HEALTH_DAMAGE = "health_damage", "Damage taken"
    ONCE_PER_NIGHT = "once_per_night", "Once-per-night use"
    REFRESH = "refresh", "Willpower, blood and health refreshed"


# Kinds that reset when the next game night opens; the others last until a refresh.
PER_NIGHT_KINDS = frozenset(
    {
        LedgerKind.TRAIT_LOST,
        LedgerKind.TRAIT_REGAINED,
        LedgerKind.ABILITY_SPENT,
        LedgerKind.ONCE_PER_NIGHT,
    }
)


class LedgerEntry(models.Model):
    """One change to a character's current values during a game night.

    Entries are never edited or deleted: a mistake is undone by a reversal, itself an entry.
    """

    game_night = models.ForeignKey(GameNight, on_delete=models.PROTECT, related_name="ledger")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="ledger")
    kind = models.CharField(max_length=20, choices=LedgerKind.choices)
    subject = models.CharField(max_length=120, blank=True, help_text="Trait, ability or power.")
    category = models.CharField(max_length=10, blank=True)
    amount = models.IntegerField(default=1)
    reason = models.CharField(max_length=300, blank=True)
    source = models.CharField(max_length=120, blank=True, help_text='e.g. "challenge 12"')
    reverses = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by"
    )
    paid_by = models.OneToOneField(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="pays_for",
        help_text="The willpower entry that paid for a regain (W7).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["character", "game_night"])]

    def __str__(self) -> str:
        what = self.subject or self.category  # a trait, an ability, a category, a damage type
        return f"{self.get_kind_display()}{f' {what}' if what else ''} x{self.amount}"


class IdempotencyKey(models.Model):
    """A key a client sent with a write, so the same write sent twice counts once.

    Scoped to the user and the action; see ``characters.idempotency`` for the API.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=60, help_text='What it was for, e.g. "ledger.spend".')
    key = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the request's payload.")
    result = models.JSONField(default=dict, blank=True, help_text="What a replay answers.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "action", "key"], name="idempotency_key")
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.key}"


class LoginCard(models.Model):
    """A login card: a printed QR and short code that log one player in for one game night.
    Only a hash of its code is kept: the code is shown once, on the printed page. It is worth
    nothing once revoked or once its night is closed (the next night opening closes it)."""

    night = models.ForeignKey(GameNight, on_delete=models.CASCADE, related_name="login_cards")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="login_cards"
    )
    code_hash = models.CharField(max_length=64, unique=True)
    made_at = models.DateTimeField(auto_now_add=True)
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # The sessions this card logged in: revoking the card (or closing its night) ends them.
    session_keys = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["night", "user__username", "-made_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["night", "user"],
                condition=Q(revoked_at__isnull=True),
                name="one_valid_card_per_player_and_night",
            )
        ]

    def __str__(self) -> str:
        return f"card of {self.user} for {self.night}"
