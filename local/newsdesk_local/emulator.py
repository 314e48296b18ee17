"""moto's server for local runs, in a process of its own (``newsdesk_local.moto_process``), on
a listening socket made here: its address is known at once, so clients can be built while it
starts; and what ``newsdesk stack`` needs to serve it on an address of its own."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newsdesk.core.errors import ConfigError, InfrastructureError

# moto_process's, named again: importing it would import moto (a test keeps them equal)
RESPONSE_PATH, RESPONSE_LINE = "/_newsdesk/cloudformation-response", "cloudformation-response "
SAVE_COMMAND, SAVED_LINE = "save-bucket ", "saved-bucket "


@dataclass
class MotoProcess:
    """moto's server in a process of its own: every container's AWS calls meet there, and in
    the runtime's own process they would queue behind its threads for the one interpreter
    lock. Its address is known at once (the listening socket is made here and handed over),
    so clients can be built while it starts; it serves once ``wait_ready`` returns, and lives
    until its standard input closes, so it ends with the runtime however that ends."""

    url: str
    process: subprocess.Popen[str]

    def wait_ready(self) -> None:
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "ready":
            raise InfrastructureError(f"moto's server did not start (exit {self.process.wait()})")

    def cloudformation_responses(self) -> Iterator[dict[str, Any]]:
        """The custom-resource responses it receives, as they come (``{"path", "body"}``),
        until it stops; for a server started with ``cloudformation_responses``, after
        ``wait_ready``."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(RESPONSE_LINE):
                response: dict[str, Any] = json.loads(line.removeprefix(RESPONSE_LINE))
                yield response

    def save_bucket(self, bucket: str, folder: Path) -> int:
        """The bucket's objects not yet in ``folder`` written there by the server's process,
        from its own store (as ``saved_state.fetch_bucket`` does through GetObject, without a
        request each); how many. After ``wait_ready``, from one thread at a time; a line of
        its output that is not the answer (a custom-resource response) is passed over."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        command = json.dumps({"bucket": bucket, "folder": str(folder.absolute())})
        try:
            self.process.stdin.write(SAVE_COMMAND + command + "\n")
            self.process.stdin.flush()
        except OSError:  # BrokenPipeError: it has ended
            pass
        for line in self.process.stdout:
            if line.startswith(SAVED_LINE):
                answer: dict[str, Any] = json.loads(line.removeprefix(SAVED_LINE))
                if "error" in answer:
                    raise InfrastructureError(
                        f"moto's server cannot save {bucket}: {answer['error']}"
                    )
                saved: int = answer["saved"]
                return saved
        raise InfrastructureError(f"moto's server stopped (exit {self.process.wait()})")


def listen(address: str, port: int) -> socket.socket:
    """A listening TCP socket on an IPv4 ``address`` and ``port`` (0: a free one); a port in
    use or an address not of this machine is an InfrastructureError naming them."""
    try:
        return socket.create_server((address, port), backlog=128)
    except OSError as e:
        reason = "in use" if e.errno == errno.EADDRINUSE else e.strerror or str(e)
        raise InfrastructureError(f"cannot listen on {address}:{port}: {reason}") from None


def client_host(address: str) -> str:
    """The address to reach a server listening on ``address`` from this machine."""
    return "127.0.0.1" if address in ("0.0.0.0", "") else address  # noqa: S104


@contextlib.contextmanager
def moto_server(
    address: str = "127.0.0.1", port: int = 0, *, cloudformation_responses: bool = False
) -> Iterator[MotoProcess]:
    if importlib.util.find_spec("moto") is None:
        raise ConfigError(
            "AWS_ENDPOINT_URL is not set and moto is not installed: "
            "pip install 'newsdesk[local]', or point AWS_ENDPOINT_URL at an AWS emulator"
        )
    flags = ["--cloudformation-responses"] if cloudformation_responses else []
    with listen(address, port) as listener:
        process = subprocess.Popen(  # noqa: S603  (this interpreter, a module of ours)
            [
                sys.executable,
                "-m",
                "newsdesk_local.moto_process",
                str(listener.fileno()),
                *flags,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            pass_fds=(listener.fileno(),),
            # out of the terminal's process group: Ctrl-C stops the command, which saves the
            # state through moto before closing its input
            start_new_session=True,
        )
        port = listener.getsockname()[1]
    assert process.stdin is not None
    try:
        yield MotoProcess(f"http://{client_host(address)}:{port}", process)
    finally:
        with contextlib.suppress(BrokenPipeError):  # it has ended, a command still unsent
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
