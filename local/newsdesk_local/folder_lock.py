"""The local data folder has one owner at a time: ``NEWSDESK_DATA_DIR/newsdesk.lock``, held with
``fcntl.flock`` by the command that runs the local runtime over the folder (its PostgreSQL, its
saved AWS state, its buckets), so that two commands never keep two copies of one state, each
writing its own back when it stops. The kernel lets go of the lock when its holder ends, however
it ends (SIGKILL included): a lock is never stale. The file names the holder (its pid and
command) for the one line a second command stops with, and a ``newsdesk stack`` adds the
addresses of the services it runs, through which a second command works instead of stopping
(``newsdesk_local.commands.context.owned``).

Commands that only read the folder take no lock: ``issues``, ``articles`` and ``events`` read
PostgreSQL (pgserver shares a running server between processes), ``feeds`` the saved state (or
a running stack's table)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from newsdesk.core.errors import ConfigError
from newsdesk_local.data_dir import writable

LOCK_FILE = "newsdesk.lock"


class FolderInUseError(ConfigError):
    """The data folder is another command's (exit 2, one line naming it)."""


@dataclass(frozen=True)
class Holder:
    """Who holds a data folder, as its lock file says."""

    pid: int | None
    command: str
    services: dict[str, str] = field(default_factory=dict)  # a stack's, once it serves

    @classmethod
    def read(cls, text: str) -> Holder:
        """A half-written or foreign file reads as an unnamed holder."""
        try:
            written = json.loads(text)
            return cls(int(written["pid"]), str(written["command"]), dict(written["services"]))
        except (ValueError, TypeError, KeyError):
            return cls(None, "another newsdesk command")

    def text(self) -> str:
        return json.dumps({"pid": self.pid, "command": self.command, "services": self.services})

    def named(self) -> str:
        return self.command if self.pid is None else f"{self.command} (pid {self.pid})"


class FolderLock:
    """``folder``'s lock, held by this process for ``command`` (e.g. ``newsdesk collect``)."""

    def __init__(self, folder: Path, command: str) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self.holder = Holder(os.getpid(), command)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Held, or a FolderInUseError naming the holder."""
        try:
            fd = os.open(writable(self.folder) / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise ConfigError(
                f"the data folder {self.folder} cannot be used: {e.strerror or e}; "
                "set NEWSDESK_DATA_DIR to a folder you can write"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = Holder.read(os.pread(fd, 65536, 0).decode("utf-8", "replace"))
            os.close(fd)
            raise FolderInUseError(in_use(self.folder, holder)) from None
        self._fd = fd
        self._write(self.holder)

    def publish(self, services: dict[str, str]) -> None:
        """The services this holder runs, for a second command to work through."""
        self.holder = Holder(self.holder.pid, self.holder.command, services)
        self._write(self.holder)

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)  # the file stays: removing it would race the next holder
        os.close(self._fd)  # and so the lock goes
        self._fd = None

    def _write(self, holder: Holder) -> None:
        assert self._fd is not None
        data = holder.text().encode("utf-8")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def in_use(folder: Path, holder: Holder) -> str:
    return (
        f"the data folder {folder} is in use by {holder.named()}; stop it or use another "
        "NEWSDESK_DATA_DIR"
    )


def holder(folder: Path) -> Holder | None:
    """Who holds ``folder`` now, as its lock file says, if the process it names is alive
    (nothing is locked or created: a look does not make a command starting meanwhile fail)."""
    try:
        found = Holder.read((folder / LOCK_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if found.pid is None:
        return None
    try:
        os.kill(found.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return found
