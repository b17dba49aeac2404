"""The combat app's models: scenes (the live layer), challenges and combat rounds.

Each feature keeps its models in its own module and lists them in its ``__all__``.
"""

from combat.models.challenges import *  # noqa: F403
from combat.models.rounds import *  # noqa: F403
from combat.models.scenes import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    LogKind,
    Participant,
    Presence,
    Scene,
    SceneLogEntry,
)

__all__ = [
    "JOIN_CODE_ALPHABET",
    "JOIN_CODE_LENGTH",
    "LogKind",
    "Participant",
    "Presence",
    "Scene",
    "SceneLogEntry",
]
