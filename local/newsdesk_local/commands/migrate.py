"""`newsdesk migrate`: the SQL migrations applied to the database every command uses
(DATABASE_URL, else the embedded one); the migrations applied, or ``up to date``."""

from __future__ import annotations

import argparse
from typing import TextIO

from newsdesk_local.commands import arguments, context


def add(commands: arguments.Commands) -> None:
    migrate = commands.add_parser("migrate", help="apply the PostgreSQL migrations")
    migrate.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    # the runtime's PostgreSQL, migrated as it starts
    with context.runtime(env, "migrate") as runtime:
        applied = runtime.migrations_applied
    print(f"applied: {', '.join(applied)}" if applied else "up to date", file=out)
    return 0
