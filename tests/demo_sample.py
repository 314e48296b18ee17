"""`newsdesk demo`'s output in a canonical form, for the sample in the README to be checked
against a real run (tests/test_cli.py).

A run's volatile parts are replaced by the sample's: the feed server's port, the data folder,
times, the round's seconds. Article ids depend on which worker stored its feed first (four run
at once), so they are renumbered as a run with the outlets one after another would number them
(the first round's articles by outlet, in the sources' order, then by id; the second round's
after them), and the issues as such a run creates them (by category, in the sources' order,
then by their first article). A near-copy is reported on the article extracted second, and
articles are extracted in id order: after renumbering the pair is written as the run in that
order writes it (``copy of #O`` on the copy, or ``original of #C`` on the original). Lines
whose order follows the ids (articles, an issue's articles, issues, events) are put in the new
order.

Regenerate the sample from a real run: ``.venv/bin/python -m tests.demo_sample`` prints the
canonical output of one; copy the lines the README keeps, ``...`` for those it leaves out.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

PORT = "40123"
DATA_DIR = "~/.local/share/newsdesk/demo"
TIME = "2026-12-01 23:55 KST"
SECONDS = "5.7"

_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d [A-Z]{3,4}")
_SOURCE = re.compile(r"^Source: (\S+) \| .* \| (\S+) http", re.M)
_ARTICLE = re.compile(r"^Article: (\S+) \| #(\d+) ", re.M)
_ISSUE = re.compile(r"^#(\d+) \[(\S+)\] ")
_MEMBER = re.compile(r"^    #(\d+) ")
_ORIGINAL = re.compile(r", original of #(\d+) \((\w+): published first\)")
_COPY = re.compile(r", copy of #(\d+) \((\w+)\)")
_ISSUE_ID = re.compile(r"^#(\d+)(?= \[)|issue:(\d+):v")
_ARTICLE_ID = re.compile(r"#(\d+)")
SECOND_ROUND = "A round later"
MARKER = "<!-- the demo's output (tests/test_cli.py checks it against a run) -->"


def canonical(output: str) -> str:
    """``output`` of `newsdesk demo` as the sample shows it."""
    text = _fixed(output)
    text = _copies_by_copy(text)
    articles = _article_numbers(text)
    text = "\n".join(_renumber_articles(line, articles) for line in text.split("\n"))
    text = _copies_as_extracted(text)
    issues = _issue_numbers(text)
    lines = [_renumber_issues(line, issues) for line in text.split("\n")]
    return "\n".join(_in_order(lines))


def _fixed(output: str) -> str:
    text = re.sub(r"http://127\.0\.0\.1:\d+", f"http://127.0.0.1:{PORT}", output)
    folder = re.search(r"data in (\S+)", text)
    if folder is not None:  # wherever the run names its data folder (the Next: line too)
        text = text.replace(folder.group(1), DATA_DIR)
    text = re.sub(r"Round: [\d.]+ s", f"Round: {SECONDS} s", text)
    text = _TIME.sub(TIME, text)
    return text.replace(f"{TIME} – {TIME}", TIME)


def _copies_by_copy(text: str) -> str:
    """Every copy pair written on the copy's line (``copy of #O``), whichever came second."""
    pairs: dict[str, tuple[str, str]] = {}  # copy id -> (original id, reason)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        found = _ORIGINAL.search(line)
        article = _ARTICLE.match(line)
        if found and article:
            pairs[found[1]] = (article[2], found[2])
            lines[i] = _ORIGINAL.sub("", line)
    for i, line in enumerate(lines):
        article = _ARTICLE.match(line)
        if article and article[2] in pairs:
            original, reason = pairs[article[2]]
            lines[i] = _with_clause(line, f", copy of #{original} ({reason})")
    return "\n".join(lines)


def _with_clause(line: str, clause: str) -> str:
    """An article line (``Article: OUTLET | #N OUTCOME | TITLE``) with ``clause`` after its
    outcome."""
    outlet, outcome, title = line.split(" | ", 2)
    return " | ".join((outlet, outcome + clause, title))


def _article_numbers(text: str) -> dict[str, str]:
    outlets = list(dict.fromkeys(m[1] for m in _SOURCE.finditer(text)))
    second = text.find(SECOND_ROUND)
    found = [
        (m.start() > second >= 0, outlets.index(m[1]), int(m[2])) for m in _ARTICLE.finditer(text)
    ]
    return {str(old): str(new) for new, (_, _, old) in enumerate(sorted(found), start=1)}


def _renumber_articles(line: str, numbers: dict[str, str]) -> str:
    def article(match: re.Match[str]) -> str:
        return f"#{numbers.get(match[1], match[1])}"

    if _ISSUE.match(line):  # the issue's own id leads the line
        head, _, rest = line.partition(" ")
        return f"{head} {_ARTICLE_ID.sub(article, rest)}"
    if "issue:" in line:
        head, _, rest = line.partition(" [")
        return f"{head} [{_ARTICLE_ID.sub(article, rest)}"
    return _ARTICLE_ID.sub(article, line)


def _copies_as_extracted(text: str) -> str:
    """A copy extracted before its original (a smaller id) is reported on the original."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        article, copy = _ARTICLE.match(line), _COPY.search(line)
        if article and copy and int(article[2]) < int(copy[1]):
            lines[i] = _COPY.sub("", line)
            clause = f", original of #{article[2]} ({copy[2]}: published first)"
            for j, other in enumerate(lines):
                if (found := _ARTICLE.match(other)) and found[2] == copy[1]:
                    lines[j] = _with_clause(other, clause)
    return "\n".join(lines)


def _issue_numbers(text: str) -> dict[str, str]:
    categories = list(dict.fromkeys(m[2] for m in _SOURCE.finditer(text)))
    listed = text.split("\nIssues, oldest first:\n", 1)[-1].split("\n\n", 1)[0]
    first: dict[str, tuple[int, int]] = {}
    issue = ""
    for line in listed.split("\n"):
        if header := _ISSUE.match(line):
            issue = header[1]
            first[issue] = (categories.index(header[2]), sys.maxsize)
        elif (member := _MEMBER.match(line)) and issue:
            first[issue] = (first[issue][0], min(first[issue][1], int(member[1])))
    return {old: str(new) for new, old in enumerate(sorted(first, key=first.__getitem__), 1)}


def _renumber_issues(line: str, numbers: dict[str, str]) -> str:
    def issue(match: re.Match[str]) -> str:
        if match[1] is not None:
            return f"#{numbers.get(match[1], match[1])}"
        return f"issue:{numbers.get(match[2], match[2])}:v"

    return _ISSUE_ID.sub(issue, line)


def _in_order(lines: list[str]) -> list[str]:
    """Runs of article lines by id, the issues' listing by issue (each issue's articles by id,
    a copy under its original), events by version then issue, each event's added articles by
    id."""
    result: list[str] = []
    run: list[str] = []
    kind = None
    for line in [*(_added_in_order(line) for line in lines), None]:
        this = None if line is None else _kind(line)
        if run and (this != kind or this is None):
            result.extend(_ORDER[kind](run))
            run = []
        kind = this
        if line is not None and this is not None:
            run.append(line)
        elif line is not None:
            result.append(line)
    return result


def _kind(line: str) -> str | None:
    if line.startswith("Article: "):
        return "articles"
    if _ISSUE.match(line) or line.startswith("    "):
        return "issues"
    if " issue:" in line:
        return "events"
    return None


def _first_id(line: str) -> int:
    return int(_ARTICLE_ID.findall(line)[0])


def _issue_blocks(run: list[str]) -> list[str]:
    """Blocks of an issue's line and its articles' (each with its copies' lines), by id."""
    blocks: list[list[list[str]]] = []
    for line in run:
        if _ISSUE.match(line):
            blocks.append([[line]])
        elif line.startswith("        "):
            blocks[-1][-1].append(line)
        else:
            blocks[-1].append([line])
    ordered: list[str] = []
    for header, *articles in sorted(blocks, key=lambda block: _first_id(block[0][0])):
        ordered.extend(header)
        for article in sorted(articles, key=lambda group: _first_id(group[0])):
            ordered.extend(article)
    return ordered


def _event_key(line: str) -> tuple[int, int]:
    issue, version = re.findall(r"issue:(\d+):v(\d+)", line)[0]
    return int(version), int(issue)


_ORDER: dict[str | None, Callable[[list[str]], list[str]]] = {
    "articles": lambda run: sorted(run, key=_first_id),
    "issues": _issue_blocks,
    "events": lambda run: sorted(run, key=_event_key),
}


def _added_in_order(line: str) -> str:
    def added(match: re.Match[str]) -> str:
        ids = sorted(match[1].split(", "), key=lambda i: int(i.lstrip("#")))
        return f"added {', '.join(ids)};"

    return re.sub(r"added ((?:#\d+, )*#\d+);", added, line)


def sample(path: Path) -> str:
    """The code block after ``MARKER`` in ``path``: a run's canonical output, ``...`` for the
    lines it leaves out."""
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
