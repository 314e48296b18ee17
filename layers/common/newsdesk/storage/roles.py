"""The database roles of the functions that use the database (migration 0007 creates them and
grants each what its stores run). In AWS each role's password is generated into a secret of
its own (the template's ``*DatabaseSecret``), which RDS Proxy and that function alone read;
the migrate function, connected as the tables' owner, gives every role the password of its
secret after the migrations. The password is sent as a SCRAM-SHA-256 verifier computed here,
never as plain text that a statement log could keep."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import psycopg2.extensions
from psycopg2 import sql

from newsdesk.core.errors import SettingsError
from newsdesk.storage.database import Database

WORKER, EXTRACTOR, CLUSTER = "newsdesk_worker", "newsdesk_extractor", "newsdesk_cluster"
READER = "newsdesk_reader"  # the read-only function's (issue 40, migration 0015)
ROLES = (WORKER, EXTRACTOR, CLUSTER, READER)


def set_passwords(database: Database, secrets: Iterable[Mapping[str, Any]]) -> list[str]:
    """Give each secret's role (its ``username``, one of ``ROLES``) the secret's ``password``;
    return the roles, in one transaction. A secret naming any other user is refused before
    anything changes: the migrate function must never reset another login's password."""
    credentials = [(str(s["username"]), str(s["password"])) for s in secrets]
    strangers = sorted({user for user, _ in credentials} - set(ROLES))
    if strangers:
        raise SettingsError(
            f"a role secret names {', '.join(strangers)}, not one of {', '.join(ROLES)}"
        )
    with database.transaction() as cursor:
        for user, password in credentials:
            verifier = psycopg2.extensions.encrypt_password(
                password, user, cursor.connection, "scram-sha-256"
            )
            cursor.execute(
                sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD %s").format(sql.Identifier(user)),
                (verifier,),
            )
    return [user for user, _ in credentials]
