"""Function lengths over a package's AST: how many functions (and methods), the median and
90th-percentile length in lines (``def`` to the last line, docstring included), and those over
40 lines.

Usage: .venv/bin/python benchmarks/function_lengths.py [FOLDER ...]
       (default: the runtime package, the entry points and the local tooling)
"""

from __future__ import annotations

import ast
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ("layers/common/newsdesk", "functions", "local/newsdesk_local")
LONG = 40


def lengths(folder: Path) -> list[tuple[int, str]]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                found.append((size, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return found


def main() -> None:
    folders = [ROOT / f for f in (sys.argv[1:] or DEFAULT)]
    everything = [item for folder in folders for item in lengths(folder)]
    print(f"{'folder':<28} {'functions':>9} {'median':>7} {'p90':>5} {'max':>5} {'>40':>5}")
    for folder in folders:
        sizes = sorted(size for size, _ in lengths(folder))
        p90 = sizes[int(0.9 * (len(sizes) - 1))]
        print(
            f"{folder.relative_to(ROOT)!s:<28} {len(sizes):>9} {statistics.median(sizes):>7.0f}"
            f" {p90:>5} {sizes[-1]:>5} {sum(s > LONG for s in sizes):>5}"
        )
    all_sizes = sorted(size for size, _ in everything)
    print(f"{'all':<28} {len(all_sizes):>9} {statistics.median(all_sizes):>7.0f}")
    print(f"\nover {LONG} lines:")
    for size, name in sorted(everything, reverse=True):
        if size > LONG:
            print(f"  {size:>4}  {name}")


if __name__ == "__main__":
    main()
