"""PostgreSQL: one connection per container, reused and re-opened when it has gone bad. Every
psycopg2 error leaves here as a StoreError. In AWS the DSN comes from the function's own
secret (its database role, through RDS Proxy, over TLS verified against the Amazon root CAs
shipped beside this module), locally from ``DATABASE_URL``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg2
import psycopg2.errors
import psycopg2.extensions
from aws_lambda_powertools.utilities import parameters

from newsdesk.core.errors import SettingsError, StoreDataError, StoreError
from newsdesk.core.settings import Settings

CONNECT_TIMEOUT_SECONDS = 5
# RDS Proxy's certificates come from ACM and chain to Amazon Trust Services' roots: these,
# taken from certifi's bundle (`make amazon-roots`, checked by tests/test_database_tls.py).
AMAZON_ROOT_CAS = Path(__file__).with_name("amazon-root-cas.pem")


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


def checked_url(url: str, variable: str = "DATABASE_URL") -> str:
    """``url`` if libpq can read it (a ``postgresql://`` URI or ``key=value`` pairs), else a
    SettingsError that names ``variable`` (libpq's own words name neither)."""
    try:
        psycopg2.extensions.parse_dsn(url)
    except psycopg2.ProgrammingError as e:
        raise SettingsError(
            f"{variable}: not a PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE, or "
            f"key=value pairs): {_first_line(e)}"
        ) from None
    return url


def database_from(settings: Settings) -> Database:
    if settings.database_url:
        url = checked_url(settings.database_url)
        return Database(lambda: url)
    if settings.db_secret_arn:
        arn, host, port, name, rootcert = (
            settings.db_secret_arn,
            settings.db_host,
            settings.db_port,
            settings.db_name,
            settings.db_sslrootcert,
        )
        return Database(lambda: dsn_from_secret(arn, host, port, name, rootcert))
    raise SettingsError("set DATABASE_URL (or DB_SECRET_ARN and DB_HOST in AWS)")


def read_secret(arn: str) -> dict[str, Any]:
    """A database secret: a JSON object with at least ``username`` and ``password``.
    Powertools caches it for five minutes, so a changed password is picked up on the next
    reconnect."""
    secret = parameters.get_secret(arn, transform="json", max_age=300)
    if not isinstance(secret, dict) or not {"username", "password"} <= secret.keys():
        raise SettingsError(f"secret {arn}: not a JSON object with a username and a password")
    return secret


def dsn_from_secret(
    arn: str, host: str | None, port: int, name: str, rootcert: Path | None = None
) -> str:
    """A DSN from the secret's username and password. The function's secrets hold only those
    two, so host, port and database come from the function's environment (the RDS Proxy
    endpoint), else from the secret. The server's certificate must chain to ``rootcert``
    (DB_SSLROOTCERT; by default the Amazon root CAs) and name the host (verify-full)."""
    secret = read_secret(arn)
    if host is None:  # an RDS-format secret that carries its own address
        host, port, name = secret.get("host"), secret.get("port", port), secret.get("dbname", name)
    if not host:
        raise SettingsError("DB_HOST is not set and the secret names no host")
    user, password = (quote(str(secret[key]), safe="") for key in ("username", "password"))
    roots = quote(str(rootcert or AMAZON_ROOT_CAS), safe="")
    return (
        f"postgresql://{user}:{password}@{host}:{port}/{name}"
        f"?sslmode=verify-full&sslrootcert={roots}"
    )
