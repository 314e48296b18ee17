"""The local PostgreSQL: pgserver under ``NEWSDESK_DATA_DIR/pg`` (on a Unix socket) when
``DATABASE_URL`` is not set; a server a killed run left behind stopped before a new one starts;
and the database a read-only command reads (``read_only_database``: nothing created or
migrated)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.settings import Settings
from newsdesk.storage.database import Database, checked_url
from newsdesk.storage.migrate import pending
from newsdesk_local import pgserver_log
from newsdesk_local.data_dir import existing, writable

PG_FOLDER = "pg"  # pgserver's


PG_HANDLES = ".handle_pids.json"  # in it: the pids of the processes using its server


def pgserver_at(data_dir: Path) -> Any:
    pgserver = _pgserver_package()
    recover_postgres(data_dir / PG_FOLDER)
    with pgserver_log.starting(data_dir / PG_FOLDER):  # its log off the terminal
        return pgserver.get_server(data_dir / PG_FOLDER, cleanup_mode="stop")


def _pgserver_package() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        try:
            import pgserver

            pgserver_log.quiet()
        except ImportError:
            raise ConfigError(
                "DATABASE_URL is not set and pgserver is not installed: "
                "pip install 'newsdesk[local]', or point DATABASE_URL at a PostgreSQL"
            ) from None
    return pgserver


def clear_folder(folder: Path, keep: str) -> None:
    """Everything in ``folder`` but ``keep`` removed (the demo starts from nothing), the
    PostgreSQL a killed run left running on it stopped first: a server whose files are removed
    keeps running, and pgserver's next start there fails on it."""
    _pgserver_package()
    recover_postgres(folder / PG_FOLDER)
    for entry in folder.iterdir():
        if entry.name == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def recover_postgres(folder: Path) -> None:
    """What a killed run (SIGKILL) left in pgserver's folder, made right before a start.
    pgserver keeps the pids of the processes that use its server in ``.handle_pids.json`` and
    stops the server when the last of them lets go: a dead one's pid never goes, and no later
    command would stop that server. So the pids of processes that are gone are forgotten, and
    a server that no living process uses — the killed run's orphan — is stopped (PostgreSQL's
    fast shutdown, ``pg_ctl stop``), so that this start has a server of its own. Under
    pgserver's lock, which its starts and stops take."""
    if not folder.is_dir():
        return
    folder = folder.resolve()  # as pgserver names it, and its server's command line
    from pgserver._commands import pg_ctl
    from pgserver.postgres_server import PostgresServer

    with PostgresServer._lock:
        handles = folder / PG_HANDLES
        try:
            pids = [int(pid) for pid in json.loads(handles.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError):
            pids = []
        living = [pid for pid in pids if _alive(pid)]
        if living != pids:
            handles.write_text(json.dumps(living), encoding="utf-8")
        orphan = _postmaster(folder)
        if living or orphan is None:
            return
        try:
            user = "pgserver" if os.geteuid() == 0 else None  # as pgserver runs it as root
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=folder, user=user, timeout=60)
        except (subprocess.SubprocessError, OSError):
            raise InfrastructureError(
                f"the PostgreSQL of an earlier run in {folder} (pid {orphan}) did not stop: "
                f"stop it (kill {orphan}) and try again"
            ) from None


def _postmaster(folder: Path) -> int | None:
    """The pid of a PostgreSQL running on ``folder`` (its postmaster.pid's), if one is: a
    process of that pid that is not a postgres of this folder (the pid reused since) is not."""
    import psutil  # type: ignore[import-untyped]  # pgserver's own dependency

    try:
        lines = (folder / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        command = psutil.Process(int(lines[0])).cmdline()
    except (OSError, ValueError, IndexError, psutil.Error):
        return None
    if not command or Path(command[0]).name != "postgres" or str(folder) not in command:
        return None
    return int(lines[0])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: alive
        return True
    return True


@contextlib.contextmanager
def read_only_database(settings: Settings) -> Iterator[Database | None]:
    """PostgreSQL for a command that only reads it: ``DATABASE_URL``, else the embedded one
    if a run has made it (None if none has: nothing is stored). No AWS, no migrations, no
    folder created; a schema behind this release's, or a data folder that does not exist or
    cannot be read, is a configuration error."""
    server = None
    url = checked_url(settings.database_url) if settings.database_url else None
    if url is None:
        if not (existing(settings.data_dir) / PG_FOLDER).is_dir():
            yield None
            return
        writable(settings.data_dir)  # the embedded PostgreSQL writes there even to be read
        server = pgserver_at(settings.data_dir)
        url = str(server.get_uri())
    database = Database(lambda: url)
    try:
        behind = pending(database)
        if behind:
            raise ConfigError(
                f"the database's schema is behind this release ({', '.join(behind)} not "
                "applied): run `newsdesk migrate`"
            )
        yield database
    finally:
        database.close()
        if server is not None:
            server.cleanup()
