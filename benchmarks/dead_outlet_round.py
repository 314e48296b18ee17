"""Two `newsdesk collect --json` rounds against a loopback feed server with a dead outlet.

Three live feeds (two outlets) and one outlet of six feeds that never answer; the fetch bound is
FETCH_TIMEOUT_SECONDS=2. Prints each round's wall time and totals, and the requests the dead
outlet received: two in the first round (the breaker), none in the second (its cool-down).
Usage: .venv/bin/python benchmarks/dead_outlet_round.py [--concurrency N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

from newsdesk_local.cli import main as newsdesk
from newsdesk_local.feedserver import FeedServer, Route

FEEDS = Path(__file__).resolve().parent.parent / "tests" / "feeds"


def run(concurrency: int) -> None:
    with FeedServer() as server, tempfile.TemporaryDirectory() as folder:
        live = [
            ("연합뉴스", "good.xml", "정치", "application/rss+xml"),
            ("연합뉴스", "atom.xml", "경제", "application/atom+xml"),
            ("매일경제", "cp949-labelled-euc-kr.xml", "경제", "text/xml; charset=euc-kr"),
        ]
        entries = [
            (
                source,
                server.add(f"/{name}", Route((FEEDS / name).read_bytes(), content_type=ct)),
                category,
            )
            for source, name, category, ct in live
        ]
        entries += [
            ("프레시안", server.add(f"/dead/{n}", Route(mode="hang")), "정치") for n in range(6)
        ]
        sources = Path(folder) / "sources.yaml"
        sources.write_text(
            "".join(f'- {{source: "{s}", url: "{u}", category: "{c}"}}\n' for s, u, c in entries),
            encoding="utf-8",
        )
        env = dict(
            os.environ,
            NEWSDESK_DATA_DIR=str(Path(folder) / "data"),
            FETCH_TIMEOUT_SECONDS="2",
            FETCH_ALLOW_PRIVATE_NETWORKS="true",
            # the collect path only: its articles link to no page
            EXTRACT_ENABLED="false",
        )
        env.pop("AWS_ENDPOINT_URL", None)
        args = ["collect", "--sources", str(sources), "--json", "--concurrency", str(concurrency)]
        print(
            f"{'round':>5} {'wall s':>7} {'new':>4} {'dup':>4} {'photo':>5} {'not mod':>7} "
            f"{'failed':>6} {'skipped':>7} {'outlets':>7}"
        )
        for number in (1, 2):
            out = io.StringIO()
            started = time.monotonic()
            with contextlib.redirect_stdout(out):
                newsdesk(args, env)
            seconds = time.monotonic() - started
            t = json.loads(out.getvalue())["totals"]
            print(
                f"{number:>5} {seconds:>7.1f} {t['new']:>4} {t['duplicate']:>4} "
                f"{t['photo_filtered']:>5} {t['feeds_not_modified']:>7} {t['feeds_failed']:>6} "
                f"{t['feeds_skipped']:>7} {len(json.loads(out.getvalue())['outlets']):>7}"
            )
        dead = sum(n for path, n in server.requests.items() if path.startswith("/dead/"))
        print(f"requests to the dead outlet over both rounds: {dead}")


if __name__ == "__main__":  # the local Lambdas are spawned processes, which import this module
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, default=8)
    run(parser.parse_args().concurrency)
