"""The ``newsdesk`` command: local rounds and operator tasks (docs/architecture.md).

Exit codes: 0 done; 1 an outlet's message failed (SQS would retry it), or for `sources check
--live` a feed failed; 2 a configuration error or a service that cannot be reached (one line on
standard error); 3 feeds were attempted and not one succeeded. A closed pipe (``| head``) ends
the command quietly, with 0. Ctrl-C ends it with 130, SIGTERM with 143 and SIGHUP with 129, each
the same way (the local state saved, what it started stopped: ``newsdesk_local.signals``) and
with one line. ``newsdesk`` alone prints the help on standard error, exit 2, as argparse does a
usage error (a script that forgot its command does not go on as if it had run one). Terminal
times are in NEWSDESK_TIMEZONE, and so are the times the options
take (TIME: ISO 8601, the printed form, an age such as 24h, today, yesterday); JSON's are UTC.

The local data folder (NEWSDESK_DATA_DIR) has one owner at a time: collect, reparse, migrate,
cluster, reextract, dlq redrive, feeds reset and stack hold it while they run (demo holds its
own, NEWSDESK_DATA_DIR/demo). Another of them stops in one line naming the holder, exit 2, or,
while `newsdesk stack` holds the folder, works through the stack's AWS and PostgreSQL. issues,
articles, events and feeds only read, and run beside any holder (feeds reads a running
stack's table).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import TextIO

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.times import utc_now
from newsdesk_local.commands import (
    arguments,
    articles,
    cluster,
    collect,
    context,
    demo,
    dlq,
    dossier,
    embed,
    events,
    extract_text,
    feeds,
    issues,
    migrate,
    reextract,
    reparse,
    sources,
    stack,
)
from newsdesk_local.output import EXIT_CONFIG, EXIT_INTERRUPTED, EXIT_OK, error, terminal_text
from newsdesk_local.signals import Stopped, stopping_on_signals

# `newsdesk --help`'s words (the docstring above is for readers of the code, in its markup)
DESCRIPTION = (
    "Local rounds of newsdesk's functions, and operator tasks. Exit codes: 0 done; 1 an "
    "outlet's message failed (SQS would retry it), or for 'sources check --live' a feed failed; "
    "2 a configuration error or a service that cannot be reached (one line on standard error); "
    "3 feeds were attempted and not one succeeded; 130 interrupted. A closed pipe (| head) ends "
    "a command quietly, with 0. Terminal times are in NEWSDESK_TIMEZONE; JSON's are UTC. "
    "'newsdesk' alone prints this help on standard error, exit 2, as for any usage error."
)

# in the order `newsdesk --help` lists them (newsdesk_local.commands: one module each)
COMMANDS = (
    collect,
    reparse,
    migrate,
    sources,
    cluster,
    embed,
    events,
    issues,
    dossier,
    articles,
    reextract,
    extract_text,
    dlq,
    feeds,
    demo,
    stack,
)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    env = context.environment(environ)
    out = _utf8(sys.stdout)
    if not (sys.argv[1:] if argv is None else argv):  # no command: the help, not its usage
        sys.stderr.write(parser().format_help())
        return EXIT_CONFIG
    try:
        # a time option is read in the zone the output prints in, against the command's start
        with arguments.reading_times(lambda: context.zone(env), utc_now()):
            args = parser().parse_args(argv)
        with stopping_on_signals():
            # text is shown as a terminal should show it; JSON escapes as JSON does
            shown = out if getattr(args, "json", False) else terminal_text(out)
            code: int = args.run(args, env, shown)
            out.flush()
    except (ConfigError, InfrastructureError) as e:
        error(str(e))
        return EXIT_CONFIG
    except BrokenPipeError:  # the reader went away (| head): end quietly
        _silence(out)
        return EXIT_OK
    except KeyboardInterrupt:  # the local state was saved on the way out
        error("interrupted")
        return EXIT_INTERRUPTED
    except Stopped as e:  # as Ctrl-C: the local state was saved on the way out
        _last_words(f"stopped by {e.name}", out)
        return e.exit_code
    return code


def parser() -> argparse.ArgumentParser:
    """``newsdesk``'s parser, each command's added by its module."""
    newsdesk = argparse.ArgumentParser(prog="newsdesk", description=DESCRIPTION)
    newsdesk.add_argument(
        "--version", action="version", version=f"newsdesk {version()}", help="print the version"
    )
    commands = newsdesk.add_subparsers(required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add(commands)
    return newsdesk


def version() -> str:
    """The installed package's version (its metadata: pyproject.toml's)."""
    try:
        return metadata.version("newsdesk")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


def _utf8(out: TextIO) -> TextIO:
    """Standard output writes UTF-8 whatever the locale says (Korean titles, JSON)."""
    if isinstance(out, io.TextIOWrapper) and out.encoding.lower().replace("-", "") != "utf8":
        out.reconfigure(encoding="utf-8")
    return out


def _last_words(message: str, out: TextIO) -> None:
    """The one line, if there is still a terminal to read it (SIGHUP: it may be gone), and
    nothing left buffered for one that is not."""
    try:
        out.flush()
        error(message)
    except OSError:
        _silence(out)
        _silence(sys.stderr)


def _silence(out: TextIO) -> None:
    """What is still buffered for a closed pipe goes nowhere, not into a second error when
    the interpreter flushes it on exit."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
