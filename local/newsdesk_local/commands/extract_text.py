"""`newsdesk extract-text FILE|URL`: for debugging a site, the main text and metadata the
extractor keeps of one page: a saved file, or a URL fetched with the extractor's fetch policy
(private networks refused unless FETCH_ALLOW_PRIVATE_NETWORKS; EXTRACT_MAX_BYTES at most). The
facts a line each, a blank line and the text, or one JSON object; a page that cannot be fetched
is one line, exit 1."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TextIO

from newsdesk.core.errors import ConfigError
from newsdesk.core.settings import Settings
from newsdesk_local.commands import arguments
from newsdesk_local.output import EXIT_FAILED, EXIT_OK, dump, error


def add(commands: arguments.Commands) -> None:
    extract = commands.add_parser(
        "extract-text", help="the main text of a saved page or of a URL, as newsdesk extracts it"
    )
    extract.add_argument("page", metavar="FILE|URL")
    extract.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    extract.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.collect.fetch import fetch
    from newsdesk.core.errors import FeedError
    from newsdesk.extract.extractor import ExtractPolicy
    from newsdesk.extract.text import extract_text

    page: str = args.page
    if page.startswith(("http://", "https://")):
        try:
            fetched = fetch(page, ExtractPolicy.from_settings(Settings.from_env(env)).fetch)
        except FeedError as e:
            error(f"{page}: {e}")
            return EXIT_FAILED
        content, url = fetched.content, fetched.url
    else:
        try:
            content, url = Path(page).read_bytes(), None
        except OSError as e:
            raise ConfigError(f"{page}: {e.strerror}") from e
    extracted = extract_text(content, url)
    if args.json:
        dump({"url": url, "chars": len(extracted.text), **dataclasses.asdict(extracted)}, out)
        return EXIT_OK
    facts = {k: v for k, v in dataclasses.asdict(extracted).items() if k != "text" and v}
    for name, value in {"url": url, **facts, "chars": len(extracted.text)}.items():
        if value:
            print(f"{name}: {value}", file=out)
    print(file=out)
    print(extracted.text or "(no main text)", file=out)
    return EXIT_OK
