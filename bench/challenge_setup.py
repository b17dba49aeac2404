"""Build the challenge benchmark's tables in the bench database; write what the driver needs.

``python bench/challenge_setup.py OUT.json --scenes 1,4,16``, run with the bench database in
the environment (``SQLITE_PATH`` or ``DATABASE_URL``). For each number of pairs P it builds
two set-ups, each in a chronicle of its own with an open game night (met_classic):
``separate`` (P scenes, one pair each) and ``shared`` (one scene, all P pairs); with
``--tablet-pairs``, the same set-ups again for those numbers of pairs, each scene with the
storyteller's tablet open on it (a real night's shape: the bench opens the storyteller's
socket, so every change renders and pushes the board too). A pair is
two players with the demo's Marcus and Sophia sheets (trait counts doubled: the driver bids
what is left, and a pair stops when its bids run out), joined through
``combat.services.scene_join``. Every player gets a session made by ``SessionStore`` (what
``django.contrib.auth.login`` stores), as in ``fanout_setup.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import (  # noqa: E402
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
)
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from characters.demo import CAST, _write_sheet  # noqa: E402
from characters.models import Character, Chronicle, GameNight  # noqa: E402
from characters.roles import storytellers_group  # noqa: E402
from combat import live, services  # noqa: E402

PASSWORD = "bench-challenge-password"
BACKEND = "django.contrib.auth.backends.ModelBackend"
DEEPER = 2  # the demo's trait counts doubled: a pair plays ~70 challenges before bids run out
PAIR = ("Marcus", "Sophia")


def _sheet(name: str) -> tuple[str, dict[str, Any]]:
    ruleset, sheet = CAST[name]
    traits = {
        cat: {t: n * DEEPER for t, n in traits.items()} for cat, traits in sheet["traits"].items()
    }
    return ruleset, {**sheet, "traits": traits}


def _session(user) -> str:
    engine = import_module(settings.SESSION_ENGINE)
    session = engine.SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = BACKEND
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def build(
    pairs: int, shared: bool, storyteller, password_hash: str, tablet: bool = False
) -> dict[str, Any]:
    """One set-up: P pairs in P scenes (``shared`` False) or in one scene; ``tablet``: the
    storyteller's session comes with it, for a tablet on each scene."""
    users = get_user_model()
    label = f"{pairs}-{'shared' if shared else 'separate'}{'-tablet' if tablet else ''}"
    chronicle = Chronicle.objects.create(name=f"Bench challenges {label}", ruleset="met_classic")
    chronicle.storytellers.add(storyteller)
    GameNight.objects.create(chronicle=chronicle, number=1, opened_by=storyteller)
    scene = None
    out = []
    for i in range(pairs):
        if scene is None or not shared:
            scene = services.scene_open(
                chronicle=chronicle, by=storyteller, name=f"Bench {label} {i}"
            )
        sides = {}
        for side, name in zip(("attacker", "defender"), PAIR, strict=True):
            ruleset, sheet = _sheet(name)
            user = users.objects.create(
                username=f"bench_{label}_{i:02d}_{side[0]}", password=password_hash
            )
            fields = {
                k: sheet[k]
                for k in ("creature", "willpower", "blood", "blood_per_turn")
                if k in sheet
            }
            character = Character.objects.create(
                chronicle=chronicle, name=f"{name} {i:02d}", player=user, **fields
            )
            _write_sheet(character, ruleset, sheet)
            participant = services.scene_join(code=scene.join_code, user=user, character=character)
            sides[side] = {
                "user": user.username,
                "session": _session(user),
                "participant": participant.pk,
                "traits": sheet["traits"],
            }
        out.append({"scene": scene.pk, **sides})
    return {
        "pairs": pairs,
        "shared": shared,
        "label": label,
        "tables": out,
        "tablet": _session(storyteller) if tablet else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--pairs", default="1,4,16")
    parser.add_argument("--layouts", default="separate,shared")
    parser.add_argument("--tablet-pairs", default="", help="these set-ups again, with a tablet")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    # Building the tables is not measured: nobody listens yet, so skip the pushes.
    live.scene_changed = lambda *a, **k: None
    live.presence_changed = lambda *a, **k: None
    live.sheets_changed = lambda *a, **k: None

    password_hash = make_password(PASSWORD)
    storyteller = get_user_model().objects.create(
        username="bench_challenge_st", password=password_hash, is_staff=True
    )
    storyteller.groups.add(storytellers_group())
    setups = [
        build(int(p), layout == "shared", storyteller, password_hash)
        for p in args.pairs.split(",")
        if p
        for layout in args.layouts.split(",")
    ]
    setups += [
        build(int(p), layout == "shared", storyteller, password_hash, tablet=True)
        for p in args.tablet_pairs.split(",")
        if p
        for layout in args.layouts.split(",")
    ]
    Path(args.out).write_text(
        json.dumps({"vendor": connection.vendor, "setups": setups}), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
