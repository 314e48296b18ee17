"""`newsdesk collect` as a user runs it, whole command, start-up included, against the seed's
serial loop run the same way.

A loopback server holds 40 outlets x 5 feeds (20 articles each), every answer delayed 100 ms;
4 outlets hang (they accept and never answer). FETCH_TIMEOUT_SECONDS = 2 (the seed's
requests.get gets the same timeout). Each contender runs --runs times, each time on a fresh data
folder (so PostgreSQL, moto and the migrations start from nothing, as on a new machine): wall
time of the whole command, the CPU time the machine spent meanwhile, less the benchmark's own
(its feed server), and the CPU time of the command's own processes (its descendants and its
PostgreSQL's, read from /proc as they run: what a shared machine's other work does not
disturb); medians printed, with the load average before each contender. The floor is what no
runner can beat: the hanging outlets' two timeouts plus the slowest healthy outlet's five
answers and the 0.1 s pauses between them.

Python keeps the bytecode it compiles beside each module, as it does on a user's machine: an
environment's PYTHONDONTWRITEBYTECODE is dropped (``--no-bytecode-cache`` keeps it set, every
process then compiling what it imports, each run), and `newsdesk collect` runs once,
unmeasured, before each of its contenders' runs, so that none of them pays for the first
compilation.

Usage: .venv/bin/python benchmarks/local_round.py [--runs 3] [--concurrency 8 32] [--no-seed]
       [--no-bytecode-cache]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from newsdesk_local.feedserver import FeedServer, Route

OUTLETS, FEEDS, HANGING, DELAY, TIMEOUT, INTERVAL = 40, 5, 4, 0.1, 2.0, 0.1
ROOT = Path(__file__).resolve().parent.parent


def feed(outlet: int, number: int) -> bytes:
    items = "".join(
        f"<item><title>언론사 {outlet} 피드 {number} 기사 {i} 제목</title>"
        f"<link>https://outlet{outlet}.example/news/{number}/{i}</link></item>"
        for i in range(20)
    )
    head = '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
    return f"{head}{items}</channel></rss>".encode()


@contextmanager
def serving(folder: Path) -> Iterator[Path]:
    """The outlets on a loopback server; yields the sources file pointing at them."""
    with FeedServer() as server:
        lines = []
        for outlet in range(OUTLETS):
            for number in range(FEEDS):
                path = f"/o{outlet}/f{number}.xml"
                if outlet < HANGING:
                    route = Route(mode="hang")
                else:
                    route = Route(feed(outlet, number), delay=DELAY)
                lines.append(
                    f'- {{source: "언론사{outlet:02d}", url: "{server.add(path, route)}", '
                    f'category: "분류{number}"}}\n'
                )
        sources = folder / "sources.yaml"
        sources.write_text("".join(lines), encoding="utf-8")
        yield sources


def busy_seconds() -> float:
    """CPU time the whole machine has spent, from /proc/stat: a command's processes that are
    not its children when they end (a fork server's, PostgreSQL's) escape getrusage."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class TreeCpu:
    """The CPU seconds of a process's descendants and of the processes whose command line names
    ``marker`` (PostgreSQL's, which leave the tree), from /proc every 20 ms: each process's own
    user and system time, the last seen (a process's last 20 ms are lost)."""

    def __init__(self, root: int, marker: str) -> None:
        self._root, self._marker = root, marker
        self._seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.02):
            parents: dict[int, int] = {}
            times: dict[int, float] = {}
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                parents[int(entry)] = int(stat[1])
                times[int(entry)] = (int(stat[11]) + int(stat[12])) / tick
            tree, grown = {self._root}, True
            while grown:
                grown = False
                for pid, parent in parents.items():
                    if parent in tree and pid not in tree:
                        tree.add(pid)
                        grown = True
            for pid, cpu in times.items():
                if pid in tree or pid in self._seen or self._named(pid):
                    self._seen[pid] = max(cpu, self._seen.get(pid, 0.0))

    def _named(self, pid: int) -> bool:
        try:
            return self._marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(
                errors="replace"
            )
        except OSError:
            return False

    def total(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self._seen.values())


def timed(command: list[str], env: dict[str, str], marker: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the machine less this process's own: the command, all it
    started, and whatever else ran meanwhile on a machine that should be idle; CPU seconds of
    the command's own processes, ``marker`` naming its PostgreSQL's)."""
    busy, own = busy_seconds(), own_seconds()
    started = time.monotonic()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    tree = TreeCpu(process.pid, marker)
    _, stderr = process.communicate()
    wall = time.monotonic() - started
    cpu = busy_seconds() - busy - (own_seconds() - own)
    command_cpu = tree.total()
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-2000:]}")
    return wall, cpu, command_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--no-seed", action="store_true", help="skip the seed's serial loop")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as the environment sets it",
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="local-round-"))
    bin_dir = Path(sys.executable).parent
    contenders: list[tuple[str, list[str]]] = []
    if not args.no_seed:
        contenders.append(
            ("seed serial loop", [sys.executable, "-m", "newsdesk_local.seed_reference", "collect"])
        )
    for n in args.concurrency:
        contenders.append((f"newsdesk collect --concurrency {n}", [str(bin_dir / "newsdesk")]))
    floor = 2 * TIMEOUT + FEEDS * DELAY + (FEEDS - 1) * INTERVAL
    print(f"{OUTLETS} outlets x {FEEDS} feeds, {HANGING} hanging, {DELAY * 1000:.0f} ms answers")
    print(f"floor: {floor:.1f} s; medians of {args.runs} runs, whole command")
    base = dict(os.environ)
    if not args.no_bytecode_cache:
        base.pop("PYTHONDONTWRITEBYTECODE", None)
    print(
        "bytecode: "
        + ("compiled by every process" if "PYTHONDONTWRITEBYTECODE" in base else "cached")
        + "\n"
    )
    print(f"{'contender':<36} {'wall s':>8} {'CPU s':>8} {'own CPU':>8} {'load':>5}   runs (wall)")
    warmed = "PYTHONDONTWRITEBYTECODE" in base  # nothing is kept to warm
    with serving(folder) as sources:
        for number, (label, command) in enumerate(contenders):
            walls, cpus, owns = [], [], []
            load = os.getloadavg()[0]
            # bytecode cached, `newsdesk collect` runs once unmeasured first: what it imports
            # is compiled and kept (not the seed's loop: a minute of waiting for a few imports)
            first = 0
            if not warmed and "seed" not in label:
                first, warmed = -1, True
            for run in range(first, args.runs):
                env = dict(
                    base,
                    # pg_ctl takes no spaces in its paths
                    NEWSDESK_DATA_DIR=str(folder / f"data-{number}-{run}"),
                    FETCH_TIMEOUT_SECONDS=str(TIMEOUT),
                    FETCH_ALLOW_PRIVATE_NETWORKS="true",
                    # the collect path only: its articles link to no page
                    EXTRACT_ENABLED="false",
                    POWERTOOLS_LOG_LEVEL="WARNING",
                )
                for key in ("AWS_ENDPOINT_URL", "DATABASE_URL"):
                    env.pop(key, None)
                if "seed" in label:
                    full = [*command, str(sources), "--timeout", str(TIMEOUT)]
                else:
                    full = [
                        *command,
                        "collect",
                        "--sources",
                        str(sources),
                        "--concurrency",
                        label.rsplit(" ", 1)[1],
                    ]
                wall, cpu, command_cpu = timed(full, env, env["NEWSDESK_DATA_DIR"])
                if run < 0:
                    continue
                walls.append(wall)
                cpus.append(cpu)
                owns.append(command_cpu)
            runs = " ".join(f"{w:.1f}" for w in walls)
            print(
                f"{label:<36} {statistics.median(walls):>8.1f} {statistics.median(cpus):>8.1f}"
                f" {statistics.median(owns):>8.1f} {load:>5.2f}   {runs}",
                flush=True,
            )


if __name__ == "__main__":
    main()
