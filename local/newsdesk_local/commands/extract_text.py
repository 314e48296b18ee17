"""`newsdesk extract-text FILE|URL`: for debugging a site, the main text and metadata the
extractor keeps of one page: a saved file, or a URL fetched with the extractor's fetch policy
(private networks refused unless FETCH_ALLOW_PRIVATE_NETWORKS; EXTRACT_MAX_BYTES at most). The
facts a line each, a blank line and the text, or one JSON object; a page that cannot be fetched
is one line, exit 1. The page is judged as the extractor judges it (``outcome``: ok, thin, empty
or a list page, with the judge's reason, ``js_rendered`` and so on) and its text is the text
the extractor would keep (``keeps_text``): a page without main text, a consent wall's or a
list's included, says why instead."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from newsdesk.core.errors import ConfigError
from newsdesk.core.settings import Settings
from newsdesk_local.commands import arguments
from newsdesk_local.output import EXIT_FAILED, EXIT_OK, dump, error

if TYPE_CHECKING:
    from newsdesk.extract.text import Extracted


# a saved page's address when it names none: neither a site's root, nor a section, nor an article
NO_ADDRESS = "file:///a/saved/page"


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
    from newsdesk.extract.extractor import ExtractPolicy, keeps_text, status_words
    from newsdesk.extract.text import extract_text

    page: str = args.page
    policy = ExtractPolicy.from_settings(Settings.from_env(env))
    content_type = None
    if page.startswith(("http://", "https://")):
        try:
            fetched = fetch(page, policy.fetch)
        except FeedError as e:
            error(f"{page}: {e}")
            return EXIT_FAILED
        content, url, content_type = fetched.content, fetched.url, fetched.content_type
    else:
        try:
            content, url = Path(page).read_bytes(), None
        except OSError as e:
            raise ConfigError(f"{page}: {e.strerror}") from e
    extracted = extract_text(content, url)
    status, reason = verdict(content, content_type, extracted, url, policy.min_chars)
    if not keeps_text(status):  # a wall's text, a list's links: not the page's main text
        extracted = dataclasses.replace(extracted, text="")
    if args.json:
        document = {"url": url, "chars": len(extracted.text), **dataclasses.asdict(extracted)}
        dump(document | {"status": status, "reason": reason}, out)
        return EXIT_OK
    outcome = status_words(status) + (f" ({reason})" if reason else "")
    facts = {k: v for k, v in dataclasses.asdict(extracted).items() if k != "text" and v}
    shown = {"url": url, **facts, "chars": len(extracted.text), "outcome": outcome}
    for name, value in shown.items():
        if value:
            print(f"{name}: {value}", file=out)
    print(file=out)
    # a print a line: the text's own line breaks kept, what else it holds shown escaped
    for line in (extracted.text or f"(no main text{f': {reason}' if reason else ''})").split("\n"):
        print(line, file=out)
    return EXIT_OK


def verdict(
    content: bytes,
    content_type: str | None,
    extracted: Extracted,
    url: str | None,
    min_chars: int,
) -> tuple[str, str | None]:
    """(status, reason) as the extractor records them: a page that is not HTML an error,
    else the page judge's verdict. A saved file is judged as if served from the address it
    names for itself (its canonical URL), else from one that says nothing of it: judged as
    served from no address at all, every saved page would be the site's root, a list page."""
    from newsdesk.extract import page as judge
    from newsdesk.extract.extractor import EXTRACT_ERROR
    from newsdesk.extract.text import decode_html

    if not judge.is_html(content_type, content):
        return EXTRACT_ERROR, "not_html"
    address = url or extracted.canonical_url or NO_ADDRESS
    judged = judge.judge_page(decode_html(content), extracted, address, min_chars)
    return judged.status, judged.reason
