"""`newsdesk collect`: one collection round locally, through the fan-out, the worker and the
extractor functions as they run in Lambda, on the sources file given, else the data folder's
(which it remembers: ``context.sources_path``); each feed's line, the totals and each page's
outcome, or one JSON object; a line when the machine looks offline (the round reached no outlet
at all, and no outlet was charged for it). Exit 1 if a message failed, else 3 if feeds were
attempted and not one succeeded."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.report import COOLING_DOWN, FETCHED, SUCCEEDED, OutletReport, totals
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Outlet
from newsdesk.core.times import format_time, utc_now
from newsdesk_local.commands import arguments, context
from newsdesk_local.output import (
    EXIT_FAILED,
    EXIT_NO_FEED,
    EXIT_OK,
    dump,
    error,
    one_line,
    plural,
)

if TYPE_CHECKING:
    from newsdesk_local.rounds import FailedMessage, RoundResult

# The longest a terminal goes without a line while a round waits (a hanging network): with the
# invocations' IDLE_SECONDS between two looks, a line at least every 5 s.
HEARTBEAT_SECONDS = 4.0


def add(commands: arguments.Commands) -> None:
    collect = commands.add_parser("collect", help="run one collection round locally")
    collect.add_argument(
        "--sources",
        type=Path,
        metavar="PATH",
        help="the sources file (default: SOURCES_PATH, else the one the data folder was last "
        "collected with, else the bundled one); the data folder remembers it",
    )
    collect.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    collect.add_argument(
        "--concurrency",
        type=arguments.positive,
        default=8,
        help="worker Lambdas at once (default 8)",
    )
    collect.add_argument(
        "--scheduled",
        action="store_true",
        help="only the feeds that are due, as a scheduled round (default: every feed)",
    )
    collect.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.rounds import run_collect_round

    if args.sources is not None:
        env["SOURCES_PATH"] = str(args.sources.resolve())
    env.update(context.with_sources(env))  # else the data folder's, else the bundled file
    outlets = context.outlets(env)
    zone = Settings.from_env(env).zone
    progress = Progress(outlets, zone, out) if not args.json and out.isatty() else None
    started = utc_now()
    if progress is not None:
        progress.note(STARTING)
    with context.runtime(env, "collect") as runtime:
        context.remember(env)  # the folder's sources from now on, unless told otherwise
        if progress is not None:
            progress.note(collecting(outlets))
        result = run_collect_round(
            runtime, args.concurrency, outlets, not args.scheduled, progress=progress
        )
    if args.json:
        dump(as_json(result), out)
    else:
        print_round(result, runtime.log_path, zone, out, progress)
        print(next_line(started), file=out)
    return exit_code(result)


class Progress:
    """A terminal's round as it goes: each outlet's lines once it is done, in the sources
    file's order (an outlet is printed when it and every outlet before it are done, so the
    lines are those `collect` prints off a terminal, in the same order), a line when the
    pages are next, and one when nothing was printed for HEARTBEAT_SECONDS (``clock``'s)."""

    def __init__(
        self,
        outlets: Sequence[Outlet],
        zone: tzinfo,
        out: TextIO,
        outlet_lines: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._order = [outlet.name for outlet in outlets]
        self._zone, self._out = zone, out
        self._outlet_lines = outlet_lines  # False: the phases alone
        self._done: dict[str, OutletReport | None] = {}
        self.printed: set[str] = set()
        self._clock = clock
        self._last = clock()  # when the last line was printed
        self._pages = False  # the pages' phase

    def note(self, text: str) -> None:
        """A phase of the work begins (a terminal's line, not in the output off one)."""
        print(text, file=self._out, flush=True)
        self._last = self._clock()

    def waiting(self) -> None:
        """A line saying the round is still at work, when none was printed for a while."""
        if self._clock() - self._last < HEARTBEAT_SECONDS:
            return
        if self._pages:
            self.note("… still extracting the article pages")
        else:
            done = sum(name in self._done for name in self._order)
            self.note(f"… still collecting: {done} of {plural(len(self._order), 'outlet')} done")

    def outlets_done(self, reports: list[OutletReport], failed: list[FailedMessage]) -> None:
        self._done |= {report.source: report for report in reports}
        for failure in failed:  # no report: nothing to print, but those after it may go
            self._done.setdefault(failure.source, None)
        for name in self._order:
            if name not in self._done:
                break
            if name not in self.printed:
                self.printed.add(name)
                report = self._done[name]
                if report is not None and self._outlet_lines:
                    print_outlet(report, self._zone, self._out)
                    self._last = self._clock()
        self._out.flush()

    def extracting(self) -> None:
        self._pages = True
        self.note("Extracting the article pages the round found…")


STARTING = "Starting the local services (PostgreSQL, the AWS emulator)…"


def collecting(outlets: Sequence[Outlet]) -> str:
    feeds = sum(len(outlet.feeds) for outlet in outlets)
    return f"Collecting {plural(feeds, 'feed')} of {plural(len(outlets), 'outlet')}…"


def as_json(result: RoundResult) -> dict[str, Any]:
    return {
        "outlets": [o.entry() for o in result.outlets],
        "totals": totals(result.outlets),
        "articles": [a.as_dict() for a in result.articles],
        "unreachable": result.unreachable is not None,
    }


def print_round(
    result: RoundResult,
    log_path: Path,
    zone: tzinfo,
    out: TextIO,
    progress: Progress | None = None,
) -> None:
    """The round's lines: each outlet's (but those ``progress`` printed as they were done),
    the totals, each page's outcome."""
    for outlet in result.outlets:
        if progress is None or outlet.source not in progress.printed:
            print_outlet(outlet, zone, out)
    for line in totals_lines(result):
        print(line, file=out)
    if result.unreachable is not None:
        print(offline_line(len(result.unreachable.outlets)), file=out)
    if result.articles or result.articles_failed:
        for article in result.articles:
            print(article.line(zone), file=out)
        print(pages_line(result), file=out)
    print(f"Round: {result.seconds:.1f} s; Lambda logs in {log_path}", file=out)


def print_outlet(outlet: OutletReport, zone: tzinfo, out: TextIO) -> None:
    if outlet.skipped == COOLING_DOWN:
        print(outlet.cooling_line(zone), file=out)
        return
    for feed in outlet.feeds:
        print(feed.log_line(zone), file=out)


def offline_line(outlets: int) -> str:
    """What a round that reached no outlet at all says (``newsdesk.collect.unreached``)."""
    return (
        f"This machine looks offline: not one of the {plural(outlets, 'outlet')} tried could "
        "be reached (no DNS answer, no connection), so none was charged for it (no breaker "
        "tripped, no feed backed off); collect again once the network is back"
    )


def next_line(started: datetime) -> str:
    """What to look at after a round: its articles, what failed, the issues."""
    return (
        f"Next: `newsdesk articles --since {format_time(started)}` (this round's articles and "
        "their pages), `newsdesk feeds --failing` (what failed), `newsdesk cluster` then "
        "`newsdesk issues` (the issues they make)"
    )


def totals_lines(result: RoundResult) -> list[str]:
    """The round's feeds, articles and schedule, a line each."""
    summed = totals(result.outlets)
    attempted, failed = summed["feeds_attempted"], summed["feeds_failed"]
    cooling = sum(o.skipped == COOLING_DOWN for o in result.outlets)
    return [
        f"Feeds: {attempted} attempted, {attempted - failed} ok, {failed} failed, "
        f"{summed['feeds_skipped']} skipped by the outlet breaker "
        f"({plural(len(result.outlets), 'outlet')}, {cooling} cooling down)",
        f"Articles: {summed['new']} new, {summed['duplicate']} duplicate, "
        f"{summed['photo_filtered']} photo-filtered "
        f"(of {plural(summed['entries_seen'], 'entry')}; "
        f"duplicates: {summed['duplicate_in_message']} within the round, "
        f"{summed['duplicate_url']} by URL, {summed['duplicate_guid']} by guid)",
        f"Schedule: {summed['feeds_not_modified']} not modified, {summed['feeds_not_due']} not "
        f"due, {summed['feeds_skipped_open_breaker']} skipped while their outlet cools down, "
        f"{plural(summed['messages_stale'], 'stale message')}; "
        f"{summed['bytes_received'] / 1024:.1f} kB received",
    ]


def pages_line(result: RoundResult) -> str:
    counts = Counter(a.status for a in result.articles)
    copies = sum(a.copy_of is not None for a in result.articles)
    copies += sum(len(a.original_of) for a in result.articles)
    return (
        f"Pages: {counts['extract_ok']} ok, {counts['filtered_thin']} thin, "
        f"{counts['extract_empty']} empty, {plural(counts['list_page'], 'list page')}, "
        f"{counts['extract_error']} failed, {counts['deferred']} waiting for their host; "
        f"{copies} found to copy another article; "
        f"{plural(len(result.articles_failed), 'message')} failed"
    )


def exit_code(result: RoundResult) -> int:
    """1 if a message failed (SQS would retry it); else 3 if feeds were attempted and not one
    succeeded (offline, or every outlet down); else 0, a round with nothing due included."""
    for failure in result.failed:
        error(f"outlet {failure.source}: {one_line(failure.error)}")
    if result.failed:
        return EXIT_FAILED
    statuses = [f.status for o in result.outlets for f in o.feeds]
    attempted = sum(s in FETCHED for s in statuses)
    if attempted and not any(s in SUCCEEDED for s in statuses):
        error(f"not one of the {plural(attempted, 'feed')} attempted succeeded")
        return EXIT_NO_FEED
    return EXIT_OK
