"""The locks: every `requirements.txt` a deploy unit installs (a layer's, an image's, the
Lambda runtime's stand-in), pinned with hashes from its `requirements.in`, for the functions'
platform (Python 3.12 on arm64 Linux, whatever this machine is). A lock is resolved under the
constraints of the locks installed before it in any unit (the runtime's, then the common
layer's), so that packages two of them hold have one version: layers share /opt/python, and
a layer's copy of a package shadows the runtime's.

Usage: python -m infra.locks refresh   (make locks: resolve again, keeping the pins that hold)
       python -m infra.locks check     (CI: a lock that no longer matches its inputs fails)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.artifacts import ROOT, pins, units, uv

PLATFORM = ("--python-version", "3.12", "--python-platform", "aarch64-manylinux_2_28")
COMMAND = "make locks"  # what the locks' header says made them


def order() -> dict[Path, tuple[Path, ...]]:
    """Each lock and the locks it is resolved under, in an order that resolves those first."""
    before: dict[Path, set[Path]] = {}
    for unit in units():
        for n, lock in enumerate(unit.locks):
            before.setdefault(lock, set()).update(unit.locks[:n])
    ordered: dict[Path, tuple[Path, ...]] = {}
    while len(ordered) < len(before):
        for lock, constraints in before.items():
            if lock not in ordered and constraints <= ordered.keys():
                ordered[lock] = tuple(sorted(constraints, key=list(ordered).index))
    return ordered


def compile_lock(lock: Path, constraints: tuple[Path, ...], output: Path) -> None:
    relative = [str(c.relative_to(ROOT)) for c in constraints]
    command = [uv(), "pip", "compile", "--quiet", "--generate-hashes", *PLATFORM]
    command += ["--custom-compile-command", COMMAND, str(lock.with_suffix(".in").relative_to(ROOT))]
    command += [arg for c in relative for arg in ("-c", c)]
    subprocess.run([*command, "-o", str(output)], check=True, cwd=ROOT)  # noqa: S603  (uv, our files)


def refresh() -> None:
    for lock, constraints in order().items():
        compile_lock(lock, constraints, lock)
        print(f"{lock.relative_to(ROOT)}: {len(pins(lock))} packages")


def check() -> int:
    """Resolve each lock again, preferring its own pins: the pins must come out the same."""
    stale = []
    with tempfile.TemporaryDirectory() as scratch:
        for lock, constraints in order().items():
            again = Path(scratch) / lock.relative_to(ROOT)
            again.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(lock, again)  # uv keeps the pins of an existing output that still hold
            compile_lock(lock, constraints, again)
            if pins(again) != pins(lock):
                added = sorted(set(pins(again).items()) - set(pins(lock).items()))
                stale.append(
                    f"{lock.relative_to(ROOT)} no longer matches "
                    f"{lock.with_suffix('.in').name} (would pin {added}): run `make locks`"
                )
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["refresh", "check"])
    args = parser.parse_args()
    if args.action == "refresh":
        refresh()
    else:
        sys.exit(check())


if __name__ == "__main__":
    main()
