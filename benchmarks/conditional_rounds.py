"""Bytes and funnel of two `newsdesk collect` rounds against 25 loopback feeds.

Five outlets of five feeds, 30 entries each (about 10 kB). Validators vary as they do in the
wild: ten feeds send an ETag, five only Last-Modified, ten neither (their unchanged body is
recognised by its hash). Between the rounds three feeds publish one new entry. The second
round runs as `newsdesk collect` does by default (every feed asked, conditionally); a third,
at once, as a scheduled round does (`--scheduled`: only the feeds that are due).
Usage: .venv/bin/python benchmarks/conditional_rounds.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from newsdesk_local.cli import main as newsdesk
from newsdesk_local.feedserver import FeedServer, Route

OUTLETS = ["연합뉴스", "뉴시스", "한겨레", "경향신문", "동아일보"]
CATEGORIES = ["정치", "경제", "사회", "국제", "문화"]


def feed(outlet: int, category: int, extra: int = 0) -> bytes:
    items = "".join(
        f"<item><title>{OUTLETS[outlet]} {CATEGORIES[category]} 기사 {n} 제목입니다</title>"
        f"<link>https://news{outlet}.example.test/{category}/{n}?utm_source=rss</link>"
        f"<description>{'본문 요약 ' * 20}</description>"
        f"<pubDate>Tue, 01 Dec 2026 0{n % 10}:00:00 +0900</pubDate></item>"
        for n in range(30 + extra)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>{OUTLETS[outlet]}</title><link>https://news{outlet}.example.test/</link>"
        f"<description>d</description>{items}</channel></rss>"
    ).encode()


def route(outlet: int, category: int, extra: int = 0) -> Route:
    index = outlet * 5 + category
    body = feed(outlet, category, extra)
    if index % 5 < 2:
        return Route(body, etag=f'"{index}-{extra}"')
    if index % 5 == 2:
        modified = "Tue, 01 Dec 2026 00:00:00 GMT" if not extra else "Tue, 01 Dec 2026 01:00:00 GMT"
        return Route(body, headers=(("Last-Modified", modified),))
    return Route(body)


def run() -> None:
    with FeedServer() as server, tempfile.TemporaryDirectory() as folder:
        entries = []
        for o in range(5):
            for c in range(5):
                url = server.add(f"/{o}/{c}.xml", route(o, c))
                entries.append(
                    f'- {{source: "{OUTLETS[o]}", url: "{url}", category: "{CATEGORIES[c]}"}}\n'
                )
        sources = Path(folder) / "sources.yaml"
        sources.write_text("".join(entries), encoding="utf-8")
        env = dict(
            os.environ,
            NEWSDESK_DATA_DIR=str(Path(folder) / "data"),
            FETCH_ALLOW_PRIVATE_NETWORKS="true",
            # the collect path only: its articles link to no page
            EXTRACT_ENABLED="false",
        )
        env.pop("AWS_ENDPOINT_URL", None)
        env.pop("DATABASE_URL", None)
        rows = []
        for number in (1, 2, 3):
            if number == 2:  # three feeds publish one more entry
                for o, c in ((0, 0), (1, 2), (2, 4)):
                    server.add(f"/{o}/{c}.xml", route(o, c, extra=1))
            sent_before = sum(server.bytes_sent.values())
            out = io.StringIO()
            scheduled = ["--scheduled"] if number == 3 else []
            with contextlib.redirect_stdout(out):
                newsdesk(["collect", "--sources", str(sources), "--json", *scheduled], env)
            totals = json.loads(out.getvalue())["totals"]
            rows.append((number, sum(server.bytes_sent.values()) - sent_before, totals))
        keys = [
            "feeds_attempted",
            "feeds_ok",
            "feeds_not_modified",
            "feeds_not_due",
            "entries_seen",
            "new",
            "duplicate",
            "bytes_received",
        ]
        print(f"{'round':>5} {'body bytes sent':>16} " + " ".join(f"{k:>19}" for k in keys))
        for number, sent, totals in rows:
            print(f"{number:>5} {sent:>16} " + " ".join(f"{totals[k]:>19}" for k in keys))
        print(f"round 2 / round 1 bytes: {rows[1][1] / rows[0][1]:.3f}")


if __name__ == "__main__":  # the local Lambdas are spawned processes, which import this module
    run()
