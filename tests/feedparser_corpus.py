"""feedparser's own test corpus (its source distribution's tests/ folder: 2,200 feeds written
to break parsers), fetched once by `make corpus` into .cache/, with its licence, for
tests/test_feedparser_corpus.py. Kept out of the repository; the tests never download.

Usage: python -m tests.feedparser_corpus   (the installed feedparser's version)
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / ".cache" / "feedparser-corpus"


def download(dest: Path = CORPUS) -> Path:
    version = importlib.metadata.version("feedparser")
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--dest",
                folder,
                f"feedparser=={version}",
            ],
            check=True,
        )
        (archive,) = Path(folder).glob("feedparser-*.tar.gz")
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
        source = Path(folder) / f"feedparser-{version}"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(source / "tests", dest, ignore=shutil.ignore_patterns("*.py"))
        shutil.copy(source / "LICENSE", dest / "LICENSE")
        (dest / "VERSION").write_text(version + "\n", encoding="utf-8")
    return dest


if __name__ == "__main__":
    print(f"feedparser's test corpus in {download()}")
