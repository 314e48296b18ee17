"""`newsdesk embed`: every article whose title has no vector of the meaning method's model (none
yet, another model's, or its title revised since) embedded and stored (issue 38), in batches,
so that `newsdesk cluster` and its replays read them; a line per batch on a terminal, the total
at the end, or one JSON object."""

from __future__ import annotations

import argparse
from typing import TextIO

from newsdesk_local.commands import arguments, context
from newsdesk_local.output import EXIT_OK, dump, plural

BATCH = 256


def add(commands: arguments.Commands) -> None:
    embed = commands.add_parser(
        "embed", help="embed the titles without a vector of the meaning method's model"
    )
    embed.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    embed.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.cluster.embedding import model_name, shared
    from newsdesk.storage import embeddings

    model, embedder = model_name(), shared()
    shown = not args.json and out.isatty()
    done, last = 0, 0
    with context.runtime(env, "embed") as runtime:
        database = runtime.database()
        try:
            while batch := embeddings.without_vector(database, model, BATCH, after=last):
                vectors = embedder.embed([title for _, title in batch])
                rows = [(i, title, v) for (i, title), v in zip(batch, vectors, strict=True)]
                done += embeddings.store(database, model, rows)
                last = batch[-1][0]
                if shown:
                    print(f"Embedded {plural(done, 'title')} so far (up to #{last})", file=out)
        finally:
            database.close()
    if args.json:
        dump({"model": model, "embedded": done}, out)
    else:
        print(f"Embedded {plural(done, 'title')} with {model}", file=out)
    return EXIT_OK
