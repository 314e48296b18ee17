"""Imported by the local runtime's fork server alone, as its preload: it isolates the server
and imports the libraries every container inherits (``newsdesk_local.container.preload``),
from the folders the pool names in ``NEWSDESK_PRELOAD_PATH`` (and the other artifacts'
libraries from those in ``NEWSDESK_PRELOAD_MORE``) while the server starts.

``NEWSDESK_PRELOAD_MAIN`` names the command's main module as multiprocessing tells each child to
run it again (``path:FILE`` or ``name:MODULE``); the server takes that name for its own main, so
that a child does not: a container runs nothing of the command (what it is sent to run is in
this package and the standard library), and it would be dropped at its isolation anyway."""

import importlib.machinery
import os
import sys

from newsdesk_local.container import preload

PRELOAD_PATH = "NEWSDESK_PRELOAD_PATH"
MORE_PATH = "NEWSDESK_PRELOAD_MORE"
MAIN = "NEWSDESK_PRELOAD_MAIN"

if os.environ.get(PRELOAD_PATH):
    preload(
        os.environ[PRELOAD_PATH].split(os.pathsep),
        [p for p in os.environ.get(MORE_PATH, "").split(os.pathsep) if p],
    )

_kind, _, _main = os.environ.get(MAIN, "").partition(":")
if _kind == "path":
    sys.modules["__main__"].__file__ = _main
elif _kind == "name":
    sys.modules["__main__"].__spec__ = importlib.machinery.ModuleSpec(_main, None)
