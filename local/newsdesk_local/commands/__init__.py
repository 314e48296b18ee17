"""The ``newsdesk`` command's subcommands, one module each (scrapy's ``commands/<name>.py``):
its arguments (``add(commands)``: its parser, whose ``run`` default is its handler), its handler
(``run(args, env, out) -> exit code``) and how it prints what it did (text, or ``--json``'s
one object, through ``newsdesk_local.output``). ``newsdesk_local.cli`` assembles the parser
from them, in the order ``newsdesk --help`` lists them, and runs the one chosen; a new command
is a module here and a line there, and a section of docs/commands.md (``make docs``).

``arguments`` holds the argument types they share, ``context`` what they run against (the
environment, the sources, the local runtime). A command's work lives below it: the local
runtime (``newsdesk_local.invocations``, ``rounds``, ``cluster_runs``, ``services``), the
tools (``feeds``, ``feedcheck``, ``deadletters``, ``stack``, ``demo``), the runtime's own
(``newsdesk.collect.reparse``,
``newsdesk.extract.reextract``)."""
