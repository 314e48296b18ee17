"""Imported by the local runtime's fork server alone, as its preload: it isolates the server
and imports the libraries every container inherits (``newsdesk_local.container.preload``),
from the folders the pool names in ``NEWSDESK_PRELOAD_PATH`` (and the other artifacts'
libraries from those in ``NEWSDESK_PRELOAD_MORE``) while the server starts."""

import os

from newsdesk_local.container import preload

PRELOAD_PATH = "NEWSDESK_PRELOAD_PATH"
MORE_PATH = "NEWSDESK_PRELOAD_MORE"

if os.environ.get(PRELOAD_PATH):
    preload(
        os.environ[PRELOAD_PATH].split(os.pathsep),
        [p for p in os.environ.get(MORE_PATH, "").split(os.pathsep) if p],
    )
