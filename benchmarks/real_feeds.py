"""Real feeds in legacy encodings, read by newsdesk and by a reference reading (issue 23).

    # once: the feeds, copied out of a public repository's test fixtures (not committed here)
    .venv/bin/python benchmarks/real_feeds.py prepare \
        --git-dir /work/.mirror/chardet+chardet/repo --repo chardet/chardet /tmp/real-feeds
    # then, with the environment whose newsdesk is measured
    .venv/bin/python benchmarks/real_feeds.py run /tmp/real-feeds [--list]

The feeds are those chardet's test suite keeps (``tests/<encoding>/*.xml``: RSS and Atom feeds
its author downloaded from the sites they name, in the encoding the folder names): every Korean
one (EUC-KR and CP949: Korean blogs, egloos, naver, empas, a KAIST club, a news wire), every
UTF-8 one, and the first three by name of each other folder whose feeds were published in that
encoding (Big5, EUC-JP, Shift_JIS, GB2312, KOI8-R, windows-1251, windows-1255, ISO-8859-2); the
folders chardet made by converting the same feeds into other encodings (IBM855, IBM866,
MacCyrillic, ISO-8859-5) are left out, and so are the files whose name starts with ``_``
(browsers' and detectors' test pages, not feeds). ``prepare`` copies them into a folder with a
manifest (repository, path, commit, SHA-256) that ``run`` prints.

For each feed, the reference reading: the bytes decoded with a codec they are valid in — the
label's (the XML declaration's), then its Microsoft or WHATWG superset (EUC-KR: CP949, GB2312:
GBK, Big5: CP950, Shift_JIS: CP932), then UTF-8, then, under a Korean, UTF-8 or no label, CP949
and EUC-KR; the first that decodes without an error — and feedparser (defaults, sanitiser on) on
that text, re-encoded as UTF-8 with its declaration saying so; a title feedparser calls HTML is
taken as the text it shows (``html.parser``). Against it, newsdesk's
``newsdesk.collect.parse.parse_feed`` on the raw bytes, without headers (a capture has none).
Titles are compared with their white space collapsed; entries newsdesk does not store (no
http(s) link) are left out of both. Run it with an older checkout's venv to measure that code.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import feedparser

import newsdesk
from newsdesk.collect.parse import parse_feed
from newsdesk.core.errors import FeedParseError

MANIFEST = "manifest.tsv"
EVERY = ("EUC-KR", "CP949", "utf-8")
FIRST_THREE = (
    "Big5",
    "EUC-JP",
    "SHIFT_JIS",
    "GB2312",
    "KOI8-R",
    "windows-1251-russian",
    "windows-1255-hebrew",
    "iso-8859-2-hungarian",
)
SUPERSETS = {"euc-kr": "cp949", "gb2312": "gbk", "big5": "cp950", "shift_jis": "cp932"}
KOREAN_OR_NONE = {"", "euc-kr", "cp949", "ks_c_5601-1987", "utf-8"}
DECLARATION = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
HTML_TYPES = {"text/html", "application/xhtml+xml"}


@dataclass(frozen=True)
class Feed:
    encoding: str  # the fixture's folder: the encoding it was published in
    name: str
    repo: str
    path: str
    commit: str
    sha256: str


@dataclass(frozen=True)
class Outcome:
    feed: Feed
    codec: str | None  # the reference's codec, None when no candidate decodes the bytes
    titles: int
    right: int
    mismatches: tuple[tuple[int, str, str], ...]
    error: str = ""


# ---------------------------------------------------------------------------------------------
# prepare


def prepare(git_dir: Path, repo: str, out: Path) -> None:
    commit = _git(git_dir, "rev-parse", "HEAD").decode().strip()
    paths = _git(git_dir, "ls-tree", "-r", "--name-only", commit, "tests").decode().split()
    chosen: list[str] = []
    for folder in (*EVERY, *FIRST_THREE):
        feeds = sorted(
            path
            for path in paths
            if path.startswith(f"tests/{folder}/")
            and path.endswith(".xml")
            and not path.split("/")[-1].startswith("_")  # browsers' test pages, no feeds
        )
        chosen += feeds if folder in EVERY else feeds[:3]
    rows = []
    for path in chosen:
        content = _git(git_dir, "show", f"{commit}:{path}")
        folder, name = path.split("/")[1:3]
        target = out / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        digest = hashlib.sha256(content).hexdigest()
        rows.append("\t".join((folder, name, repo, path, commit, digest)))
    (out / MANIFEST).write_text(
        "encoding\tname\trepo\tpath\tcommit\tsha256\n" + "\n".join(rows) + "\n", encoding="utf-8"
    )
    print(f"{len(rows)} feeds from {repo} at {commit} in {out}")


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True
    ).stdout


def read_manifest(folder: Path) -> list[Feed]:
    lines = (folder / MANIFEST).read_text(encoding="utf-8").splitlines()[1:]
    return [Feed(*line.split("\t")) for line in lines if line]


# ---------------------------------------------------------------------------------------------
# the two readings


def reference(content: bytes) -> tuple[str | None, list[tuple[str, str]]]:
    """The codec the bytes validate in, and (link, title) of each entry as feedparser reads the
    decoded text."""
    found = DECLARATION.match(content)
    label = found.group(1).decode("ascii").lower() if found else ""
    candidates = [label, SUPERSETS.get(label, ""), "utf-8"]
    if label in KOREAN_OR_NONE:
        candidates += ["cp949", "euc-kr"]
    for codec in dict.fromkeys(candidate for candidate in candidates if candidate):
        try:
            text = content.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        return codec, _feedparser_entries(text)
    return None, []


def _feedparser_entries(text: str) -> list[tuple[str, str]]:
    body = text.lstrip("\ufeff")
    body = re.sub(
        r"""^(\s*<\?xml[^>]*?encoding\s*=\s*)["'][^"']*["']""", r'\1"utf-8"', body, count=1
    )
    parsed = feedparser.parse(
        body.encode("utf-8"), response_headers={"content-type": "application/xml; charset=utf-8"}
    )
    entries = []
    for entry in parsed.entries:
        link = _link(entry.get("link") or "")
        if not link:
            continue
        title = entry.get("title") or ""
        kind = (entry.get("title_detail") or {}).get("type")
        entries.append((link, _collapsed(_shown(title) if kind in HTML_TYPES else title)))
    return entries


def _link(link: str) -> str:
    link = re.sub(r"[\x00-\x1f\x7f]", "", link).strip()
    return link if link.lower().startswith(("http://", "https://")) else ""


class _Shown(HTMLParser):
    """The text a browser shows of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self.hidden:
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def _shown(html: str) -> str:
    parser = _Shown()
    parser.feed(html)
    parser.close()
    return " ".join(parser.parts)


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def newsdesk_titles(content: bytes) -> list[tuple[str, str]]:
    parsed = parse_feed(content)
    return [(entry.link, _collapsed(entry.title)) for entry in parsed.entries]


def measure(folder: Path, feed: Feed) -> Outcome:
    content = (folder / feed.encoding / feed.name).read_bytes()
    codec, expected = reference(content)
    if codec is None:
        return Outcome(feed, None, 0, 0, (), "no candidate codec decodes the bytes")
    try:
        got = newsdesk_titles(content)
    except FeedParseError as error:
        missing = tuple((index, title, "") for index, (_, title) in enumerate(expected))
        return Outcome(feed, codec, len(expected), 0, missing, f"newsdesk: {error}")
    if len(got) != len(expected):  # then by link, in order
        by_link: dict[str, list[str]] = defaultdict(list)
        for link, title in got:
            by_link[link].append(title)
        got = [(link, by_link[link].pop(0) if by_link[link] else "") for link, _ in expected]
    mismatches = tuple(
        (index, want, have)
        for index, ((_, want), (_, have)) in enumerate(zip(expected, got, strict=True))
        if want != have
    )
    return Outcome(feed, codec, len(expected), len(expected) - len(mismatches), mismatches)


# ---------------------------------------------------------------------------------------------
# run


def run(folder: Path, listing: bool) -> None:
    feeds = read_manifest(folder)
    print(f"newsdesk from {Path(newsdesk.__file__).parent}, feedparser {feedparser.__version__}")
    print(f"\n{len(feeds)} feeds (encoding folder, name, repository, path, commit, sha256):")
    for feed in feeds:
        print(f"  {feed.repo} {feed.path} @ {feed.commit[:12]} sha256 {feed.sha256[:16]}")
    outcomes = [measure(folder, feed) for feed in feeds]
    print("\nby encoding: feeds, titles right of titles (reference codecs)")
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome.feed.encoding].append(outcome)
    for encoding, group in groups.items():
        codecs = Counter(outcome.codec or "none" for outcome in group)
        right = sum(outcome.right for outcome in group)
        titles = sum(outcome.titles for outcome in group)
        used = ", ".join(f"{codec} {count}" for codec, count in codecs.most_common())
        print(f"  {encoding:22s} {len(group):3d} feeds  {right:5d} of {titles:5d}  ({used})")
    korean = [outcome for outcome in outcomes if outcome.feed.encoding in ("EUC-KR", "CP949")]
    for label, chosen in (("Korean (EUC-KR, CP949)", korean), ("all", outcomes)):
        right = sum(outcome.right for outcome in chosen)
        titles = sum(outcome.titles for outcome in chosen)
        print(f"{label}: {len(chosen)} feeds, {right} of {titles} titles as the reference reads")
    print("\nfeeds with a mismatch or an error:")
    for outcome in outcomes:
        if outcome.mismatches or outcome.error:
            print(
                f"  {outcome.feed.encoding}/{outcome.feed.name} ({outcome.codec}): "
                f"{outcome.right} of {outcome.titles} {outcome.error}"
            )
            for index, want, have in outcome.mismatches:
                print(f"      #{index} reference {want!r}")
                print(f"      #{index} newsdesk  {have!r}")
    if listing:
        print("\nevery feed:")
        for outcome in outcomes:
            print(
                f"  {outcome.feed.encoding}/{outcome.feed.name}: codec {outcome.codec}, "
                f"{outcome.right} of {outcome.titles}"
            )


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("prepare", help="copy the chosen feeds out of a git directory")
    making.add_argument("--git-dir", type=Path, required=True)
    making.add_argument("--repo", required=True, help="owner/name, for the manifest")
    making.add_argument("out", type=Path)
    running = commands.add_parser("run", help="read every feed in the folder both ways")
    running.add_argument("folder", type=Path)
    running.add_argument("--list", action="store_true", help="print every feed's figures")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.command == "prepare":
        prepare(args.git_dir, args.repo, args.out)
    else:
        run(args.folder, args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
