"""The extraction stage's settings: article pages fetched, judged and kept (newsdesk.extract,
the worker's outbox and the extractor; docs/extraction.md)."""

from __future__ import annotations

from dataclasses import dataclass

from newsdesk.core.settings.table import (
    EXTRACTOR,
    FETCHING,
    FLAG,
    INTEGER,
    NUMBER,
    TEXT,
    setting,
)


@dataclass(frozen=True)
class ExtractSettings:
    extract_enabled: bool = setting(
        True,
        FLAG,
        "fetch each new article's page and extract its text; false: nothing is queued or "
        "fetched, collection goes on (the emergency off; queued articles wait in the outbox)",
        FETCHING,
    )
    article_queue_url: str | None = setting(
        None,
        TEXT,
        "the FIFO queue new and revised articles are sent to for extraction",
        FETCHING,
    )
    extract_max_bytes: int = setting(
        2 * 1024 * 1024,
        INTEGER,
        "a larger page is `extract_error`, `too_large`",
        (EXTRACTOR,),
        minimum=1,
    )
    extract_min_chars: int = setting(
        0,
        INTEGER,
        "pages with less text (characters of its sentence lines, spaces not counted) are "
        "`filtered_thin`; an outlet may set its own (sources.yaml's `extract_min_chars`)",
        (EXTRACTOR,),
        minimum=0,
        shown="0: the page judge's `DEFAULT_MIN_CHARS` (docs/extraction.md)",
    )
    extract_host_interval_seconds: float = setting(
        2.0,
        NUMBER,
        "between two requests to one host (a robots.txt `Crawl-delay`, up to 30 s, raises it)",
        (EXTRACTOR,),
        minimum=0,
    )
    extract_host_max_failures: int = setting(
        3,
        INTEGER,
        "failed pages in a row (no answer, 5xx, 429) that open a host's breaker",
        (EXTRACTOR,),
        minimum=1,
    )
    extract_max_attempts: int = setting(
        3,
        INTEGER,
        "a page that failed for a reason that may pass is tried this many times in all",
        (EXTRACTOR,),
        minimum=1,
    )
    article_text_retention_days: float = setting(
        30.0,
        NUMBER,
        "extracted texts older than this are removed (their outcome and keys stay)",
        (EXTRACTOR,),
        minimum=1,
    )
