"""Imported by the local runtime's fork server alone, as its preload: it isolates the server
and imports the libraries every container inherits (``newsdesk_local.container.preload``),
from the folders the pool names in ``NEWSDESK_PRELOAD_PATH`` while the server starts."""

import os

from newsdesk_local.container import preload

PRELOAD_PATH = "NEWSDESK_PRELOAD_PATH"

if os.environ.get(PRELOAD_PATH):
    preload(os.environ[PRELOAD_PATH].split(os.pathsep))
