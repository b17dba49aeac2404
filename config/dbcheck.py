"""Say in one sentence why the configured database cannot be used, before anything waits on it.

Without this, a ``DATABASE_URL`` naming a database that does not exist shows as a 10 s pool
timeout and pages of tracebacks. ``serve``, ``venue`` and ``migrate`` ask first.
"""

from __future__ import annotations

from django.conf import settings

CONNECT_TIMEOUT = 5  # seconds


def database_problem(alias: str = "default") -> str | None:
    """One sentence when the database cannot be reached or does not exist, else None.
    (SQLite makes its file when first used: only PostgreSQL can be missing.)"""
    db = settings.DATABASES[alias]
    if not db["ENGINE"].endswith("postgresql"):
        return None
    import psycopg

    name, user = db.get("NAME") or "", db.get("USER") or ""
    host, port = db.get("HOST") or "localhost", str(db.get("PORT") or 5432)
    where = f"{host}:{port}"
    try:
        psycopg.connect(
            dbname=name,
            user=user or None,
            password=db.get("PASSWORD") or None,
            host=db.get("HOST") or None,
            port=db.get("PORT") or None,
            connect_timeout=CONNECT_TIMEOUT,
        ).close()
    except psycopg.OperationalError as error:
        text = str(error)
        if f'database "{name}" does not exist' in text:
            return (
                f'The database "{name}" named by DATABASE_URL does not exist on the PostgreSQL '
                f"server at {where}: create it (createdb -h {host} -p {port} {name}) or "
                "correct DATABASE_URL."
            )
        if "password authentication failed" in text or (
            "role" in text and "does not exist" in text
        ):
            return (
                f'The PostgreSQL server at {where} refused the user "{user}" named by '
                "DATABASE_URL: check its user name and password."
            )
        return (
            f"The PostgreSQL server at {where} named by DATABASE_URL does not answer: start it, "
            "or correct DATABASE_URL."
        )
    return None
