"""The locks: every `requirements.txt` a deploy unit installs (a layer's, an image's, the
Lambda runtime's stand-in), pinned with hashes from its `requirements.in`, for the functions'
platform (Python 3.12 on arm64 Linux, whatever this machine is). A lock is resolved under the
constraints of the locks installed before it in any unit (the runtime's, then the common
layer's), so that packages two of them hold have one version: layers share /opt/python, and
a layer's copy of a package shadows the runtime's.

Usage: python -m infra.locks refresh   (make locks: resolve again, keeping the pins that hold)
       python -m infra.locks check     (CI: a lock that no longer matches its inputs fails)
       python -m infra.locks install [--installer uv|pip]
           (make: each deploy unit's locks installed for this interpreter into
           <venv>/lambda/, for the local runtime's containers and the deploy-unit tests; on
           another Python than the functions' the locks are resolved again for it first, the
           same way and preferring the same pins, since not every pin has a wheel for it)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.artifacts import ROOT, folders, pins, units, uv

LOCKED_PYTHON = (3, 12)
PLATFORM = ("--python-version", "3.12", "--python-platform", "aarch64-manylinux_2_28")
COMMAND = "make locks"  # what the locks' header says made them
INSTALLERS = {
    "uv": lambda: [uv(), "pip", "install", "--quiet", "--python", sys.executable],
    "pip": lambda: [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ],
}


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


def compile_lock(
    lock: Path, constraints: tuple[Path, ...], output: Path, target: tuple[str, ...] = PLATFORM
) -> None:
    """``lock``'s inputs resolved into ``output`` (whose pins, if it exists, are preferred)."""
    command = [uv(), "pip", "compile", "--quiet", "--generate-hashes", *target]
    command += ["--custom-compile-command", COMMAND, _shown(lock.with_suffix(".in"))]
    command += [arg for c in constraints for arg in ("-c", _shown(c))]
    subprocess.run([*command, "-o", str(output)], check=True, cwd=ROOT)  # noqa: S603  (uv, our files)


def _shown(path: Path) -> str:
    """As a lock names its inputs: relative to the repository where it is in it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def refresh() -> None:
    for lock, constraints in order().items():
        compile_lock(lock, constraints, lock)
        print(f"{lock.relative_to(ROOT)}: {len(pins(lock))} packages")


def again(folder: Path, target: tuple[str, ...] = PLATFORM) -> dict[Path, Path]:
    """Each lock resolved again into ``folder``, preferring its own pins, under the locks
    resolved again before it."""
    resolved: dict[Path, Path] = {}
    for lock, constraints in order().items():
        output = folder / lock.relative_to(ROOT)
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lock, output)  # uv keeps the pins of an existing output that still hold
        compile_lock(lock, tuple(resolved[c] for c in constraints), output, target)
        resolved[lock] = output
    return resolved


def check() -> int:
    """Resolve each lock again, preferring its own pins: the pins must come out the same."""
    stale = []
    with tempfile.TemporaryDirectory() as scratch:
        for lock, output in again(Path(scratch)).items():
            if pins(output) != pins(lock):
                changed = sorted(set(pins(output).items()) ^ set(pins(lock).items()))
                inputs = lock.with_suffix(".in").name
                stale.append(f"{lock.relative_to(ROOT)} no longer matches {inputs} (pins that")
                stale[-1] += f" differ: {', '.join(map('=='.join, changed))}): run `make locks`"
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


def install(target: Path, installer: str) -> None:
    """Every folder the local runtime runs a function from, installed anew from the locks."""
    locks = {lock: lock for lock in order()}
    if sys.version_info[:2] != LOCKED_PYTHON:
        locks = again(target / "locks", ("--python", sys.executable))
    for folder, installed in folders().items():
        where = target / folder
        shutil.rmtree(where, ignore_errors=True)
        command = [
            *INSTALLERS[installer](),
            "--require-hashes",
            "--no-deps",
            "--target",
            str(where),
        ]
        command += [arg for lock in installed for arg in ("-r", str(locks[lock]))]
        subprocess.run(command, check=True)  # noqa: S603  (the installer, our locks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["refresh", "check", "install"])
    parser.add_argument("--installer", choices=sorted(INSTALLERS), default="uv")
    args = parser.parse_args()
    if args.action == "refresh":
        refresh()
    elif args.action == "check":
        sys.exit(check())
    else:
        install(Path(sys.prefix) / "lambda", args.installer)


if __name__ == "__main__":
    main()
