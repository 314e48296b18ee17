"""moto's server as a process of its own (``newsdesk_local.services`` starts it): it serves on
the listening socket it is handed (its file descriptor is the one argument), prints "ready",
and stops when its standard input closes. It imports moto and nothing of newsdesk, to start
as fast as moto allows.

With ``--cloudformation-responses`` it also accepts what a custom resource sends to its
pre-signed response URL: a PUT to ``RESPONSE_PATH`` (a path no S3 bucket name can take) is
answered 200 and its body printed as one line, ``cloudformation-response <body>``, for
``newsdesk stack`` to read."""

import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto import backends
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

# moto's dispatcher asks for its backends' names twice a request, and each time lists its
# package's folder and stats every entry (0.8 ms of CPU: about 1.3 s in a round of 40 outlets'
# 850 requests): they do not change while it runs.
_MODULES = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _MODULES

RESPONSE_PATH = "/_newsdesk/cloudformation-response"
RESPONSE_LINE = "cloudformation-response "

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def accepting_responses(app: WsgiApp) -> WsgiApp:
    """``app``, but for PUTs under RESPONSE_PATH, which are printed (one line each)."""
    printing = threading.Lock()

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if environ["REQUEST_METHOD"] != "PUT" or not path.startswith(RESPONSE_PATH):
            return app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        line = json.dumps({"path": path, "body": body.decode("utf-8", "replace")})
        with printing:
            print(RESPONSE_LINE + line, flush=True)
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    return dispatch


def serve() -> None:
    """Serve on the socket of file descriptor ``sys.argv[1]`` until stdin closes."""

    class Handler(MotoRequestHandler):  # type: ignore[misc]
        # Each answer is written in two parts; with Nagle's algorithm the second waits for
        # the client's delayed ACK, 40 ms on Linux, on every call.
        disable_nagle_algorithm = True

        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass

    app: WsgiApp = DomainDispatcherApplication(create_backend_app)
    if "--cloudformation-responses" in sys.argv[2:]:
        app = accepting_responses(app)
    fd = int(sys.argv[1])
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Handler, fd=fd)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()
    os._exit(0)  # the runtime has saved what it keeps; nothing here needs a graceful end


if __name__ == "__main__":
    serve()
