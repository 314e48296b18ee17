"""A collection round at scale: the seed's serial loop against newsdesk's fan-out.

A loopback server holds 100 outlets x 10 feeds (20 articles each, an ETag each), every answer
delayed 20-300 ms. 10 outlets are dead (they accept and never answer), 5 trickle (a byte every
half second, then drop the connection), 5 answer 503 with Retry-After. Contenders, each on a
fresh server, PostgreSQL and moto, two rounds each:

  seed       the source document's loop: one process walks every outlet and feed, requests
             with timeout=10, its two-failure breaker, 0.1 s between feeds, feedparser,
             INSERT ... ON CONFLICT (origin_url) DO NOTHING
  newsdesk   fan-out + workers (one outlet per invocation) at concurrency 8 and 32, warm
             containers (spawned processes), FETCH_TIMEOUT_SECONDS = --timeout

and newsdesk at the highest concurrency on the same outlets with none dead, for the cost of
the dead ones. Requests and bytes are counted by the server (body bytes sent).

Usage: .venv/bin/python benchmarks/collect_round.py [--outlets 100] [--concurrency 8 32]
       [--timeout 10] [--no-seed]
Takes about 20 minutes with the seed (its two rounds are most of it), 3 without.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import psycopg2
import psycopg2.extras

from newsdesk.core.report import totals
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed
from newsdesk_local.feedserver import FeedServer, Route
from newsdesk_local.invocations import WORKER, pool_of
from newsdesk_local.rounds import run_collect_round
from newsdesk_local.seed_reference import SEED_TABLE, seed_collect
from newsdesk_local.services import LocalServices

FEEDS_PER_OUTLET = 10
ITEMS_PER_FEED = 20
CATEGORIES = ("정치", "경제", "사회", "국제", "문화", "스포츠", "IT", "연예", "생활", "오피니언")
DEAD, TRICKLE, UNAVAILABLE, LIVE = "dead", "trickle", "503", "live"


@dataclass(frozen=True)
class FeedSpec:
    source: str
    category: str
    path: str
    kind: str
    route: Route


def outlets(count: int, with_dead: bool, seed: int = 7) -> list[FeedSpec]:
    """The same outlets on every call (seeded), dead ones live when ``with_dead`` is false."""
    rng = random.Random(seed)
    kinds = [DEAD] * (count // 10) + [TRICKLE] * (count // 20) + [UNAVAILABLE] * (count // 20)
    kinds += [LIVE] * (count - len(kinds))
    rng.shuffle(kinds)
    published = datetime(2026, 12, 1, 9, tzinfo=UTC)
    specs: list[FeedSpec] = []
    for o, kind in enumerate(kinds):
        source = f"언론사{o:03d}"
        for f in range(FEEDS_PER_OUTLET):
            path = f"/o{o:03d}/f{f}.xml"
            delay = rng.uniform(0.02, 0.3)
            body = rss(source, o, f, published)
            if kind == DEAD and with_dead:
                route = Route(mode="hang")
            elif kind == TRICKLE:
                # 24 bytes at 2 a second: 12 s, longer than the timeout, then the connection drops
                route = Route(
                    body=body[:24],
                    mode="trickle",
                    interval=0.5,
                    headers=(("Content-Length", str(len(body))),),
                )
            elif kind == UNAVAILABLE:
                route = Route(body=b"busy", status=503, headers=(("Retry-After", "3600"),))
            else:
                route = Route(body=body, etag=f'"o{o}f{f}"')
            specs.append(FeedSpec(source, CATEGORIES[f], path, kind, replace(route, delay=delay)))
    return specs


def rss(source: str, o: int, f: int, published: datetime) -> bytes:
    items = "".join(
        f"<item><title>{source} {CATEGORIES[f]} 기사 {i}: 정부 발표와 시장 반응</title>"
        f"<link>https://news{o:03d}.example/{f}/{i}</link>"
        f"<description>{'본문 요약 ' * 20}</description>"
        f"<pubDate>{format_datetime(published - timedelta(minutes=7 * i))}</pubDate></item>"
        for i in range(ITEMS_PER_FEED)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>{source}</title><link>https://news{o:03d}.example/</link>{items}</channel></rss>"
    ).encode()


@contextmanager
def serving(specs: list[FeedSpec]) -> Iterator[FeedServer]:
    with FeedServer() as server:
        for spec in specs:
            server.add(spec.path, spec.route)
        yield server


@dataclass
class Round:
    contender: str
    number: int
    seconds: float
    requests: int
    bytes_sent: int
    new: int
    not_modified: int
    failed: int
    skipped: int


class Counted:
    """The server's request and byte counts over one round."""

    def __init__(self, server: FeedServer) -> None:
        self._server = server
        self._requests, self._bytes = self._now()

    def _now(self) -> tuple[int, int]:
        return sum(self._server.requests.values()), sum(self._server.bytes_sent.values())

    def since(self) -> tuple[int, int]:
        requests_now, bytes_now = self._now()
        return requests_now - self._requests, bytes_now - self._bytes


# --- the seed's loop -----------------------------------------------------------------------


def seed_rounds(specs: list[FeedSpec], timeout: float, folder: Path) -> list[Round]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        postgres = pgserver.get_server(folder / "seed-pg", cleanup_mode="stop")
    conn = psycopg2.connect(postgres.get_uri())
    with conn, conn.cursor() as cursor:
        cursor.execute(SEED_TABLE)
    rounds = []
    with serving(specs) as server:
        for number in (1, 2):
            counted = Counted(server)
            started = time.monotonic()
            feeds = [Feed(s.source, server.url(s.path), s.category) for s in specs]
            new, failed, skipped = seed_collect(feeds, conn, timeout)
            sent = counted.since()
            rounds.append(
                Round(
                    "seed (serial)",
                    number,
                    time.monotonic() - started,
                    *sent,
                    new,
                    0,
                    failed,
                    skipped,
                )
            )
    conn.close()
    postgres.cleanup()
    return rounds


# --- newsdesk --------------------------------------------------------------------------------


def newsdesk_rounds(
    label: str, specs: list[FeedSpec], concurrency: int, timeout: float, folder: Path, count: int
) -> tuple[list[Round], float]:
    slug = "".join(c if c.isalnum() else "-" for c in label)  # pg_ctl takes no spaces
    sources = folder / f"sources-{slug}.yaml"
    rounds = []
    with serving(specs) as server:
        sources.write_text(
            "".join(
                f'- {{source: "{s.source}", url: "{server.url(s.path)}", '
                f'category: "{s.category}"}}\n'
                for s in specs
            ),
            encoding="utf-8",
        )
        env = dict(
            os.environ,
            NEWSDESK_DATA_DIR=str(folder / f"data-{slug}"),
            SOURCES_PATH=str(sources),
            FETCH_TIMEOUT_SECONDS=str(timeout),
            FETCH_ALLOW_PRIVATE_NETWORKS="true",
            # the collect path only: its articles link to no page
            EXTRACT_ENABLED="false",
            POWERTOOLS_LOG_LEVEL="WARNING",
        )
        env.pop("AWS_ENDPOINT_URL", None)
        with (
            LocalServices(Settings.from_env(env), env) as services,
            pool_of(services, WORKER, concurrency) as pool,
        ):
            started = time.monotonic()
            pool.warm()
            warm_seconds = time.monotonic() - started
            for number in range(1, count + 1):
                counted = Counted(server)
                result = run_collect_round(services, concurrency, workers=pool)
                sent = counted.since()
                t = totals(result.outlets)
                not_sent = FEEDS_PER_OUTLET * result.fanout["outlets_skipped_open"]
                rounds.append(
                    Round(
                        label,
                        number,
                        result.seconds,
                        *sent,
                        t["new"],
                        t["feeds_not_modified"],
                        t["feeds_failed"],
                        t["feeds_skipped"] + t["feeds_skipped_open_breaker"] + not_sent,
                    )
                )
                if result.failed:
                    print(f"  {label} round {number}: {len(result.failed)} messages failed")
    return rounds, warm_seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--outlets", type=int, default=100)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--no-seed", action="store_true", help="skip the seed's serial loop")
    args = parser.parse_args()
    with_dead = outlets(args.outlets, with_dead=True)
    kinds = {
        kind: len({s.source for s in with_dead if s.kind == kind})
        for kind in (LIVE, DEAD, TRICKLE, UNAVAILABLE)
    }
    print(f"{args.outlets} outlets x {FEEDS_PER_OUTLET} feeds; {kinds}; timeout {args.timeout:g} s")
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="newsdesk-bench-") as name:
        folder = Path(name)
        os.chmod(folder, 0o755)  # pgserver runs PostgreSQL as its own user when run as root
        if not args.no_seed:
            rounds += seed_rounds(with_dead, args.timeout, folder)
            print_rounds(rounds[-2:])
        for concurrency in args.concurrency:
            label = f"newsdesk c={concurrency}"
            done, warm = newsdesk_rounds(label, with_dead, concurrency, args.timeout, folder, 2)
            print(f"  ({label}: {concurrency} containers started in {warm:.1f} s, not counted)")
            rounds += done
            print_rounds(done)
        top = max(args.concurrency)
        baseline, _ = newsdesk_rounds(
            f"newsdesk c={top}, none dead",
            outlets(args.outlets, with_dead=False),
            top,
            args.timeout,
            folder,
            1,
        )
        rounds += baseline
    print()
    print_rounds(rounds)
    by = {(r.contender, r.number): r for r in rounds}
    fastest = by[(f"newsdesk c={top}", 1)]
    print()
    if not args.no_seed:
        for number in (1, 2):
            seed, ours = by[("seed (serial)", number)], by[(f"newsdesk c={top}", number)]
            print(
                f"round {number}: seed / newsdesk c={top}: "
                f"{seed.seconds / ours.seconds:.1f}x time, "
                f"{seed.requests / max(ours.requests, 1):.2f}x requests, "
                f"{seed.bytes_sent / 1e6:.2f} MB against {ours.bytes_sent / 1e6:.2f} MB"
            )
    extra = fastest.seconds - baseline[0].seconds
    print(
        f"dead outlets cost newsdesk c={top} {extra:+.1f} s over the round with none dead "
        f"(bound: 2 x timeout = {2 * args.timeout:g} s)"
    )


def print_rounds(rounds: list[Round]) -> None:
    print(
        f"{'contender':<28} {'round':>5} {'wall s':>7} {'requests':>8} {'MB sent':>8} "
        f"{'new':>6} {'304/same':>8} {'failed':>6} {'skipped':>7}"
    )
    for r in rounds:
        print(
            f"{r.contender:<28} {r.number:>5} {r.seconds:>7.1f} {r.requests:>8} "
            f"{r.bytes_sent / 1e6:>8.2f} {r.new:>6} {r.not_modified:>8} {r.failed:>6} "
            f"{r.skipped:>7}"
        )


if __name__ == "__main__":  # the local Lambdas are spawned processes, which import this module
    main()
