"""Build the fan-out benchmark's scene in the bench database; write what the driver needs.

``python bench/fanout_setup.py OUT.json --phones 1000 --target-bytes 2048 --real-logins 4``,
run with the bench database in the environment (``SQLITE_PATH`` or ``DATABASE_URL``). It
migrates, makes a storyteller, a chronicle with an open game night and a scene (through the
services), and joins players (``combat.services.scene_join``) until the players' fragment
(``fragments.players_state``) is about ``--target-bytes``. Phones are spread over those
players (a player may have several phones; every phone has its own session). The first
``--real-logins`` phones and the storyteller log in through the real login form later (the
driver does it); the others get a session made here by ``SessionStore``, exactly what
``django.contrib.auth.login`` stores (user id, backend, the password hash's HMAC).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import import_module
from pathlib import Path

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
from django.db import connection, transaction  # noqa: E402

from characters.models import Character, Chronicle, GameNight  # noqa: E402
from characters.roles import storytellers_group  # noqa: E402
from combat import fragments, live, services  # noqa: E402

PASSWORD = "bench-fanout-password"
SITUATION = (
    "Rain hammers the skylights of the Elysium; the Prince's herald counts the guests at the "
    "door while two Brujah argue over a missing ghoul. Somewhere below, the sewer grate rattles. "
    "Every clan has sent someone; nobody has sat down; the harpies take notes on everything."
)
NAMES = [
    "Alessandra Vitale",
    "Bartholomew Crane",
    "Cordelia Ashworth",
    "Dmitri Volkov",
    "Evangeline Marsh",
    "Fitzgerald Monroe",
    "Genevieve Laurent",
    "Horatio Blackwood",
]
BACKEND = "django.contrib.auth.backends.ModelBackend"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--phones", type=int, default=1000)
    parser.add_argument("--target-bytes", type=int, default=2048)
    parser.add_argument("--real-logins", type=int, default=4)
    parser.add_argument("--max-players", type=int, default=200)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    # Building the scene is not measured: nobody listens yet, so skip the pushes.
    live.scene_changed = lambda *a, **k: None
    live.presence_changed = lambda *a, **k: None

    users = get_user_model()
    password_hash = make_password(PASSWORD)  # one hash for every bench user: hashing is slow
    storyteller = users.objects.create(
        username="bench_storyteller", password=password_hash, is_staff=True
    )
    storyteller.groups.add(storytellers_group())
    chronicle = Chronicle.objects.create(name="Bench fan-out", ruleset="met_classic")
    chronicle.storytellers.add(storyteller)
    GameNight.objects.create(chronicle=chronicle, number=1, opened_by=storyteller)
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium, the fan-out")
    scene = services.scene_set_situation(scene=scene, by=storyteller, situation=SITUATION)

    players = []
    html = ""
    while len(players) < args.max_players:
        i = len(players)
        user = users.objects.create(username=f"bench_player_{i:03d}", password=password_hash)
        character = Character.objects.create(
            chronicle=chronicle,
            name=f"{NAMES[i % len(NAMES)]} {i:03d}",
            player=user,
            creature="vampire",
            willpower=5,
            blood=10,
        )
        services.scene_join(code=scene.join_code, user=user, character=character)
        players.append(user)
        scene.refresh_from_db()
        html = fragments.players_state(scene)
        if len(html.encode()) >= args.target_bytes:
            break

    engine = import_module(settings.SESSION_ENGINE)
    phones = []
    with transaction.atomic():
        for j in range(args.phones):
            user = players[j % len(players)]
            if j < args.real_logins:
                phones.append({"user": user.username, "session": None})
                continue
            session = engine.SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = BACKEND
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            phones.append({"user": user.username, "session": session.session_key})

    scene.refresh_from_db()
    Path(args.out).write_text(
        json.dumps(
            {
                "scene": scene.pk,
                "code": scene.join_code,
                "seq": scene.seq,
                "storyteller": storyteller.username,
                "password": PASSWORD,
                "players": len(players),
                "phones": phones,
                "fragment": html,
                "fragment_bytes": len(html.encode()),
                "vendor": connection.vendor,
            }
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
