"""Progress on a terminal (issue 26): `collect` prints each outlet as it is done, in the sources
file's order, and the phases of its round; off a terminal and with --json, what it printed
before. A real round (the local runtime, feeds on 127.0.0.1) writing to a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import re

import pytest

from newsdesk_local.cli import main
from newsdesk_local.commands.collect import STARTING
from tests.test_cli import environ, write_sources

pytestmark = pytest.mark.integration


def read_all(fd: int) -> str:
    """What the terminal has been sent so far (its newlines as written)."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_collect_prints_each_outlet_as_it_is_done_on_a_terminal(
    data_dir, serve, feed_server, postgres_url, monkeypatch
):
    # GIVEN two outlets, the second's feed noting what the terminal showed when it was asked
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    seen_before_b: list[str] = []
    first = serve("/a.xml", "good.xml")
    second = serve("/b.xml", "atom.xml", before=lambda: seen_before_b.append(read_all(master)))
    sources = write_sources(
        data_dir.parent / "two.yaml", [("A", first, "정치"), ("B", second, "경제")]
    )
    env = environ(data_dir, DATABASE_URL=postgres_url, FETCH_ALLOW_PRIVATE_NETWORKS="true")
    terminal = io.TextIOWrapper(io.FileIO(slave, "w"), encoding="utf-8", line_buffering=True)
    monkeypatch.setattr("sys.stdout", terminal)
    # WHEN a round runs on it, one outlet at a time
    code = main(["collect", "--sources", str(sources), "--concurrency", "1"], env)
    terminal.flush()
    shown = seen_before_b[0] + read_all(master)
    terminal.close()
    os.close(master)
    # THEN A's line was on the terminal before B was asked, after the phases so far
    assert code == 0
    # (new or skipped: the suite's database may hold good.xml's articles already)
    a_line = re.compile(rf"Source: A \| New: \d \| Skip: \d \| Total: 3 \| 정치 {re.escape(first)}")
    before = seen_before_b[0].splitlines()
    assert before[:2] == [STARTING, "Collecting 2 feeds of 2 outlets…"]
    assert len(before) == 3
    assert a_line.fullmatch(before[2])
    # AND the round's lines follow, B's once, the totals after both, and what to look at next
    lines = shown.splitlines()
    assert [line for line in lines if line.startswith("Source: ")] == [
        before[2],
        *[line for line in lines if line.startswith("Source: B ")],
    ]
    assert len([line for line in lines if line.startswith("Source: B ")]) == 1
    assert [n for n, line in enumerate(lines) if line.startswith("Feeds: ")] > [3]
    assert re.fullmatch(
        r"Next: `newsdesk articles --since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ` \(this round's "
        r"articles and their pages\), `newsdesk feeds --failing` \(what failed\), "
        r"`newsdesk cluster` then `newsdesk issues` \(the issues they make\)",
        lines[-1],
    )


def test_off_a_terminal_the_round_has_no_phase_lines(data_dir, serve, postgres_url, capsys):
    # (its JSON, one object as before, is tests/test_cli.py's)
    feed = serve("/a.xml", "good.xml")
    sources = write_sources(data_dir.parent / "one.yaml", [("A", feed, "정치")])
    env = environ(data_dir, DATABASE_URL=postgres_url, FETCH_ALLOW_PRIVATE_NETWORKS="true")
    assert main(["collect", "--sources", str(sources)], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert STARTING not in lines
    assert re.fullmatch(
        rf"Source: A \| New: \d \| Skip: \d \| Total: 3 \| 정치 {re.escape(feed)}", lines[0]
    )
    assert lines[-1].startswith("Next: `newsdesk articles --since ")
