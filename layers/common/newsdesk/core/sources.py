"""sources.yaml: the list of feeds, in the seed's format ``{source, url, category}``, and
optionally, per feed, ``user_agent`` for a feed whose outlet refuses anything but a browser's
and ``cited`` (the public material that names the feed, ``KEY YYYY-MM-DD`` each, keys from
docs/sources.md); per outlet, ``extract: false`` for an outlet whose terms do not allow
fetching and keeping its article pages, ``extract_min_chars`` for an outlet whose articles are
shorter or longer than most, ``wire: true`` for a news agency (its article is the original of
a copy that carries the same published time) and ``terms`` (what the outlet publishes about
reuse of its RSS and articles, with its citation). An outlet's fields are set alike on every
one of its feeds (YAML anchors and aliases may repeat them).

One outlet (``source``) has many feeds. A file is validated whole before anything is sent, and
every error names the file, the entry (counted from 1) and the field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from newsdesk.core.errors import SourcesError
from newsdesk.core.settings import user_agent_problem

FIELDS = ("source", "url", "category")
OPTIONAL_FIELDS = ("user_agent", "cited", "extract", "extract_min_chars", "wire", "terms")
# one value for all of an outlet's feeds
OUTLET_FIELDS = ("extract", "extract_min_chars", "wire", "terms")
BUNDLED = "sources.yaml"
# a citation: the key of a source docs/sources.md lists, and the date the material carries
_CITATION = re.compile(r"(?P<key>[A-Za-z0-9][A-Za-z0-9#._-]*) (?P<date>\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True)
class Feed:
    source: str
    url: str
    category: str
    user_agent: str | None = None  # the feed's own User-Agent; None: newsdesk's
    extract: bool = True  # its articles' pages are fetched and their text extracted
    extract_min_chars: int | None = None  # None: EXTRACT_MIN_CHARS
    # Not carried by the outlet message, so no part of a feed's identity: the extractor reads
    # ``wire`` from sources.yaml itself (a news agency: the tie rule for originals); the other
    # two are documentation.
    wire: bool = field(default=False, compare=False)
    terms: str | None = field(default=None, compare=False)
    cited: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Outlet:
    name: str
    feeds: tuple[Feed, ...]


def load_sources(path: Path | None = None) -> list[Feed]:
    """Read and validate ``path``, or the sources.yaml shipped with the package."""
    if path is None:
        text = resources.files("newsdesk").joinpath(BUNDLED).read_text(encoding="utf-8")
        return parse_sources(text, name=f"<bundled {BUNDLED}>")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SourcesError(f"{path}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise SourcesError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    return parse_sources(text, name=str(path))


def parse_sources(text: str, name: str = "sources.yaml") -> list[Feed]:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise SourcesError(f"{name}: not valid YAML{where}: {e}") from e
    if not isinstance(document, list) or not document:
        raise SourcesError(f"{name}: expected a non-empty list of {{source, url, category}}")
    feeds: list[Feed] = []
    first_entry_of: dict[str, int] = {}
    outlet_entry: dict[str, tuple[int, Feed]] = {}
    for number, entry in enumerate(document, start=1):
        feed = _parse_entry(entry, name, number)
        if feed.url in first_entry_of:
            raise SourcesError(
                f"{name}: entry {number}: field 'url': {feed.url} "
                f"is already entry {first_entry_of[feed.url]}"
            )
        first_entry_of[feed.url] = number
        first, earlier = outlet_entry.setdefault(feed.source, (number, feed))
        for outlet_field in OUTLET_FIELDS:
            mine, theirs = getattr(feed, outlet_field), getattr(earlier, outlet_field)
            if mine != theirs:
                raise SourcesError(
                    f"{name}: entry {number}: field {outlet_field!r}: {mine!r} differs "
                    f"from entry {first}'s {theirs!r} (it is the outlet's)"
                )
        feeds.append(feed)
    return feeds


def _parse_entry(entry: Any, name: str, number: int) -> Feed:
    where = f"{name}: entry {number}"
    if not isinstance(entry, dict):
        raise SourcesError(f"{where}: expected a mapping with {', '.join(FIELDS)}")
    unknown = sorted(str(key) for key in entry if key not in FIELDS + OPTIONAL_FIELDS)
    if unknown:
        expected = ", ".join(FIELDS) + f" and optionally {', '.join(OPTIONAL_FIELDS)}"
        raise SourcesError(f"{where}: field {unknown[0]!r}: unknown (expected {expected})")
    values: dict[str, str] = {}
    for required in FIELDS:
        value = entry.get(required)
        if not isinstance(value, str) or not value.strip():
            raise SourcesError(f"{where}: field {required!r}: missing or not a non-empty string")
        values[required] = value.strip()
    parts = urlsplit(values["url"])
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourcesError(f"{where}: field 'url': not an http(s) URL: {values['url']!r}")
    extract = entry.get("extract", True)
    if not isinstance(extract, bool):
        raise SourcesError(f"{where}: field 'extract': expected true or false")
    min_chars = entry.get("extract_min_chars")
    if min_chars is not None and (
        not isinstance(min_chars, int) or isinstance(min_chars, bool) or min_chars < 0
    ):
        raise SourcesError(f"{where}: field 'extract_min_chars': expected a whole number >= 0")
    wire = entry.get("wire", False)
    if not isinstance(wire, bool):
        raise SourcesError(f"{where}: field 'wire': expected true or false")
    return Feed(
        **values,
        user_agent=_user_agent(entry, where),
        extract=extract,
        extract_min_chars=min_chars,
        wire=wire,
        terms=_terms(entry, where),
        cited=_cited(entry, where),
    )


def _terms(entry: dict[Any, Any], where: str) -> str | None:
    if "terms" not in entry:
        return None
    value = entry["terms"]
    if not isinstance(value, str) or not value.strip():
        raise SourcesError(f"{where}: field 'terms': expected a non-empty string")
    return " ".join(value.split())


def _cited(entry: dict[Any, Any], where: str) -> tuple[str, ...]:
    value = entry.get("cited", [])
    if not isinstance(value, list) or (not value and "cited" in entry):
        raise SourcesError(f"{where}: field 'cited': expected a list of 'KEY YYYY-MM-DD'")
    cited = []
    for item in value:
        match = _CITATION.fullmatch(item.strip()) if isinstance(item, str) else None
        if match is None or not _is_date(match["date"]):
            raise SourcesError(
                f"{where}: field 'cited': {item!r} is not 'KEY YYYY-MM-DD' "
                "(a source of docs/sources.md and the material's date)"
            )
        cited.append(item.strip())
    return tuple(cited)


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def wire_agencies(feeds: Sequence[Feed]) -> frozenset[str]:
    """The outlets sources.yaml marks ``wire: true``: news agencies."""
    return frozenset(feed.source for feed in feeds if feed.wire)


def _user_agent(entry: dict[Any, Any], where: str) -> str | None:
    if "user_agent" not in entry:
        return None
    value = entry["user_agent"]
    if not isinstance(value, str):
        raise SourcesError(f"{where}: field 'user_agent': not a string")
    problem = user_agent_problem(value.strip())
    if problem:
        raise SourcesError(f"{where}: field 'user_agent': {problem}")
    return value.strip()


def group_by_outlet(feeds: Sequence[Feed]) -> list[Outlet]:
    """Outlets in order of first appearance, each with its feeds in file order."""
    grouped: dict[str, list[Feed]] = {}
    for feed in feeds:
        grouped.setdefault(feed.source, []).append(feed)
    return [Outlet(name, tuple(outlet_feeds)) for name, outlet_feeds in grouped.items()]
