"""The vocabulary of the settings tables: what a row says (a variable's kind, default, bounds,
one line of doc, the functions that read it) and how its text is read.

A row of a stage's table is a field of that stage's settings dataclass, its default given by
``setting(...)``; the variable is the field's name in capitals (``cluster_min_size`` is
``CLUSTER_MIN_SIZE``) unless the row names another (``env=``). ``Settings`` is every stage's
table in one (``newsdesk.core.settings``), and ``Settings.from_env`` reads each row as it says.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, overload
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from newsdesk.core.errors import SettingsError
from newsdesk.core.settings.contact import contact_problem

T = TypeVar("T")

# The template's functions (its logical ids), as a row names those that read it.
FANOUT = "FanOutFunction"
WORKER = "WorkerFunction"
EXTRACTOR = "ExtractorFunction"
CLUSTER = "ClusterFunction"
MIGRATE = "MigrateFunction"
READ = "ReadFunction"  # the operator's read commands on a deployed stack (issue 40)
FUNCTIONS = (FANOUT, WORKER, EXTRACTOR, CLUSTER, MIGRATE, READ)
FETCHING = (WORKER, EXTRACTOR)  # they send requests: the fetch policy, the operator's contact
DATABASE_USERS = (WORKER, EXTRACTOR, CLUSTER, MIGRATE, READ)

_ROW = "newsdesk.setting"  # the key of a row in its field's metadata


@dataclass(frozen=True)
class Kind(Generic[T]):
    """How a variable's text (stripped, not empty) becomes its value, and what the docs call
    it. ``parse`` raises a SettingsError that names the variable."""

    name: str
    parse: Callable[[str, str], T]  # (variable, text) -> value
    numeric: bool = False  # the row's bounds apply


@dataclass(frozen=True)
class Row:
    """What ``setting(...)`` keeps in its field's metadata."""

    kind: Kind[Any]
    doc: str  # one line: what it does
    functions: tuple[str, ...]  # the functions that read it
    in_template: bool  # the template sets it for each of them (else their default holds)
    minimum: float | None
    maximum: float | None
    env: str | None  # the variable, when it is not the field's name in capitals
    shown: str | None  # the default as the docs write it (a computed one, or what unset means)


@dataclass(frozen=True)
class Variable:
    """One environment variable: a row of a stage's table (``attribute`` its field of
    ``Settings``), or one that others read (boto3, Powertools, SAM CLI; ``attribute`` None)."""

    name: str
    doc: str
    functions: tuple[str, ...] = ()
    kind: Kind[Any] | None = None
    default: Any = None
    factory: Callable[[], Any] | None = None  # a default computed when it is read
    in_template: bool = True
    minimum: float | None = None
    maximum: float | None = None
    shown: str | None = None
    attribute: str | None = None

    def read(self, env: Mapping[str, str]) -> Any:
        """The variable's value in ``env``: its default when unset or empty, else its text
        read as its kind says and held to its bounds."""
        raw = env.get(self.name, "").strip()
        if not raw or self.kind is None:
            return self.factory() if self.factory is not None else self.default
        value = self.kind.parse(self.name, raw)
        if self.kind.numeric and self.minimum is not None and value < self.minimum:
            raise SettingsError(f"{self.name}: must be at least {self.minimum}, got {raw!r}")
        if self.kind.numeric and self.maximum is not None and value > self.maximum:
            raise SettingsError(f"{self.name}: must be at most {self.maximum}, got {raw!r}")
        return value

    @property
    def read_by(self) -> tuple[str, ...]:
        """The functions the template gives the variable to."""
        return self.functions if self.in_template else ()


@overload
def setting(
    default: None,
    kind: Kind[T],
    doc: str,
    functions: tuple[str, ...] = (),
    *,
    in_template: bool = True,
    minimum: float | None = None,
    maximum: float | None = None,
    env: str | None = None,
    shown: str | None = None,
) -> T | None: ...


@overload
def setting(
    default: T | Callable[[], T],
    kind: Kind[T],
    doc: str,
    functions: tuple[str, ...] = (),
    *,
    in_template: bool = True,
    minimum: float | None = None,
    maximum: float | None = None,
    env: str | None = None,
    shown: str | None = None,
) -> T: ...


def setting(
    default: Any,
    kind: Kind[Any],
    doc: str,
    functions: tuple[str, ...] = (),
    *,
    in_template: bool = True,
    minimum: float | None = None,
    maximum: float | None = None,
    env: str | None = None,
    shown: str | None = None,
) -> Any:
    """A row of a stage's table: the field's default (a function: computed per instance), how
    the variable is read, its bounds and one line of doc, and the functions that read it
    (``in_template=False``: the template does not set it, so their default holds in AWS)."""
    row = Row(kind, doc, functions, in_template, minimum, maximum, env, shown)
    metadata = {_ROW: row}
    if callable(default):
        return dataclasses.field(default_factory=default, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def rows(table: type) -> tuple[Variable, ...]:
    """A table's rows (a settings dataclass's fields made with ``setting``), in order."""
    found = []
    for f in dataclasses.fields(table):
        row: Row = f.metadata[_ROW]
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        default = None if f.default is dataclasses.MISSING else f.default
        found.append(
            Variable(
                row.env or f.name.upper(),
                row.doc,
                row.functions,
                row.kind,
                default,
                factory,
                row.in_template,
                row.minimum,
                row.maximum,
                row.shown,
                attribute=f.name,
            )
        )
    return tuple(found)


# --- the kinds ---------------------------------------------------------------------------


def _text(name: str, raw: str) -> str:
    return raw


def _number(kind: Callable[[str], T]) -> Callable[[str, str], T]:
    def parse(name: str, raw: str) -> T:
        try:
            return kind(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected a number, got {raw!r}") from None

    return parse


def _flag(name: str, raw: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{name}: expected true or false, got {raw!r}")


def _path(name: str, raw: str) -> Path:
    return Path(raw).expanduser()


def _patterns(name: str, raw: str) -> tuple[str, ...]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        raise SettingsError(f"{name}: expected a JSON list of regular expressions") from None
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise SettingsError(f"{name}: expected a JSON list of regular expressions")
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as e:
            raise SettingsError(f"{name}: invalid pattern {pattern!r}: {e}") from None
    return tuple(value)


def _contact(name: str, raw: str) -> str:
    problem = contact_problem(raw)
    if problem:
        raise SettingsError(f"{name}: {problem}")
    return raw


def zone(name: str, variable: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise SettingsError(
            f"{variable}: not a time zone: {name!r} (an IANA name, such as Asia/Seoul or UTC)"
        ) from None


def _zone_name(name: str, raw: str) -> str:
    zone(raw, name)
    return raw


def choice(options: tuple[str, ...]) -> Kind[str]:
    def parse(name: str, raw: str) -> str:
        if raw not in options:
            raise SettingsError(f"{name}: expected one of {', '.join(options)}, got {raw!r}")
        return raw

    return Kind(f"one of {', '.join(options)}", parse)


TEXT = Kind("text", _text)
INTEGER = Kind("integer", _number(int), numeric=True)
NUMBER = Kind("number", _number(float), numeric=True)
FLAG = Kind("true or false", _flag)
PATH = Kind("path", _path)
PATTERNS = Kind("JSON list of regular expressions", _patterns)
CONTACT = Kind("URL or e-mail address", _contact)
ZONE = Kind("IANA time zone", _zone_name)
