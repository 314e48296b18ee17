"""docs/commands.md's `--help` blocks are the parser's (newsdesk_local.command_docs, `make
docs`): the file fails this test when a command, an option or a help text changes and the
manual does not. And its examples run as written from the repository root, those that need
neither the network nor AWS."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from newsdesk_local.cli import main
from newsdesk_local.command_docs import DOCS, WIDTH, CommandDocsError, block, helps, render
from tests.conftest import ROOT

# the services an example must not be given: it runs on the data folder's own
OWN_SERVICES = ("DATABASE_URL", "AWS_ENDPOINT_URL", "SOURCES_PATH", "STATE_TABLE_NAME")

# argparse lays help out differently from Python 3.13 (its columns); the manual is written on
# the functions' Python, 3.12, whose layout 3.11 shares. Elsewhere the words are compared.
SAME_LAYOUT = sys.version_info[:2] in ((3, 11), (3, 12))


def words(text: str) -> str:
    return " ".join(text.split())


def test_docs_commands_md_is_what_the_parser_says():
    # GIVEN the manual as committed
    written = DOCS.read_text(encoding="utf-8")
    # WHEN its blocks are written again from the parser
    current = render(written)
    # THEN nothing changes: every command has its block, and each is the command's --help
    if SAME_LAYOUT:
        assert current == written, "docs/commands.md is out of date: run `make docs`"
    else:
        assert words(current) == words(written), "docs/commands.md is out of date"


@pytest.mark.parametrize("name", list(helps()))
def test_each_block_is_what_help_prints(name, monkeypatch, capsys):
    # GIVEN a terminal as wide as the manual's blocks (argparse leaves two columns)
    monkeypatch.setenv("COLUMNS", str(WIDTH + 2))
    # WHEN the command's --help is asked for
    with pytest.raises(SystemExit) as done:
        main([*name.split()[1:], "--help"])
    # THEN it prints the manual's block
    assert done.value.code == 0
    assert capsys.readouterr().out == helps()[name]


def test_a_changed_option_is_found():
    # GIVEN the manual with an option's help as it once was
    written = DOCS.read_text(encoding="utf-8")
    stale = written.replace("at most this many (50)", "at most this many (20)")
    assert stale != written
    # WHEN it is written again THEN the parser's words are back
    assert render(stale) == render(written)


def test_a_command_without_a_block_gets_a_section():
    # GIVEN a manual without the stack command's block
    written = render(DOCS.read_text(encoding="utf-8"))
    stack = block("newsdesk stack", helps()["newsdesk stack"])
    without = written.replace(stack, "")
    # WHEN it is written again THEN a section for the command is added at the end
    assert render(without).endswith(f"\n## `newsdesk stack`\n\n{stack}")


def test_a_block_of_no_command_is_refused():
    # GIVEN a block for a command the parser does not have
    written = DOCS.read_text(encoding="utf-8") + block("newsdesk nothing", "usage: nothing\n")
    # WHEN it is written again THEN it is refused, by name
    with pytest.raises(CommandDocsError, match="no such command: newsdesk nothing"):
        render(written)


# --- the manual's examples ----------------------------------------------------------------------

# what keeps an example from being run by the test (its comment says so)
NOT_RUN = ("# needs the network", "# needs AWS", "# runs until Ctrl-C", "# needs an issue")
EXAMPLES = re.compile(r"^```sh\n(.*?)^```$", re.S | re.M)


def examples(document: str) -> list[str]:
    """Every line of the manual's ``sh`` blocks: an example to run as written."""
    return [
        line
        for found in EXAMPLES.finditer(document)
        for line in found[1].splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


@pytest.mark.slow
def test_the_manuals_examples_run_as_written_from_the_repository_root(data_dir):
    # GIVEN the manual's examples, and those of them that need neither the network nor AWS
    written = examples(DOCS.read_text(encoding="utf-8"))
    runnable = [line for line in written if not any(mark in line for mark in NOT_RUN)]
    assert len(runnable) >= 10
    assert len(written) > len(runnable)
    # the console script on PATH as `. .venv/bin/activate` puts it, a data folder of their own
    env = {key: value for key, value in os.environ.items() if key not in OWN_SERVICES}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NEWSDESK_DATA_DIR"] = str(data_dir)
    for line in runnable:
        # WHEN each runs in a shell at the repository root, in the manual's order
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", line],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        # THEN it does what it says: exit 0, output, no error
        assert (done.returncode, done.stderr) == (0, ""), line
        assert done.stdout.strip(), line
