"""No runtime function over 40 lines (issue 25): the layer's ``newsdesk`` package and the entry
points under ``functions/``, each function counted from its ``def`` line to its last, docstring
included, as benchmarks/code_size.py counts them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = (ROOT / "layers/common/newsdesk", ROOT / "functions")
LONGEST = 40


def function_lengths(path: Path, root: Path = ROOT) -> dict[str, int]:
    """``module:name`` -> lines, for every function and method in the module (the longest of
    those that share a name)."""
    lengths: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{path.relative_to(root)}:{node.name}"
            lengths[name] = max(lengths.get(name, 0), (node.end_lineno or 0) - node.lineno + 1)
    return lengths


def runtime_lengths() -> dict[str, int]:
    return {
        name: lines
        for folder in RUNTIME
        for path in sorted(folder.rglob("*.py"))
        for name, lines in function_lengths(path).items()
    }


def test_no_runtime_function_is_over_40_lines() -> None:
    long = {name: lines for name, lines in runtime_lengths().items() if lines > LONGEST}
    assert long == {}


def test_the_count_is_from_the_def_line_to_the_last_docstring_included(tmp_path: Path) -> None:
    # GIVEN a module of one function: a decorator, a def line, a two-line docstring, two lines
    path = tmp_path / "sample.py"
    path.write_text(
        'import functools\n\n\n@functools.cache\ndef f():\n    """One\n    two."""\n'
        "    a = 1\n    return a\n",
        encoding="utf-8",
    )
    # WHEN it is counted, THEN it is five lines (the decorator not counted)
    assert function_lengths(path, tmp_path) == {"sample.py:f": 5}


LOCAL = ROOT / "local/newsdesk_local"
LONGEST_MODULE = 400


def test_no_module_of_the_local_runtime_is_over_400_lines() -> None:
    """Issue 41: the local runtime's rooms split by what they do, as the commands were
    (services, local_postgres, emulator; invocations, rounds, cluster_runs; demo, demo_site)."""
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(LOCAL.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE
    }
    assert long == {}
