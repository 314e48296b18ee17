"""The code's size, counted over its AST: each module's lines, each package's functions (and
methods: how many, the median, the 90th percentile, the longest) and every function over 40
lines, counted from the ``def`` line to its ``end_lineno``, docstring included (decorators not).
The runtime (the layer's ``newsdesk`` package and the entry points under ``functions/``) and
the local package (``local/newsdesk_local``) are reported apart; tests/test_code_size.py holds
the runtime to the 40 lines.

Usage: .venv/bin/python benchmarks/code_size.py [--modules] [FOLDER ...]
       (default: the runtime, then the local package; --modules lists every module's lines)
"""

from __future__ import annotations

import argparse
import ast
import statistics
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ("layers/common/newsdesk", "functions")
LOCAL = ("local/newsdesk_local",)
LONG = 40


@dataclass(frozen=True)
class Function:
    path: str
    line: int
    name: str
    lines: int


def functions(path: Path) -> list[Function]:
    """Every function and method in one module, with its length in lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            found.append(Function(str(path.relative_to(ROOT)), node.lineno, node.name, size))
    return found


def modules(folders: tuple[str, ...]) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def report(title: str, folders: tuple[str, ...], list_modules: bool) -> None:
    paths = modules(folders)
    module_lines = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in paths}
    found = [function for path in paths for function in functions(path)]
    sizes = sorted(function.lines for function in found)
    long = sorted((f for f in found if f.lines > LONG), key=lambda f: (-f.lines, f.path))
    print(f"== {title}: {', '.join(folders)}")
    print(
        f"{len(paths)} modules, {sum(module_lines.values())} lines"
        f" (largest {max(module_lines.values())});"
        f" {len(sizes)} functions: median {statistics.median(sizes):.0f},"
        f" p90 {sizes[int(0.9 * (len(sizes) - 1))]}, max {sizes[-1]};"
        f" {len(long)} over {LONG} lines"
    )
    if list_modules:
        for path, count in sorted(module_lines.items(), key=lambda item: -item[1]):
            print(f"  {count:>5}  {path.relative_to(ROOT)}")
    for function in long:
        print(f"  {function.lines:>5}  {function.path}:{function.line} {function.name}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="every module's lines")
    parser.add_argument("folders", nargs="*", help="folders to count instead of the default")
    args = parser.parse_args()
    if args.folders:
        report("folders", tuple(args.folders), args.modules)
        return
    report("runtime", RUNTIME, args.modules)
    report("local", LOCAL, args.modules)


if __name__ == "__main__":
    main()
