"""From a fresh clone to the demo's end, as a new user runs it: `git clone`, then `make demo`,
timed whole, with the install's share named (everything until the demo's first line). The
installers' caches start empty (pip's and uv's, in a folder of the run's own), so nothing a
previous install downloaded is reused; the package index is reached as a user would reach it.

Usage: .venv/bin/python benchmarks/clone_to_demo.py [--commit REV ...] [--python python3]
       (each commit in turn; by default HEAD)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_DEMO_LINE = "Serving demo feeds at "


def once(commit: str, python: str) -> tuple[float, float, int]:
    """(whole seconds, install seconds, exit status) of clone + make demo at ``commit``."""
    scratch = Path(tempfile.mkdtemp(prefix="clone-to-demo-"))
    try:
        env = {
            **os.environ,
            "PIP_CACHE_DIR": str(scratch / "pip-cache"),
            "UV_CACHE_DIR": str(scratch / "uv-cache"),
            "NEWSDESK_DATA_DIR": str(scratch / "data"),
        }
        env.pop("VIRTUAL_ENV", None)
        started = time.monotonic()
        clone = scratch / "newsdesk"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
        demo = subprocess.Popen(
            ["make", "demo", f"PYTHON={python}"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        installed = None
        assert demo.stdout is not None
        for line in demo.stdout:
            if installed is None and line.startswith(FIRST_DEMO_LINE):
                installed = time.monotonic() - started
        status = demo.wait()
        whole = time.monotonic() - started
        return whole, installed if installed is not None else whole, status
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", action="append", help="a revision to measure (repeatable)")
    parser.add_argument("--python", default="python3")
    args = parser.parse_args()
    cores = os.cpu_count()
    print(f"clone + make demo, empty installer caches, {cores} cores, PYTHON={args.python}")
    print(f"{'commit':<12} {'whole s':>8} {'install s':>10} {'demo s':>7} {'exit':>5}")
    for commit in args.commit or ["HEAD"]:
        whole, installed, status = once(commit, args.python)
        demo = whole - installed
        print(f"{commit:<12} {whole:>8.1f} {installed:>10.1f} {demo:>7.1f} {status:>5}")


if __name__ == "__main__":
    main()
