"""The database's settings: where PostgreSQL is and how to log in (newsdesk.storage.database)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from newsdesk.core.settings.table import DATABASE_USERS, INTEGER, PATH, TEXT, setting


@dataclass(frozen=True)
class StorageSettings:
    database_url: str | None = setting(
        None,
        TEXT,
        "PostgreSQL URI; in AWS empty (the secret and the proxy apply), set by `env.json` "
        "for `sam local invoke`",
        DATABASE_USERS,
        shown="unset: the embedded PostgreSQL locally",
    )
    db_secret_arn: str | None = setting(
        None,
        TEXT,
        "in AWS, instead of `DATABASE_URL`: a Secrets Manager secret with username and "
        "password (the function's own database role's; the migrate function's is RDS's "
        "managed master secret)",
        DATABASE_USERS,
    )
    db_host: str | None = setting(
        None,
        TEXT,
        "with `DB_SECRET_ARN`: where to connect (the RDS Proxy endpoint); an RDS-format "
        "secret with its own host is used as it is",
        DATABASE_USERS,
    )
    db_port: int = setting(
        5432,
        INTEGER,
        "with `DB_SECRET_ARN`: the port",
        DATABASE_USERS,
        in_template=False,
        minimum=1,
        maximum=65535,
    )
    db_name: str = setting("newsdesk", TEXT, "with `DB_SECRET_ARN`: the database", DATABASE_USERS)
    db_sslrootcert: Path | None = setting(
        None,
        PATH,
        "with `DB_SECRET_ARN`: the CA certificates the proxy's certificate must chain to "
        "(`sslmode=verify-full`, and it must name `DB_HOST`)",
        DATABASE_USERS,
        in_template=False,
        shown="unset: the Amazon root CAs shipped with the package "
        "(`newsdesk.storage.database.AMAZON_ROOT_CAS`)",
    )
