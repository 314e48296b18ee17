"""The collect stage's settings: the schedule, the fetch, the outlet's breaker, what of a feed
is stored (newsdesk.collect, the fan-out and the worker)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from newsdesk.core.settings.table import (
    CONTACT,
    EXTRACTOR,
    FANOUT,
    FETCHING,
    FLAG,
    INTEGER,
    NUMBER,
    PATH,
    PATTERNS,
    TEXT,
    WORKER,
    setting,
)

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

# Variables no longer read, refused when set, with what replaced them.
RETIRED = {
    "FETCH_USER_AGENT": "the User-Agent is newsdesk's, naming OPERATOR_CONTACT (a feed that "
    "needs another sets user_agent in sources.yaml)",
}


@dataclass(frozen=True)
class CollectSettings:
    # The schedule's period (the template's CollectSchedule, rate(30 minutes): a test holds
    # them equal).
    collect_period_seconds: int = setting(
        1800,
        INTEGER,
        "the schedule's period: a feed that publishes is checked every period, an unchanged or "
        "failing one 2, 4, 8 … periods later (at most 6 hours); the first cool-down of an "
        "outlet's breaker and of a host's, and the extractor's first retry",
        (FANOUT, WORKER, EXTRACTOR),
        minimum=60,
    )
    message_max_age_seconds: int = setting(
        1800,
        INTEGER,
        "an outlet message older than this is dropped (counted `MessagesStale`); the next "
        "round covers it",
        (WORKER,),
        minimum=1,
    )
    fetch_timeout_seconds: float = setting(
        10.0,
        NUMBER,
        "bounds the **whole** fetch of one feed or page, from its DNS query to its last byte, "
        "redirects included: a server that hangs or trickles bytes, a resolver that does not "
        "answer or addresses that never connect hold a function no longer",
        FETCHING,
        minimum=0.1,
    )
    fetch_max_bytes: int = setting(
        5 * 1024 * 1024,
        INTEGER,
        "a larger feed body (after gzip) is a failed feed",
        (WORKER,),
        in_template=False,
        minimum=1,
    )
    fetch_allow_private_networks: bool = setting(
        False,
        FLAG,
        "false: refuse feeds and pages that reach loopback, private, link-local or metadata "
        "addresses, also after redirects; the demo and tests set it true for 127.0.0.1",
        FETCHING,
    )
    fetch_interval_seconds: float = setting(
        0.1,
        NUMBER,
        "the pause between two requests to one outlet",
        (WORKER,),
        in_template=False,
        minimum=0,
    )
    operator_contact: str | None = setting(
        None,
        CONTACT,
        "whom a webmaster who finds newsdesk in their logs can ask (a URL or an e-mail "
        "address): every request's `User-Agent` names it (`newsdesk/0.1.0 "
        "(+https://ops.example.org/newsdesk; collects news feeds and the article pages they "
        "link to)`), and an e-mail address is also every request's `From`, a feed's own "
        "`user_agent`'s too; `local`: a run on this machine, said as such",
        FETCHING,
        shown="unset: the worker and the extractor refuse to start; the `newsdesk` command's "
        "is `local`",
    )
    outlet_max_failures: int = setting(
        2,
        INTEGER,
        "failed feeds in one message, counted cumulatively, after which the outlet's "
        "remaining feeds are skipped and its breaker opens (it cools down)",
        (WORKER,),
        minimum=1,
    )
    photo_title_patterns: tuple[str, ...] = setting(
        DEFAULT_PHOTO_TITLE_PATTERNS,
        PATTERNS,
        "titles matching one of these at their start are photo news, counted "
        "`photo_filtered` and not stored",
        (WORKER,),
        in_template=False,
    )
    entry_max_age_hours: float = setting(
        72.0,
        NUMBER,
        "entries published longer ago than this are counted `too_old` and not stored, so a "
        "newly added feed, or one republishing its archive, does not flood today's issues; "
        "entries without a date are stored and counted `undated`",
        (WORKER,),
        minimum=1,
    )
    outlet_silent_hours: float = setting(
        6.0,
        NUMBER,
        "the fan-out counts an outlet silent (metric `SilentOutlets`, alarm "
        "`…-outlet-silent`) when none of its feeds has succeeded for this long and it is not "
        "merely waiting on a long `ttl`; a new outlet only once it has been tried this long",
        (FANOUT,),
        minimum=0.5,
    )
    state_table_name: str = setting(
        "newsdesk-state",
        TEXT,
        "the DynamoDB table of the feeds', outlets' and hosts' records",
        (FANOUT, WORKER, EXTRACTOR),
    )
    outlet_queue_url: str | None = setting(
        None, TEXT, "the queue the fan-out sends one message per outlet to", (FANOUT,)
    )
    raw_bucket: str | None = setting(
        None,
        TEXT,
        "the S3 bucket of the raw layer: feed bodies and article pages as fetched",
        FETCHING,
        shown="unset: bodies are not kept",
    )
    sources_path: Path | None = setting(
        None,
        PATH,
        "the feeds to collect (sources.yaml); the extractor reads its news agencies",
        (FANOUT, EXTRACTOR),
        in_template=False,
        shown="unset: the bundled `sources.yaml` (locally: the data folder's, local-runtime.md)",
    )
