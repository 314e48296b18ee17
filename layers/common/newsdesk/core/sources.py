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
every error names the file, the entry (counted from 1) and the field, in one line, a value in it
cut short. A hostile file is refused in bounded time and memory (issue 39): it is composed as a
graph first, nested at most ``MAX_DEPTH`` deep, and built only if its aliases and merge keys
(``<<``) expand to ``MAX_NODES`` nodes at most.
"""

from __future__ import annotations

import re
import reprlib
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
# What a file may make the reader build. The bundled file is 1,681 nodes, 4 deep, its aliases
# expanded; an alias bomb or a mapping merged into thousands of entries passes MAX_NODES, and
# PyYAML's composer, which recurses, stops long before Python's recursion limit.
MAX_NODES = 100_000
MAX_DEPTH = 32
MAX_INT_CHARS = 100  # past this, int() is slow, then refused (4,300 digits)
_INT_TAG = "tag:yaml.org,2002:int"
# a value in an error message: a few of its items and characters, then cut at SHOWN
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring = 2, 4, 4, 60
SHOWN = 100


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
    document = read_yaml(text, name)
    if not isinstance(document, list) or not document:
        raise SourcesError(f"{name}: expected a non-empty list of {{source, url, category}}")
    feeds: list[Feed] = []
    first_entry_of: dict[str, int] = {}
    outlet_entry: dict[str, tuple[int, Feed]] = {}
    for number, entry in enumerate(document, start=1):
        feed = _parse_entry(entry, name, number)
        if feed.url in first_entry_of:
            raise SourcesError(
                f"{name}: entry {number}: field 'url': {_shown(feed.url)} "
                f"is already entry {first_entry_of[feed.url]}"
            )
        first_entry_of[feed.url] = number
        first, earlier = outlet_entry.setdefault(feed.source, (number, feed))
        for outlet_field in OUTLET_FIELDS:
            mine, theirs = getattr(feed, outlet_field), getattr(earlier, outlet_field)
            if mine != theirs:
                raise SourcesError(
                    f"{name}: entry {number}: field {outlet_field!r}: {_shown(mine)} "
                    f"differs from entry {first}'s {_shown(theirs)} (it is the outlet's)"
                )
        feeds.append(feed)
    return feeds


class _RefusedError(Exception):
    """A file the reader will not build: where, and why."""

    def __init__(self, node_or_mark: yaml.Node | yaml.Mark, problem: str) -> None:
        mark = node_or_mark.start_mark if isinstance(node_or_mark, yaml.Node) else node_or_mark
        super().__init__(f"line {mark.line + 1}: {problem}")


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, whose composer stops at ``MAX_DEPTH`` levels."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= MAX_DEPTH:
            raise _RefusedError(self.get_mark(), f"nested deeper than {MAX_DEPTH} levels")
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def read_yaml(text: str, name: str) -> Any:
    """The document ``yaml.safe_load`` reads from ``text``, or a one-line ``SourcesError``
    within bounds: the graph composed, its expanded size checked, then built."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    except _RefusedError as e:
        raise SourcesError(f"{name}: {e}") from e
    except yaml.YAMLError as e:
        raise SourcesError(f"{name}: not valid YAML{_yaml_problem(e)}") from e
    except ValueError as e:  # a date or number the grammar admits and Python will not build
        raise SourcesError(f"{name}: not valid YAML: {_cut(str(e))}") from e
    finally:
        loader.dispose()


def _yaml_problem(e: yaml.YAMLError) -> str:
    """PyYAML's message in one line, without its copy of the file's line."""
    if not isinstance(e, yaml.MarkedYAMLError) or e.problem is None:
        return f": {_cut(str(e))}"
    mark = e.problem_mark
    where = f" at line {mark.line + 1}" if mark is not None else ""
    context = f" ({e.context})" if e.context else ""
    return f"{where}: {_cut(e.problem + context)}"


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a graph that holds itself, a number too long to read, or whose aliases and merge
    keys expand past ``MAX_NODES`` (each node counted once wherever an alias repeats it); in
    document order, so a node an alias names is counted before the alias (issue 39)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the ancestors of the node in hand
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            open_nodes.discard(id(node))
            sizes[id(node)] = _expanded_size(node, sizes)
        elif id(node) in open_nodes:
            raise _RefusedError(node, "an alias inside the node it names")
        elif id(node) not in sizes:
            if node.tag == _INT_TAG and len(node.value) > MAX_INT_CHARS:
                raise _RefusedError(node, f"a number longer than {MAX_INT_CHARS} characters")
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    size = 1
    for child in _children(node):
        size += sizes[id(child)]
        if size > MAX_NODES:
            raise _RefusedError(child, f"aliases and merge keys make more than {MAX_NODES:,} nodes")
    return size


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def _shown(value: object) -> str:
    """``value``'s repr, cut short: its first items, and at most ``SHOWN`` characters."""
    return _cut(_SHORT.repr(value), SHOWN)


def _cut(text: str, limit: int = 200) -> str:
    """``text`` in one line, cut short."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _parse_entry(entry: Any, name: str, number: int) -> Feed:
    where = f"{name}: entry {number}"
    if not isinstance(entry, dict):
        raise SourcesError(f"{where}: expected a mapping with {', '.join(FIELDS)}")
    unknown = sorted(str(key) for key in entry if key not in FIELDS + OPTIONAL_FIELDS)
    if unknown:
        expected = ", ".join(FIELDS) + f" and optionally {', '.join(OPTIONAL_FIELDS)}"
        raise SourcesError(f"{where}: field {_shown(unknown[0])}: unknown (expected {expected})")
    values: dict[str, str] = {}
    for required in FIELDS:
        value = entry.get(required)
        if not isinstance(value, str) or not value.strip():
            raise SourcesError(f"{where}: field {required!r}: missing or not a non-empty string")
        values[required] = value.strip()
    parts = urlsplit(values["url"])
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourcesError(f"{where}: field 'url': not an http(s) URL: {_shown(values['url'])}")
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
                f"{where}: field 'cited': {_shown(item)} is not 'KEY YYYY-MM-DD' "
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
