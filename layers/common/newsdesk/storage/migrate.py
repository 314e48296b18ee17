"""Plain SQL migrations in ``migrations/``, applied in file-name order, each once, recorded in
``schema_migration``. An advisory lock keeps two concurrent runs from racing."""

from __future__ import annotations

from importlib import resources

from newsdesk.storage.database import Database

_LOCK_KEY = 0x6E657773  # "news"


def available() -> list[tuple[str, str]]:
    folder = resources.files("newsdesk.storage").joinpath("migrations")
    files = sorted(
        (item for item in folder.iterdir() if item.name.endswith(".sql")), key=lambda i: i.name
    )
    return [(item.name.removesuffix(".sql"), item.read_text(encoding="utf-8")) for item in files]


def migrate(database: Database) -> list[str]:
    """Apply what is not applied yet; return the versions applied now."""
    applied_now: list[str] = []
    with database.transaction() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        cursor.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migration (
                version    TEXT PRIMARY KEY,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )
            """
        )
        cursor.execute("SELECT version FROM schema_migration")
        done = {row[0] for row in cursor.fetchall()}
        for version, sql in available():
            if version in done:
                continue
            cursor.execute(sql)
            cursor.execute("INSERT INTO schema_migration (version) VALUES (%s)", (version,))
            applied_now.append(version)
    return applied_now


def pending(database: Database) -> list[str]:
    """The versions not applied yet, changing nothing (for commands that only read)."""
    with database.transaction() as cursor:
        cursor.execute("SELECT to_regclass('schema_migration') IS NOT NULL")
        row = cursor.fetchone()
        done: set[str] = set()
        if row is not None and row[0]:
            cursor.execute("SELECT version FROM schema_migration")
            done = {r[0] for r in cursor.fetchall()}
    return [version for version, _ in available() if version not in done]
