"""The settings of local runs: the `newsdesk` command and the local runtime (newsdesk_local)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from newsdesk.core.settings.table import PATH, ZONE, setting

# Where the schedules run and the editors read: the command line prints times in it.
DEFAULT_TIMEZONE = "Asia/Seoul"


@dataclass(frozen=True)
class LocalSettings:
    data_dir: Path = setting(
        lambda: Path.home() / ".local/share/newsdesk",
        PATH,
        "local runs: the embedded database, the emulated AWS state, logs",
        env="NEWSDESK_DATA_DIR",
        shown="`~/.local/share/newsdesk`",
    )
    timezone: str = setting(
        DEFAULT_TIMEZONE,
        ZONE,
        "the command line's times, as a person reads and writes them: printed in it, and a "
        "TIME option without a zone read in it (a bad one is refused, exit 2); JSON, logs and "
        "stored times stay UTC",
        env="NEWSDESK_TIMEZONE",
    )
