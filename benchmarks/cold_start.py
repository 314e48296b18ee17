"""Cold start: each handler module imported in a fresh interpreter (median of --runs), whether
it pulled in scikit-learn, numpy or scipy (the collect functions must not), and how many
modules it loaded; then the size of what each deployment unit installs: the common layer's
requirements and the cluster image's, as wheels for the Lambda platform (arm64, Python 3.12),
downloaded by pip into a temporary folder.

Usage: .venv/bin/python benchmarks/cold_start.py [--runs 7] [--no-sizes]
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

ROOT = Path(__file__).resolve().parent.parent
HANDLERS = {
    "fan-out": "newsdesk_functions.collect.fanout",
    "worker": "newsdesk_functions.collect.worker",
    "migrate": "newsdesk_functions.migrate.app",
    "cluster": "newsdesk_functions.cluster.app",
}
HEAVY = ("sklearn", "numpy", "scipy")
# what the template gives the functions, with stand-ins: importing opens no connection
ENV = {
    "AWS_DEFAULT_REGION": "ap-northeast-2",
    "AWS_ACCESS_KEY_ID": "stand-in",
    "AWS_SECRET_ACCESS_KEY": "stand-in",
    "STATE_TABLE_NAME": "newsdesk-state",
    "OUTLET_QUEUE_URL": "https://sqs.ap-northeast-2.amazonaws.com/123456789012/outlets",
    "DATABASE_URL": "postgresql://unused@127.0.0.1:9/none",
    "POWERTOOLS_SERVICE_NAME": "newsdesk",
    "POWERTOOLS_METRICS_NAMESPACE": "newsdesk",
}
PROBE = """
import json, sys, time
started = time.perf_counter()
import {module}
seconds = time.perf_counter() - started
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"seconds": seconds, "heavy": heavy, "modules": len(sys.modules)}}))
"""


def import_once(module: str) -> dict[str, object]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **ENV}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, heavy=HEAVY)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def import_times(runs: int) -> None:
    print(
        f"{'handler':<9} {'module':<36} {'import ms (median)':>18} {'min':>6} {'modules':>8}  heavy"
    )
    for name, module in HANDLERS.items():
        samples = [import_once(module) for _ in range(runs)]
        times = [float(str(s["seconds"])) * 1000 for s in samples]
        heavy = ", ".join(samples[0]["heavy"]) or "none"  # type: ignore[arg-type]
        print(
            f"{name:<9} {module:<36} {statistics.median(times):>18.0f} {min(times):>6.0f} "
            f"{samples[0]['modules']!s:>8}  {heavy}"
        )


def installed_size(requirements: list[Path]) -> tuple[float, list[tuple[str, float]]]:
    with tempfile.TemporaryDirectory() as target:
        command = [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--target", target, "--platform", "manylinux2014_aarch64", "--python-version", "3.12",
            "--implementation", "cp", "--only-binary", ":all:",
        ]  # fmt: skip
        for path in requirements:
            command += ["-r", str(path)]
        subprocess.run(command, check=True)
        sizes: dict[str, float] = {}
        for entry in Path(target).iterdir():
            if entry.name.endswith((".dist-info", "__pycache__")) or entry.name == "bin":
                continue
            files = [entry] if entry.is_file() else [f for f in entry.rglob("*") if f.is_file()]
            top = entry.name.split(".")[0].rstrip("_").removesuffix(".libs")
            sizes[top] = sizes.get(top, 0.0) + sum(f.stat().st_size for f in files) / 1e6
        total = sum(f.stat().st_size for f in Path(target).rglob("*") if f.is_file()) / 1e6
        return total, sorted(sizes.items(), key=lambda item: -item[1])


def sizes() -> None:
    common = ROOT / "layers" / "common" / "requirements.txt"
    units = {
        "common layer (collect)": [common],
        "cluster image": [common, ROOT / "functions" / "cluster" / "requirements.txt"],
    }
    print(f"\n{'deployment unit':<24} {'MB unpacked':>11}  largest")
    for name, requirements in units.items():
        total, largest = installed_size(requirements)
        shown = ", ".join(f"{package} {mb:.0f}" for package, mb in largest[:5])
        print(f"{name:<24} {total:>11.0f}  {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-sizes", action="store_true", help="skip the pip downloads")
    args = parser.parse_args()
    import_times(args.runs)
    if not args.no_sizes:
        sizes()


if __name__ == "__main__":
    main()
