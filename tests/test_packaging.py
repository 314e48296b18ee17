"""The package's build configuration (pyproject.toml's [tool.setuptools]) as setuptools reads it:
an install says nothing but what it installs."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.conftest import ROOT


def setuptools_table() -> dict[str, object]:
    document = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    table: dict[str, object] = document["tool"]["setuptools"]
    return table


def importable_folders(package: str, folder: Path) -> set[str]:
    """Every folder under ``folder`` that Python could import as a package of ``package``'s
    (its name an identifier: a namespace package needs no ``__init__.py``), that holds a
    file."""
    found = set()
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        if not path.is_dir() or not all(part.isidentifier() for part in relative.parts):
            continue
        if any(p.is_file() and p.suffix != ".pyc" for p in path.iterdir()):
            found.add(".".join((package, *relative.parts)))
    return found


def test_every_importable_folder_is_a_listed_package():
    # setuptools warns, in a 40-line "Package would be ignored" banner at every build, about a
    # folder of data Python could import that the packages list omits (demo_feeds/second_round
    # was); a package of modules omitted is silently not installed by `pip install .`
    # (newsdesk.core.settings was: the wheel lacked it)
    table = setuptools_table()
    listed = set(table["packages"])  # type: ignore[call-overload]
    roots = table["package-dir"]
    assert isinstance(roots, dict)
    for package, folder in roots.items():
        missing = importable_folders(package, ROOT / folder) - listed
        assert not missing, f"pyproject.toml's packages lacks {sorted(missing)}"
