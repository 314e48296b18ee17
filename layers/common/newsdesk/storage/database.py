"""PostgreSQL: one connection per container, reused and re-opened when it has gone bad. Every
psycopg2 error leaves here as a StoreError. In AWS the DSN comes from the database's managed
secret (through RDS Proxy), locally from ``DATABASE_URL``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from urllib.parse import quote

import psycopg2
import psycopg2.errors
import psycopg2.extensions
from aws_lambda_powertools.utilities import parameters

from newsdesk.core.errors import SettingsError, StoreDataError, StoreError
from newsdesk.core.settings import Settings

CONNECT_TIMEOUT_SECONDS = 5


class Database:
    """Holds the container's connection. ``dsn`` is a callable so that a secret is fetched only
    when a connection is actually opened."""

    def __init__(self, dsn: Callable[[], str]) -> None:
        self._dsn = dsn
        self._conn: psycopg2.extensions.connection | None = None

    def connection(self) -> psycopg2.extensions.connection:
        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg2.connect(
                    self._dsn(),
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    application_name="newsdesk",
                )
            except psycopg2.Error as e:
                raise StoreError(f"cannot connect to PostgreSQL: {e}".strip()) from e
        return self._conn

    @contextlib.contextmanager
    def transaction(self) -> Iterator[psycopg2.extensions.cursor]:
        """A cursor in one transaction: committed on success, rolled back on any error. A
        connection-level failure drops the connection so the next call opens a new one."""
        conn = self.connection()
        try:
            with conn, conn.cursor() as cursor:
                yield cursor
        except (psycopg2.errors.ProgramLimitExceeded, psycopg2.DataError) as e:
            # an OperationalError by class (54), but the data's, not the connection's
            raise StoreDataError(f"PostgreSQL refused the data: {_first_line(e)}") from e
        except (psycopg2.OperationalError, psycopg2.InterfaceError) as e:
            self.close()
            raise StoreError(f"PostgreSQL connection failed: {e}".strip()) from e
        except psycopg2.Error as e:
            raise StoreError(f"PostgreSQL error: {e}".strip()) from e

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg2.Error):
                self._conn.close()
            self._conn = None


def _first_line(error: psycopg2.Error) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def database_from(settings: Settings) -> Database:
    if settings.database_url:
        url = settings.database_url
        return Database(lambda: url)
    if settings.db_secret_arn:
        arn, host, port, name = (
            settings.db_secret_arn,
            settings.db_host,
            settings.db_port,
            settings.db_name,
        )
        return Database(lambda: dsn_from_secret(arn, host, port, name))
    raise SettingsError("set DATABASE_URL (or DB_SECRET_ARN and DB_HOST in AWS)")


def dsn_from_secret(arn: str, host: str | None, port: int, name: str) -> str:
    """A DSN from the secret's username and password. RDS-managed master secrets hold only
    those two, so host, port and database come from the function's environment (the RDS Proxy
    endpoint), else from the secret. Powertools caches the secret for five minutes, so a
    rotated password is picked up on the next reconnect."""
    secret = parameters.get_secret(arn, transform="json", max_age=300)
    if not isinstance(secret, dict):
        raise SettingsError(f"DB_SECRET_ARN {arn}: secret is not a JSON object")
    if host is None:  # an RDS-format secret that carries its own address
        host, port, name = secret.get("host"), secret.get("port", port), secret.get("dbname", name)
    if not host:
        raise SettingsError("DB_HOST is not set and the secret names no host")
    user, password = (quote(str(secret[key]), safe="") for key in ("username", "password"))
    return f"postgresql://{user}:{password}@{host}:{port}/{name}?sslmode=require"
