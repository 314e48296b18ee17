"""SIGTERM and SIGHUP handled as Ctrl-C is: ``kill PID``, ``timeout``, a cron or systemd stop
and a closed terminal end a command the way out a KeyboardInterrupt takes, through every
``with`` it is in (the local state saved, PostgreSQL, the AWS emulator and the containers
stopped), with one line and the shell's code for the signal: 143 for SIGTERM, 129 for SIGHUP.

The signal is raised in the main thread as ``Stopped``, a BaseException as KeyboardInterrupt
is, so that no ``except Exception`` takes it for a failure. Once one has been raised, more of
them are let go by: the way out, which saves and stops, is not cut short by a second ``kill``
(SIGKILL still is, and the next start recovers what it leaves: ``newsdesk_local.services``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

HANDLED = (signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """A command stopped by a signal (SIGTERM, SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """As a shell reports a process the signal ended: 128 and its number."""
        return 128 + self.signum


# what ends a command from outside, Ctrl-C included: the containers of a pool are stopped too
INTERRUPTIONS = (KeyboardInterrupt, Stopped)


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``Stopped`` in the main thread while inside; the handlers
    before are restored after. Elsewhere than in the main thread (a test's), nothing changes:
    only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in HANDLED}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
