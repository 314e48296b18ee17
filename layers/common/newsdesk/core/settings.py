"""One typed settings object, read from the environment once at the edge.

Library code below the handlers and the CLI takes plain values from this object and never reads
``os.environ`` itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from newsdesk import __version__
from newsdesk.core.errors import SettingsError

# The seed's photo-news prefixes. Photo articles carry a picture and a caption, nothing a
# summary could be written from, so they are dropped before storage.
DEFAULT_PHOTO_TITLE_PATTERNS: tuple[str, ...] = (
    r"\[사진\]",
    r"\[포토\]",
    r"\(포토\)",
    r"\[포토뉴스\]",
    r"\[경향포토\]",
    r"\[포토 종합\]",
    r"\[포토에세이\]",
)

# newsdesk.cluster.methods.METHODS, named again here: core sits below the stages and imports
# none of them (tests/test_clustering.py checks that the two agree).
CLUSTER_METHODS = ("seed", "centroid", "headline")

# Who is asking (RFC 9110 10.1.5: a product token, then a comment): newsdesk, whom a webmaster
# who finds it in their logs can ask (OPERATOR_CONTACT: "+URL" as crawlers write it, or an
# e-mail address), and what it does with what it fetches. Not the library's
# "python-requests", a substring web firewalls commonly block.
# the product name robots.txt groups are matched against (RFC 9309 2.2.1)
PRODUCT = "newsdesk"
WHAT_IT_DOES = "collects news feeds and the article pages they link to"
# The local commands' OPERATOR_CONTACT when none is given: a run on a laptop, which names no
# operator (the template's OperatorContact pattern refuses it, so no deploy sends it).
LOCAL_CONTACT = "local"
MAX_CONTACT_LENGTH = 200
# A contact: an http(s) URL or an e-mail address, printable ASCII with no space and, as it goes
# into the User-Agent's comment, no parenthesis or backslash. The template's OperatorContact
# has this very AllowedPattern (a test holds them equal; Java's regular expressions and
# Python's read it alike).
_DOMAIN = r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
URL_PATTERN = rf"https?://{_DOMAIN}(?::[0-9]+)?(?:[/?#][!-'*-\[\]-~]*)?"
EMAIL_PATTERN = rf"[A-Za-z0-9.!#$%&'*+/=?^_`{{|}}~-]+@{_DOMAIN}"
CONTACT_PATTERN = f"^(?:{URL_PATTERN}|{EMAIL_PATTERN})$"
MAX_USER_AGENT_LENGTH = 512
# Where the schedules run and the editors read: the command line prints times in it.
DEFAULT_TIMEZONE = "Asia/Seoul"

N = TypeVar("N", int, float)


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    db_secret_arn: str | None = None
    db_host: str | None = None
    db_port: int = 5432
    db_name: str = "newsdesk"
    fetch_timeout_seconds: float = 10.0
    fetch_max_bytes: int = 5 * 1024 * 1024
    fetch_allow_private_networks: bool = False
    fetch_interval_seconds: float = 0.1
    outlet_max_failures: int = 2
    collect_period_seconds: int = 1800
    message_max_age_seconds: int = 1800
    photo_title_patterns: tuple[str, ...] = DEFAULT_PHOTO_TITLE_PATTERNS
    entry_max_age_hours: float = 72.0
    outlet_silent_hours: float = 6.0
    # whom the requests name (OPERATOR_CONTACT): a URL, an e-mail address or LOCAL_CONTACT;
    # None: unset, which the functions that fetch refuse (require_operator_contact)
    operator_contact: str | None = None
    state_table_name: str = "newsdesk-state"
    outlet_queue_url: str | None = None
    raw_bucket: str | None = None
    sources_path: Path | None = None
    cluster_method: str = "seed"
    cluster_threshold: float | None = None  # None: the method's recommended threshold
    cluster_min_size: int = 3
    cluster_window_hours: float = 24.0
    # Issue 24: a schedule's event sends one message per category there (None: the function
    # clusters every category itself, one after another).
    cluster_queue_url: str | None = None
    # The extraction stage (issue 14): article pages fetched, their text kept.
    extract_enabled: bool = True  # off: collection goes on without the page fetches
    article_queue_url: str | None = None
    extract_max_bytes: int = 2 * 1024 * 1024
    extract_min_chars: int = 0  # 0: newsdesk.extract.page.DEFAULT_MIN_CHARS
    extract_host_interval_seconds: float = 2.0  # between two requests to one host
    extract_host_max_failures: int = 3  # failed pages in a row that open a host's breaker
    extract_max_attempts: int = 3  # a page that failed for a passing reason is tried again
    article_text_retention_days: float = 30.0
    cluster_copies_count: bool = False  # copies count toward an issue's minimum size
    cluster_pending_wait_minutes: float = 30.0  # an article waits this long for its text
    # Issues that live across runs (issue 15): one idle this long closes.
    issue_idle_hours: float = 12.0
    event_bus_name: str | None = None  # issue events are published there (None: kept only)
    data_dir: Path = field(default_factory=lambda: Path.home() / ".local/share/newsdesk")
    timezone: str = DEFAULT_TIMEZONE  # the command line's, for times a person reads

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        reader = _Reader(env)
        # Under `sam local invoke` (which sets AWS_SAM_LOCAL) the template's empty
        # AWS_ENDPOINT_URL would send every call to real AWS with the developer's credentials.
        if reader.flag("AWS_SAM_LOCAL", False) and reader.text("AWS_ENDPOINT_URL") is None:
            raise SettingsError(
                "AWS_ENDPOINT_URL is not set under sam local: pass --env-vars env.json "
                "(`newsdesk stack` writes one), or every AWS call would go to AWS"
            )
        reader.retired(
            "FETCH_USER_AGENT",
            "the User-Agent is newsdesk's, naming OPERATOR_CONTACT (a feed that needs "
            "another sets user_agent in sources.yaml)",
        )
        defaults = cls()
        return cls(
            database_url=reader.text("DATABASE_URL"),
            db_secret_arn=reader.text("DB_SECRET_ARN"),
            db_host=reader.text("DB_HOST"),
            db_port=reader.number("DB_PORT", int, defaults.db_port, minimum=1, maximum=65535),
            db_name=reader.text("DB_NAME") or defaults.db_name,
            fetch_timeout_seconds=reader.number(
                "FETCH_TIMEOUT_SECONDS", float, defaults.fetch_timeout_seconds, minimum=0.1
            ),
            fetch_max_bytes=reader.number("FETCH_MAX_BYTES", int, defaults.fetch_max_bytes, 1),
            fetch_allow_private_networks=reader.flag("FETCH_ALLOW_PRIVATE_NETWORKS", False),
            fetch_interval_seconds=reader.number(
                "FETCH_INTERVAL_SECONDS", float, defaults.fetch_interval_seconds, minimum=0
            ),
            outlet_max_failures=reader.number(
                "OUTLET_MAX_FAILURES", int, defaults.outlet_max_failures, minimum=1
            ),
            collect_period_seconds=reader.number(
                "COLLECT_PERIOD_SECONDS", int, defaults.collect_period_seconds, minimum=60
            ),
            message_max_age_seconds=reader.number(
                "MESSAGE_MAX_AGE_SECONDS", int, defaults.message_max_age_seconds, minimum=1
            ),
            photo_title_patterns=reader.patterns(
                "PHOTO_TITLE_PATTERNS", defaults.photo_title_patterns
            ),
            entry_max_age_hours=reader.number(
                "ENTRY_MAX_AGE_HOURS", float, defaults.entry_max_age_hours, minimum=1
            ),
            outlet_silent_hours=reader.number(
                "OUTLET_SILENT_HOURS", float, defaults.outlet_silent_hours, minimum=0.5
            ),
            operator_contact=reader.contact("OPERATOR_CONTACT"),
            state_table_name=reader.text("STATE_TABLE_NAME") or defaults.state_table_name,
            outlet_queue_url=reader.text("OUTLET_QUEUE_URL"),
            raw_bucket=reader.text("RAW_BUCKET"),
            sources_path=reader.path("SOURCES_PATH"),
            cluster_method=reader.choice(
                "CLUSTER_METHOD", CLUSTER_METHODS, defaults.cluster_method
            ),
            cluster_threshold=reader.optional_number("CLUSTER_THRESHOLD", minimum=0, maximum=1),
            cluster_min_size=reader.number(
                "CLUSTER_MIN_SIZE", int, defaults.cluster_min_size, minimum=1
            ),
            cluster_window_hours=reader.number(
                "CLUSTER_WINDOW_HOURS", float, defaults.cluster_window_hours, minimum=0.1
            ),
            cluster_queue_url=reader.text("CLUSTER_QUEUE_URL"),
            extract_enabled=reader.flag("EXTRACT_ENABLED", defaults.extract_enabled),
            article_queue_url=reader.text("ARTICLE_QUEUE_URL"),
            extract_max_bytes=reader.number(
                "EXTRACT_MAX_BYTES", int, defaults.extract_max_bytes, minimum=1
            ),
            extract_min_chars=reader.number(
                "EXTRACT_MIN_CHARS", int, defaults.extract_min_chars, minimum=0
            ),
            extract_host_interval_seconds=reader.number(
                "EXTRACT_HOST_INTERVAL_SECONDS",
                float,
                defaults.extract_host_interval_seconds,
                minimum=0,
            ),
            extract_host_max_failures=reader.number(
                "EXTRACT_HOST_MAX_FAILURES", int, defaults.extract_host_max_failures, minimum=1
            ),
            extract_max_attempts=reader.number(
                "EXTRACT_MAX_ATTEMPTS", int, defaults.extract_max_attempts, minimum=1
            ),
            article_text_retention_days=reader.number(
                "ARTICLE_TEXT_RETENTION_DAYS",
                float,
                defaults.article_text_retention_days,
                minimum=1,
            ),
            cluster_copies_count=reader.flag("CLUSTER_COPIES_COUNT", defaults.cluster_copies_count),
            cluster_pending_wait_minutes=reader.number(
                "CLUSTER_PENDING_WAIT_MINUTES",
                float,
                defaults.cluster_pending_wait_minutes,
                minimum=0,
            ),
            issue_idle_hours=reader.number(
                "ISSUE_IDLE_HOURS", float, defaults.issue_idle_hours, minimum=0.1
            ),
            event_bus_name=reader.text("EVENT_BUS_NAME"),
            data_dir=reader.path("NEWSDESK_DATA_DIR") or defaults.data_dir,
            timezone=reader.zone("NEWSDESK_TIMEZONE") or defaults.timezone,
        )

    @property
    def user_agent(self) -> str:
        """The User-Agent of every request but those of a feed with its own (sources.yaml's
        ``user_agent``): newsdesk, OPERATOR_CONTACT, what it does."""
        return user_agent_for(self.operator_contact or LOCAL_CONTACT)

    @property
    def from_address(self) -> str | None:
        """The ``From`` header of every request (RFC 9110 10.1.2: a robot SHOULD send one):
        OPERATOR_CONTACT when it is an e-mail address."""
        contact = self.operator_contact
        return contact if contact is not None and is_email(contact) else None

    def require_operator_contact(self) -> str:
        """OPERATOR_CONTACT, which a function that fetches cannot start without."""
        if self.operator_contact is None:
            raise SettingsError(
                "OPERATOR_CONTACT is not set: every request names whom a webmaster can ask "
                "(a URL or an e-mail address; the template's OperatorContact parameter)"
            )
        return self.operator_contact

    @property
    def zone(self) -> ZoneInfo:
        """NEWSDESK_TIMEZONE's zone (checked by ``from_env`` when it is set)."""
        return _zone(self.timezone, "NEWSDESK_TIMEZONE")

    @property
    def extraction_queue(self) -> str | None:
        """Where new articles are queued for extraction: ARTICLE_QUEUE_URL, unless extraction
        is off (EXTRACT_ENABLED=false) or there is no queue."""
        return self.article_queue_url if self.extract_enabled else None

    def require_queue_url(self) -> str:
        if not self.outlet_queue_url:
            raise SettingsError("OUTLET_QUEUE_URL is not set")
        return self.outlet_queue_url


def is_email(contact: str) -> bool:
    return re.fullmatch(EMAIL_PATTERN, contact) is not None


def user_agent_for(contact: str) -> str:
    """``newsdesk/0.1.0 (+https://ops.example/newsdesk; collects news feeds and …)``, the
    contact an e-mail address as it is, LOCAL_CONTACT as a local run."""
    if contact == LOCAL_CONTACT:
        who = "local run, no operator contact"
    else:
        who = contact if is_email(contact) else f"+{contact}"
    return f"{PRODUCT}/{__version__} ({who}; {WHAT_IT_DOES})"


def contact_problem(value: str) -> str | None:
    """What makes ``value`` no contact, or None: an http(s) URL or an e-mail address (or
    LOCAL_CONTACT), printable ASCII without spaces, at most MAX_CONTACT_LENGTH characters."""
    if len(value) > MAX_CONTACT_LENGTH:
        return f"longer than {MAX_CONTACT_LENGTH} characters ({len(value)})"
    if value == LOCAL_CONTACT or re.fullmatch(CONTACT_PATTERN, value):
        return None
    return (
        f"not a URL or an e-mail address: {value!r} (whom a webmaster can ask about "
        "newsdesk's requests: https://… or name@example.org)"
    )


def user_agent_problem(value: str) -> str | None:
    """What makes ``value`` unfit for a User-Agent header, or None: it must be one line of
    printable ASCII (HTTP header values are bytes; requests refuses a newline), not empty,
    at most MAX_USER_AGENT_LENGTH characters."""
    if not value.strip():
        return "empty"
    if len(value) > MAX_USER_AGENT_LENGTH:
        return f"longer than {MAX_USER_AGENT_LENGTH} characters ({len(value)})"
    bad = next((c for c in value if not " " <= c <= "~"), None)
    if bad is not None:
        return f"not one line of printable ASCII (contains {bad!r})"
    return None


def _zone(name: str, variable: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise SettingsError(
            f"{variable}: not a time zone: {name!r} (an IANA name, such as Asia/Seoul or UTC)"
        ) from None


class _Reader:
    """Parses one variable at a time and names it in every error."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def text(self, name: str) -> str | None:
        value = self._env.get(name, "").strip()
        return value or None

    def contact(self, name: str) -> str | None:
        value = self.text(name)
        problem = contact_problem(value) if value is not None else None
        if problem:
            raise SettingsError(f"{name}: {problem}")
        return value

    def retired(self, name: str, instead: str) -> None:
        if self.text(name) is not None:
            raise SettingsError(f"{name} is no longer read: {instead}")

    def zone(self, name: str) -> str | None:
        value = self.text(name)
        if value is not None:
            _zone(value, name)
        return value

    def path(self, name: str) -> Path | None:
        value = self.text(name)
        return Path(value).expanduser() if value else None

    def number(
        self,
        name: str,
        kind: Callable[[str], N],
        default: N,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> N:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            value = kind(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
        if minimum is not None and value < minimum:
            raise SettingsError(f"{name}: must be at least {minimum}, got {raw!r}")
        if maximum is not None and value > maximum:
            raise SettingsError(f"{name}: must be at most {maximum}, got {raw!r}")
        return value

    def optional_number(self, name: str, minimum: float, maximum: float) -> float | None:
        if self.text(name) is None:
            return None
        return self.number(name, float, 0.0, minimum=minimum, maximum=maximum)

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.text(name)
        if value is None:
            return default
        if value not in choices:
            raise SettingsError(f"{name}: expected one of {', '.join(choices)}, got {value!r}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = self.text(name)
        if raw is None:
            return default
        lowered = raw.lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise SettingsError(f"{name}: expected true or false, got {raw!r}")

    def patterns(self, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
        raw = self.text(name)
        if raw is None:
            return default
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
