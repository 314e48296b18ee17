"""pgserver's log kept off the terminal, and a failed start of the embedded PostgreSQL in one
line. pgserver logs what its commands print (``initdb``'s thirty lines, ``pg_ctl``'s server
log) at ERROR when one fails, and with no handler of its own Python's last resort writes that
to standard error: a Ctrl-C in the first seconds of a first run, which stops ``initdb``, printed
it all before `newsdesk: interrupted`. Its records go to a handler that keeps the last error's
words instead (``starting``), and a command that failed is an InfrastructureError naming it and
what it said (``initdb: error: directory … exists but is not empty``)."""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

from newsdesk.core.errors import InfrastructureError

LOGGER = "pgserver"


class _LastError(logging.Handler):
    """Keeps the words of the last error pgserver logged: its commands' ``… error: …`` line."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.words: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        lines = record.getMessage().splitlines()
        said = [line.strip() for line in lines if "error:" in line and line.strip() != "error:"]
        self.words = said[-1] if said else None


_HANDLER = _LastError()


def quiet() -> None:
    """pgserver's records to ``_HANDLER``, not to the terminal (once, whoever asks)."""
    logger = logging.getLogger(LOGGER)
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)


@contextlib.contextmanager
def starting(folder: Path) -> Iterator[None]:
    """A start of the embedded PostgreSQL in ``folder``: a command of pgserver's that fails is
    an InfrastructureError in one line."""
    quiet()
    _HANDLER.words = None
    try:
        yield
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        command = Path(str(e.cmd[0] if isinstance(e.cmd, list | tuple) else e.cmd)).name
        failed = "timed out" if isinstance(e, subprocess.TimeoutExpired) else "failed"
        said = f": {_HANDLER.words}" if _HANDLER.words else ""
        raise InfrastructureError(
            f"the embedded PostgreSQL in {folder} did not start, {command} {failed}{said} "
            "(set DATABASE_URL to use another)"
        ) from None
