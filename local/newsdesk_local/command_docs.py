"""docs/commands.md's ``--help`` blocks, written from the parser (``newsdesk_local.cli``), so
that the manual cannot drift from the commands: ``make docs`` (``python -m
newsdesk_local.command_docs``) rewrites them in place, and tests/test_command_docs.py fails
when the file differs from what this writes.

Each block follows its marker, ``<!-- generated: newsdesk COMMAND --help -->``, and is the
command's help at a fixed width (the terminal's would vary); the prose around the blocks is the
manual's own. A command without a marker gets a section of its own at the end, for its prose
to be written; a marker naming no command is refused."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from newsdesk_local.cli import parser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
WIDTH = 100  # the help's columns: the repository's line length
BLOCK = re.compile(r"<!-- generated: (?P<command>[a-z -]+?) --help -->\n```text\n.*?```\n", re.S)


class CommandDocsError(Exception):
    """docs/commands.md names a command the parser does not have."""


def helps(width: int = WIDTH) -> dict[str, str]:
    """Every command's ``--help`` (``newsdesk``, ``newsdesk feeds``, ``newsdesk feeds reset``,
    …), in the order ``newsdesk --help`` lists them, subcommands after their command."""
    return {name: _help(command, width) for name, command in _commands(parser())}


def _commands(command: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield command.prog, command
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subcommand in dict.fromkeys(action.choices.values()):
                yield from _commands(subcommand)


def _help(command: argparse.ArgumentParser, width: int) -> str:
    command.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=width)
    return command.format_help()


def block(name: str, text: str) -> str:
    return f"<!-- generated: {name} --help -->\n```text\n{text}```\n"


def render(document: str, width: int = WIDTH) -> str:
    """``document`` with every block as the parser writes it now, and a section appended for
    each command it has no block for."""
    current = helps(width)
    unknown = [m["command"] for m in BLOCK.finditer(document) if m["command"] not in current]
    if unknown:
        raise CommandDocsError(f"docs/commands.md: no such command: {', '.join(unknown)}")
    written = BLOCK.sub(lambda m: block(m["command"], current[m["command"]]), document)
    present = {m["command"] for m in BLOCK.finditer(document)}
    for name in current:
        if name not in present:
            written += f"\n## `{name}`\n\n{block(name, current[name])}"
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite docs/commands.md (or the file given) in place; say whether it changed."""
    path = Path(argv[0]) if argv else DOCS
    before = path.read_text(encoding="utf-8")
    after = render(before)
    if after != before:
        path.write_text(after, encoding="utf-8")
    print(f"{path}: {'written' if after != before else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
