"""The package's build configuration (pyproject.toml's [tool.setuptools]) as setuptools reads it:
an install says nothing but what it installs; and make's venv is of the Python PYTHON names."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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


# --- make's venv --------------------------------------------------------------------------------


def make_venv(venv: Path, python: str) -> subprocess.CompletedProcess[str]:
    """What `make VENV/bin/.installed PYTHON=python` would do (make -n: nothing is run)."""
    return subprocess.run(
        ["make", "-n", f"{venv}/bin/.installed", f"VENV={venv}", f"PYTHON={python}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.integration
def test_make_makes_a_venv_of_another_python_again_rather_than_keep_it(tmp_path):
    # GIVEN a venv made, and installed, with another Python than this one (a version no
    # Python here is, to its make)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\necho 3.10\n")
    (venv / "bin" / "python").chmod(0o755)
    (venv / "bin" / ".installed").touch()
    # WHEN make is asked for it with PYTHON naming this Python
    done = make_venv(venv, sys.executable)
    # THEN it says the venv is another Python's, and makes it again from nothing
    this = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert done.returncode == 0, done.stderr
    assert f"{venv} is Python 3.10 and PYTHON={sys.executable} is {this}: making it again" in (
        done.stdout
    )
    assert f"{sys.executable} -m venv --clear {venv}" in done.stdout


@pytest.mark.integration
def test_make_refuses_a_python_that_does_not_run_in_one_line(tmp_path):
    # WHEN make is given a PYTHON that runs nowhere (no such command, no such pyenv version)
    done = make_venv(tmp_path / "venv", "python3.99")
    # THEN it stops in one line naming it, before it makes anything
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "PYTHON=python3.99 does not run here" in done.stderr
    assert not (tmp_path / "venv").exists()
