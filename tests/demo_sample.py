"""`newsdesk demo`'s output as the README's sample shows it, for the sample to be checked against
a real run (tests/test_cli.py).

Only what differs from run to run is put as the sample has it: the feed server's port, the
data folder, the times and the round's seconds. Nothing else is changed: the demo stores its
outlets one after another and extracts their pages in the order of their ids
(``newsdesk_local.commands.demo.WORKERS``), so its ids, its lines and their order are the same
on every run, and the sample is what a user sees.

Regenerate the sample from a real run: ``.venv/bin/python -m tests.demo_sample`` prints one in
that form; copy the lines the README keeps, ``...`` for those it leaves out.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import sys
import tempfile
from pathlib import Path

PORT = "40123"
DATA_DIR = "~/.local/share/newsdesk/demo"
TIME = "2026-12-01 23:55 KST"
SECONDS = "5.7"

_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d [A-Z]{3,4}")
MARKER = "<!-- the demo's output (tests/test_cli.py checks it against a run) -->"


def canonical(output: str) -> str:
    """``output`` of `newsdesk demo` with its port, data folder, times and seconds as the
    sample has them (a span of two minutes, a round that crossed one, as one time)."""
    text = re.sub(r"http://127\.0\.0\.1:\d+", f"http://127.0.0.1:{PORT}", output)
    folder = re.search(r"data in (\S+)", text)
    if folder is not None:  # wherever the run names its data folder (the Next: line too)
        text = text.replace(folder.group(1), DATA_DIR)
    text = re.sub(r"Round: [\d.]+ s", f"Round: {SECONDS} s", text)
    text = _TIME.sub(TIME, text)
    return text.replace(f"{TIME} – {TIME}", TIME)


def sample(path: Path) -> str:
    """The code block after ``MARKER`` in ``path``: a run's output (``canonical``), ``...``
    for the lines it leaves out."""
    text = path.read_text(encoding="utf-8")
    _, found, after = text.partition(MARKER + "\n```text\n")
    assert found, f"{path}: no {MARKER} followed by a text block"
    return after.split("```\n", 1)[0]


def difference(shown: str, output: str) -> str | None:
    """None when ``output`` (canonical) is ``shown`` (``...`` matching any lines), else the
    difference in words (doctest's ELLIPSIS)."""
    checker = doctest.OutputChecker()
    want, got = shown.rstrip("\n") + "\n", output.rstrip("\n") + "\n"
    if checker.check_output(want, got, doctest.ELLIPSIS):
        return None
    example = doctest.Example("newsdesk demo", want)
    return checker.output_difference(example, got, doctest.ELLIPSIS | doctest.REPORT_UDIFF)


def main() -> int:
    from newsdesk_local.cli import main as newsdesk

    with tempfile.TemporaryDirectory() as data_dir:
        env = dict(os.environ, NEWSDESK_DATA_DIR=data_dir)
        env.pop("AWS_ENDPOINT_URL", None)
        env.pop("DATABASE_URL", None)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = newsdesk(["demo"], env)
    sys.stdout.write(canonical(out.getvalue()))
    return code


if __name__ == "__main__":
    sys.exit(main())
