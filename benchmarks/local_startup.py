"""The local runtime's fixed cost, before and after any round: PostgreSQL and AWS started,
every resource of the template created, the migrations applied (start), and the state saved
and everything stopped (stop); on a new data folder (PostgreSQL's initdb included) and on one
used before. Medians of --runs, each in a fresh interpreter, as `newsdesk` runs them.

Usage: .venv/bin/python benchmarks/local_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ONCE = """
import json, os, time
from newsdesk.core.settings import Settings
from newsdesk_local.services import LocalServices
started = time.monotonic()
services = LocalServices(Settings.from_env(), os.environ, containers=False)
services.__enter__()
up = time.monotonic()
services.__exit__(None, None, None)
print(json.dumps({"start": up - started, "stop": time.monotonic() - up}))
"""


def once(data_dir: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_ENDPOINT_URL", "DATABASE_URL")}
    env["NEWSDESK_DATA_DIR"] = str(data_dir)
    out = subprocess.run(
        [sys.executable, "-c", ONCE], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="local-startup-"))
    print(f"{'data folder':<12} {'start s':>8} {'stop s':>8}   (medians of {args.runs})")
    fresh = [once(folder / f"new-{n}") for n in range(args.runs)]
    used = [once(folder / "new-0") for _ in range(args.runs)]
    for label, samples in (("new", fresh), ("used before", used)):
        start = statistics.median(s["start"] for s in samples)
        stop = statistics.median(s["stop"] for s in samples)
        print(f"{label:<12} {start:>8.2f} {stop:>8.2f}")


if __name__ == "__main__":
    main()
