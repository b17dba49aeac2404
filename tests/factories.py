"""Factories for every model the tests need (factory_boy)."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from characters import models, services
from characters.roles import storytellers_group


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests")


class StorytellerFactory(UserFactory):
    is_staff = True

    @factory.post_generation
    def storytellers_group(self, create: bool, extracted: object, **kwargs: object) -> None:
        if create:
            self.groups.add(storytellers_group())


class ChronicleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Chronicle

    name = factory.Sequence(lambda n: f"Chronicle {n}")
    ruleset = "met_classic"


class CharacterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Character

    chronicle = factory.SubFactory(ChronicleFactory)
    name = factory.Sequence(lambda n: f"Character {n}")
    player = factory.SubFactory(UserFactory)
    creature = "vampire"
    willpower = 4
    blood = 10


class TraitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Trait

    character = factory.SubFactory(CharacterFactory)
    category = "physical"
    name = factory.Sequence(lambda n: f"Trait{n}")
    count = 1


class AbilityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Ability

    character = factory.SubFactory(CharacterFactory)
    name = factory.Sequence(lambda n: f"Ability{n}")
    rating = 2


class PowerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Power

    character = factory.SubFactory(CharacterFactory)
    name = factory.Sequence(lambda n: f"Power{n}")


class EquipmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Equipment

    character = factory.SubFactory(CharacterFactory)
    name = factory.Sequence(lambda n: f"Item{n}")


class GameNightFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.GameNight

    chronicle = factory.SubFactory(ChronicleFactory)
    number = factory.Sequence(lambda n: n + 1)


class SceneFactory(factory.django.DjangoModelFactory):
    """A scene in its chronicle's open game night (opened through the service in most tests)."""

    class Meta:
        model = "combat.Scene"

    chronicle = factory.SubFactory(ChronicleFactory)
    game_night = factory.LazyAttribute(
        lambda o: (
            o.chronicle.game_nights.filter(closed_at__isnull=True).first()
            or GameNightFactory(chronicle=o.chronicle)
        )
    )
    name = factory.Sequence(lambda n: f"Scene {n}")
    ruleset = factory.LazyAttribute(lambda o: o.chronicle.ruleset)
    join_code = factory.Sequence(lambda n: f"T{n:05d}"[:6])
    storyteller = factory.SubFactory(StorytellerFactory)


def lose_a_trait(
    character: models.Character, subject: str = "Charismatic", category: str = "social"
) -> models.LedgerEntry:
    """One trait crossed off the sheet through the ledger, as a lost challenge does."""
    return services.ledger_spend(
        character=character,
        kind=models.LedgerKind.TRAIT_LOST,
        by=None,
        subject=subject,
        category=category,
    )
