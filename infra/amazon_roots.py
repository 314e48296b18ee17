"""The Amazon Trust Services root CAs, taken from certifi's bundle (Mozilla's CA list), as the
file the functions verify RDS Proxy's certificate against (DB_SSLROOTCERT's default,
layers/common/newsdesk/storage/amazon-root-cas.pem). RDS Proxy serves certificates from ACM,
which chain to these roots (Starfield Services G2 is the root Amazon's are cross-signed by).
A test fails when the file differs from what this prints (`make amazon-roots` writes it).

Usage: python -m infra.amazon_roots > layers/common/newsdesk/storage/amazon-root-cas.pem
"""

from __future__ import annotations

import sys
from pathlib import Path

import certifi

LABELS = (
    "Amazon Root CA 1",
    "Amazon Root CA 2",
    "Amazon Root CA 3",
    "Amazon Root CA 4",
    "Starfield Services Root Certificate Authority - G2",
)
HEADER = """\
# The Amazon Trust Services root CAs, which RDS Proxy's certificates (from ACM) chain to:
# the functions verify the proxy against these only (sslmode=verify-full, DB_SSLROOTCERT).
# Written from certifi's bundle by `make amazon-roots` (infra/amazon_roots.py); do not edit.
"""


def blocks(bundle: str) -> dict[str, str]:
    """certifi's entries by label: each its comment lines and its PEM certificate."""
    found: dict[str, str] = {}
    for block in bundle.split("\n\n"):
        block = block.strip("\n")
        label = next(
            (line.split('"')[1] for line in block.splitlines() if line.startswith("# Label:")),
            None,
        )
        if label is not None and "-----BEGIN CERTIFICATE-----" in block:
            found[label] = block + "\n"
    return found


def amazon_roots(bundle: str) -> str:
    entries = blocks(bundle)
    missing = [label for label in LABELS if label not in entries]
    if missing:
        raise SystemExit(f"certifi's bundle has no {', '.join(missing)}")
    return HEADER + "".join(f"\n{entries[label]}" for label in LABELS)


if __name__ == "__main__":
    sys.stdout.write(amazon_roots(Path(certifi.where()).read_text(encoding="ascii")))
