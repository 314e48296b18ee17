"""`newsdesk issues`: the newest issues with their articles, each copy under its original, or
one JSON object. It only reads PostgreSQL: it creates nothing and migrates nothing (no issue yet
where there is no database)."""

from __future__ import annotations

import argparse
from datetime import tzinfo
from typing import Any, TextIO

from newsdesk.core.settings import Settings
from newsdesk.core.times import local_time, utc_now
from newsdesk_local.commands import arguments
from newsdesk_local.output import dump, plural


def add(commands: arguments.Commands) -> None:
    issues = commands.add_parser("issues", help="list the newest issues and their articles")
    issues.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    issues.add_argument(
        "--limit", type=arguments.positive, default=50, help="at most this many (50)"
    )
    issues.add_argument(
        "--top",
        type=arguments.positive,
        metavar="N",
        help="the N open issues of the highest importance now (outlets, and articles in the "
        "last 6 hours and hour: docs/clustering.md), highest first",
    )
    issues.add_argument("--stack", metavar="NAME", help=arguments.STACK_READ_HELP)
    issues.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issue_lists import list_issues, top_issues
    from newsdesk_local.local_postgres import read_only_database

    settings = Settings.from_env(env)
    if args.stack:
        from newsdesk_local.commands import deployed

        asked = {"command": "issues"} | ({"top": args.top} if args.top else {"limit": args.limit})
        most = args.top or args.limit
        issues = deployed.items(args.stack, asked, "issues", most, env)
    else:
        with read_only_database(settings) as database:  # creates nothing, migrates nothing
            if database is None:
                issues = []
            elif args.top:
                issues = top_issues(database, args.top, utc_now())
            else:
                issues = list_issues(database, args.limit)
    if args.json:
        dump({"issues": issues}, out)
    else:
        print_issues(issues, settings.zone, out)
    return 0


def print_issues(issues: list[dict[str, Any]], zone: tzinfo, out: TextIO) -> None:
    if not issues:
        print("No issues yet.", file=out)
    for issue in issues:
        first, last = (local_time(issue[k], zone) for k in ("first_article_at", "last_article_at"))
        span = first if last == first else f"{first} – {last}"
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"({plural(issue['size'], 'article')}, {span}; {issue['state']}, "
            f"version {issue['version']}"
            + (f"; importance {issue['importance']}" if "importance" in issue else "")
            + ")",
            file=out,
        )
        print_articles(issue["articles"], out)


def print_articles(articles: list[dict[str, Any]], out: TextIO) -> None:
    """An issue's articles, each copy under its original (when the original is listed)."""
    copies: dict[int, list[dict[str, Any]]] = {}
    for article in articles:
        if article.get("copy_of"):
            copies.setdefault(article["copy_of"]["id"], []).append(article)
    shown = {a["id"] for a in articles if not a.get("copy_of")}
    for article in articles:
        copy = article.get("copy_of")
        if copy and copy["id"] in shown:
            continue  # under its original
        print(f"    {article_line(article)}", file=out)
        for copied in copies.get(article["id"], []):
            reason = copied["copy_of"]["reason"].removeprefix("duplicate_by_")
            print(f"        copy ({reason}): {article_line(copied)}", file=out)


def article_line(article: dict[str, Any]) -> str:
    chars = article.get("chars")
    text = plural(chars, "char") if chars else "no text"
    return f"#{article['id']} {article['source']}: {article['title']} ({text})"
