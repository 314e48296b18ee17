"""The SQS messages: the one the fan-out sends for one outlet and the worker reads, the
article queue's and the cluster queue's. Each carries ``"version"``, a key every release
wrote: a message without it is not one of them (a failed record, as any missing key), one of
a version the contract does not name is refused (``MessageRefusedError``: counted, logged,
deleted), never read as the version known here."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from newsdesk.core.errors import MessageError, MessageRefusedError
from newsdesk.core.sources import Feed, Outlet
from newsdesk.core.times import format_time, parse_time

VERSION = 1

# Why a message was refused (MessageRefusedError.reason), as its log line and the handler's
# answer name it.
REFUSED_VERSION = "unknown_version"  # a version the contract does not name
REFUSED_AHEAD = "ahead_of_clock"  # a time more than MAX_CLOCK_SKEW ahead of the clock


@dataclass(frozen=True)
class Refusal:
    """A record refused: deleted, not failed (SQS would deliver it again, to be refused
    again); in the handler's answer."""

    message_id: str
    reason: str

    @classmethod
    def logged(cls, message_id: str, error: MessageRefusedError, logger: Any) -> Refusal:
        """The refusal of ``error``, logged as ``message refused`` with its reason and fields
        (``logger``: the handler's Powertools logger)."""
        extra = {"message_id": message_id, "reason": error.reason, "error": str(error)}
        logger.warning("message refused", extra=extra | error.fields)
        return cls(message_id, error.reason)

    @staticmethod
    def apart(results: list[Any]) -> tuple[list[Any], list[dict[str, str]]]:
        """A batch's results: the reports, and the refusals as the handler's answer has them."""
        refused = [asdict(r) for r in results if isinstance(r, Refusal)]
        return [r for r in results if not isinstance(r, Refusal)], refused


def _versioned(body: str, kind: str, version: int) -> dict[str, Any]:
    """``body``'s JSON object, of ``version``: a MessageError when it is none (or has no
    ``version``), a MessageRefusedError when its version is another (``"1"``, ``true`` and
    ``1.0`` are not the integer 1)."""
    try:
        data: Any = json.loads(body)
    except ValueError as e:
        raise MessageError(f"not {kind}: {type(e).__name__}: {e}") from e
    if not isinstance(data, dict):
        raise MessageError(f"not {kind}: not a JSON object")
    if "version" not in data:
        raise MessageError(f"not {kind}: no 'version'")
    found = data["version"]
    if type(found) is not int or found != version:
        shown = json.dumps(found)[:20]
        raise MessageRefusedError(
            f"{kind.removeprefix('an ')} of version {shown} refused: only version {version} "
            "is read",
            REFUSED_VERSION,
            version=shown,
        )
    return data


@dataclass(frozen=True)
class OutletMessage:
    outlet: Outlet
    scheduled_at: datetime
    ignore_schedule: bool = False  # a round on demand: every feed is due

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": VERSION,
                "source": self.outlet.name,
                "feeds": [_feed_json(f) for f in self.outlet.feeds],
                "scheduled_at": format_time(self.scheduled_at),
                "ignore_schedule": self.ignore_schedule,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, body: str) -> OutletMessage:
        data = _versioned(body, "an outlet message", VERSION)
        try:
            source = data["source"]
            feeds = tuple(_feed(source, f) for f in data["feeds"])
            scheduled_at = parse_time(data["scheduled_at"])
            ignore_schedule = bool(data.get("ignore_schedule", False))
        except (ValueError, KeyError, TypeError) as e:
            raise MessageError(f"not an outlet message: {type(e).__name__}: {e}") from e
        if not isinstance(source, str) or not source:
            raise MessageError("not an outlet message: 'source' is not a name")
        return cls(Outlet(source, feeds), scheduled_at, ignore_schedule)


def _feed_json(feed: Feed) -> dict[str, Any]:
    # the optional fields only when set: such a message is the earlier release's, byte for byte
    document: dict[str, Any] = {"url": feed.url, "category": feed.category}
    if feed.user_agent:
        document["user_agent"] = feed.user_agent
    if not feed.extract:
        document["extract"] = False
    if feed.extract_min_chars is not None:
        document["extract_min_chars"] = feed.extract_min_chars
    return document


def _feed(source: str, document: dict[str, Any]) -> Feed:
    user_agent = document.get("user_agent")  # absent from messages before it existed
    if user_agent is not None and (not isinstance(user_agent, str) or not user_agent):
        raise ValueError(f"'user_agent' is not a name: {user_agent!r}")
    extract = document.get("extract", True)
    min_chars = document.get("extract_min_chars")
    if not isinstance(extract, bool) or not (min_chars is None or isinstance(min_chars, int)):
        raise ValueError("'extract' or 'extract_min_chars' is not what sources.yaml allows")
    return Feed(
        source, str(document["url"]), str(document["category"]), user_agent, extract, min_chars
    )


ARTICLE_VERSION = 1


@dataclass(frozen=True)
class ArticleMessage:
    """The article queue's message: one article's page to fetch and extract (its revision)."""

    article_id: int
    revision: int
    url: str
    send: int = 0  # which send of its outbox row (each a new message for SQS)

    @property
    def host(self) -> str:
        return page_host(self.url)

    @property
    def deduplication_id(self) -> str:
        return f"{self.article_id}-r{self.revision}-s{self.send}"

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": ARTICLE_VERSION,
                "article_id": self.article_id,
                "revision": self.revision,
                "url": self.url,
                "send": self.send,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, body: str) -> ArticleMessage:
        data = _versioned(body, "an article message", ARTICLE_VERSION)
        try:
            article_id, revision, url = data["article_id"], data["revision"], data["url"]
            send = int(data.get("send", 0))
        except (ValueError, KeyError, TypeError) as e:
            raise MessageError(f"not an article message: {type(e).__name__}: {e}") from e
        if not (isinstance(article_id, int) and isinstance(revision, int)):
            raise MessageError("not an article message: 'article_id' or 'revision' not a number")
        if not isinstance(url, str):
            raise MessageError("not an article message: 'url' is not text")
        return cls(article_id, revision, url, send)


def page_host(url: str) -> str:
    """The host a page is fetched from, as pacing, robots.txt and the host breaker key it
    (ASCII: an internationalised name in its IDNA form; "-" when there is none)."""
    try:
        host = urlsplit(url).hostname or ""
        return host.encode("idna").decode("ascii") if host else "-"
    except (ValueError, UnicodeError):
        return "-"


@dataclass(frozen=True)
class ClusterMessage:
    """One category of one clustering run (SQS body, version 1, issue 24): ``{"version": 1,
    "category_id", "category", "at": "…Z"}``; every category of a run has the run's ``at``."""

    category_id: int
    category: str
    at: str

    def to_json(self) -> str:
        document = {
            "version": 1,
            "category_id": self.category_id,
            "category": self.category,
            "at": self.at,
        }
        return json.dumps(document, ensure_ascii=False)

    @classmethod
    def from_json(cls, body: str) -> ClusterMessage:
        try:
            document = json.loads(body)
            version = document.get("version") if isinstance(document, dict) else None
            if type(version) is not int or version != 1:  # true and 1.0 are not 1
                raise ValueError("not a version 1 cluster message")
            return cls(int(document["category_id"]), str(document["category"]), str(document["at"]))
        except (ValueError, KeyError, TypeError) as e:
            raise MessageError(f"not a cluster message: {e}") from e
