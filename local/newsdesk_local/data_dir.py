"""NEWSDESK_DATA_DIR checked before a command uses it. A folder that cannot be made, entered or
written (a file in its path, no permission, a read-only disk) is a configuration error in one
line (exit 2), not a traceback; and, for a command that only reads, not "nothing yet", nor is
a folder that does not exist (a mistyped NEWSDESK_DATA_DIR): only one that exists with nothing
in it has nothing yet.

A folder also remembers the sources file it was last collected with (``SOURCES_FILE``: its
path, written by `collect` and the demo), which `collect`, `feeds` and the other commands run
on it use unless told otherwise (``newsdesk_local.commands.context.sources_path``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from newsdesk.core.errors import SettingsError

VARIABLE = "NEWSDESK_DATA_DIR"
SOURCES_FILE = "sources-path.txt"  # the path of the sources file last collected with


def writable(folder: Path) -> Path:
    """``folder``, made if missing, once a file has been written there (and removed)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):  # permissions, a read-only disk, quotas
            pass
    except OSError as e:
        raise SettingsError(f"{VARIABLE}: cannot write {folder}: {_why(folder, e)}") from None
    return folder


def existing(folder: Path) -> Path:
    """``folder``, for a command that only reads it: one that does not exist is a SettingsError
    saying so and what makes one, as is one that cannot be read (``present``)."""
    if not present(folder):
        raise SettingsError(
            f"{VARIABLE}: there is no data folder at {folder}; a round makes one there "
            f"(`newsdesk collect`), the demo one of its own in {folder / 'demo'} (`newsdesk demo`)"
        )
    return folder


def present(folder: Path) -> bool:
    """Whether ``folder`` exists (False: nothing is kept yet); a SettingsError if it cannot be
    read."""
    try:
        with os.scandir(folder):
            pass
    except FileNotFoundError:
        return False
    except OSError as e:
        raise SettingsError(f"{VARIABLE}: cannot read {folder}: {_why(folder, e)}") from None
    return True


def remembered_sources(folder: Path) -> Path | None:
    """The sources file ``folder`` was last collected with, or None: the bundled one, or no
    collection yet (or no folder). A SettingsError if the note cannot be read."""
    note = folder / SOURCES_FILE
    try:
        text = note.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"{VARIABLE}: cannot read {note}: {e}") from None
    return Path(text) if text else None


def remember_sources(folder: Path, sources: Path | None) -> None:
    """``folder`` was collected with ``sources`` (None: the bundled file, which needs no
    note). ``folder`` exists: the command that collects has made it."""
    note = folder / SOURCES_FILE
    try:
        if sources is None:
            note.unlink(missing_ok=True)
        elif remembered_sources(folder) != sources.resolve():
            note.write_text(f"{sources.resolve()}\n", encoding="utf-8")
    except OSError as e:
        raise SettingsError(f"{VARIABLE}: cannot write {note}: {_why(folder, e)}") from None


def _why(folder: Path, error: OSError) -> str:
    """The words for ``error``: the file where a folder should be, if that is what it is."""
    for path in (folder, *folder.parents):
        if path.exists() and not path.is_dir():
            return f"{path} is a file, not a folder"
    if isinstance(error, FileNotFoundError) and folder.is_dir():  # /proc: no file can be made
        return "no file can be made there"
    return error.strerror or str(error)
