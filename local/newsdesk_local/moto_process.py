"""moto's server as a process of its own (``newsdesk_local.services`` starts it): it serves on
the listening socket it is handed (its file descriptor is the one argument), prints "ready",
and stops when its standard input closes. It imports moto and nothing of newsdesk, to start
as fast as moto allows."""

import os
import sys
import threading
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server


def serve() -> None:
    """Serve on the socket of file descriptor ``sys.argv[1]`` until stdin closes."""

    class Handler(MotoRequestHandler):  # type: ignore[misc]
        # Each answer is written in two parts; with Nagle's algorithm the second waits for
        # the client's delayed ACK, 40 ms on Linux, on every call.
        disable_nagle_algorithm = True

        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass

    app = DomainDispatcherApplication(create_backend_app)
    fd = int(sys.argv[1])
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Handler, fd=fd)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()
    os._exit(0)  # the runtime has saved what it keeps; nothing here needs a graceful end


if __name__ == "__main__":
    serve()
