"""The extraction stage's cost, whole command: `newsdesk collect` over feeds whose articles link
to real pages on 127.0.0.1, with the stage on and off.

The pages are the article-extraction benchmark's 90 (../shared/data/article-extraction; real
sites' HTML, 3 KB to 1.4 MB) and newsdesk's Korean test pages (tests/pages), each served twice
over (two outlets of one story, so the copy keys have work), half under the host 127.0.0.1 and
half under localhost, as two hosts. Pacing is off (EXTRACT_HOST_INTERVAL_SECONDS=0): what is
measured is the stage's own work; with pacing a host's pages take at least the interval each,
one host at a time. Each contender runs --runs times on a fresh data folder; wall time of the
whole command and the CPU time the machine spent meanwhile (less this process's, the server's),
medians printed; the difference between the two is the stage.

Usage: .venv/bin/python benchmarks/extract_round.py [--runs 3] [--data PATH]
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import tempfile
from pathlib import Path

from newsdesk_local.feedserver import FeedServer, Route

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_round import timed  # type: ignore[import-not-found]  # one definition of the timing

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "article-extraction"


def pages(data: Path) -> list[bytes]:
    found = [gzip.decompress(p.read_bytes()) for p in sorted((data / "html").glob("*.html.gz"))]
    found += [p.read_bytes() for p in sorted((ROOT / "tests" / "pages").glob("*.html"))]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    bodies = pages(args.data)
    folder = Path(tempfile.mkdtemp(prefix="extract-round-"))
    with FeedServer() as server:
        lines = []
        for outlet in range(2):
            items = []
            for n, body in enumerate(bodies):
                url = server.add(f"/o{outlet}/view/{n}", Route(body, content_type="text/html"))
                if n % 2:
                    url = url.replace("127.0.0.1", "localhost")
                items.append(f"<item><title>기사 {n}</title><link>{url}</link></item>")
            feed = f'<rss version="2.0"><channel><title>t</title>{"".join(items)}</channel></rss>'
            feed_url = server.add(f"/o{outlet}.xml", Route(feed.encode()))
            lines.append(f'- {{source: "언론사{outlet}", url: "{feed_url}", category: "정치"}}\n')
        sources = folder / "sources.yaml"
        sources.write_text("".join(lines), encoding="utf-8")
        total = 2 * len(bodies)
        print(f"{total} article pages ({len(bodies)} pages, two outlets each), two hosts")
        print(f"medians of {args.runs} runs, whole command\n")
        print(f"{'contender':<34} {'wall s':>8} {'CPU s':>8}   runs (wall)")
        medians = {}
        for label, on in (("collect, extraction off", "false"), ("collect, extraction on", "true")):
            walls, cpus = [], []
            for run in range(args.runs):
                env = dict(
                    os.environ,
                    NEWSDESK_DATA_DIR=str(folder / f"data-{on}-{run}"),
                    FETCH_ALLOW_PRIVATE_NETWORKS="true",
                    EXTRACT_ENABLED=on,
                    EXTRACT_HOST_INTERVAL_SECONDS="0",
                    POWERTOOLS_LOG_LEVEL="WARNING",
                )
                for key in ("AWS_ENDPOINT_URL", "DATABASE_URL"):
                    env.pop(key, None)
                command = [str(Path(sys.executable).parent / "newsdesk"), "collect"]
                wall, cpu = timed([*command, "--sources", str(sources)], env)
                walls.append(wall)
                cpus.append(cpu)
            medians[on] = (statistics.median(walls), statistics.median(cpus))
            runs = " ".join(f"{w:.1f}" for w in walls)
            print(f"{label:<34} {medians[on][0]:>8.1f} {medians[on][1]:>8.1f}   {runs}", flush=True)
    wall = medians["true"][0] - medians["false"][0]
    cpu = medians["true"][1] - medians["false"][1]
    print(
        f"\nthe stage: {wall:.1f} s wall, {cpu:.1f} s CPU for {total} pages: "
        f"{1000 * cpu / total:.0f} ms CPU a page (fetch, raw page, extract, judge, keys, store)"
    )


if __name__ == "__main__":
    main()
