"""``newsdesk stack``: the local runtime's services in the foreground, for ``sam local invoke``.

The emulated AWS (moto, on ``--bind``:``--aws-port``) and PostgreSQL (pgserver's, on its Unix
socket, and forwarded to ``--bind``:``--postgres-port`` over TCP) with every queue, table and
bucket of the template created and the migrations applied, as ``LocalServices`` makes them for
every command; the AWS port also accepts the CloudFormation response a custom resource sends
(``events/migrate.json``'s ``ResponseURL``), and each is printed as it comes. It writes the
``env.json`` a container needs (``CONTAINER_HOST`` for this machine) and prints it with the
``sam local invoke`` lines, then runs until Ctrl-C (or SIGTERM, SIGHUP); the state is kept like
every command's. It holds the data folder (``newsdesk_local.folder_lock``) and names its services
in the lock file: a command run meanwhile over the same folder (``collect``, ``dlq redrive``,
``feeds reset``, …) works through them, so the stack's state is the one state.

A container reaches this machine as ``host.docker.internal``: Docker Desktop (macOS, Windows)
resolves it, and forwards it to services on 127.0.0.1; Docker Engine on Linux resolves it with
``--add-host host.docker.internal:host-gateway``, which is the bridge's address (172.17.0.1 by
default, or docker0's), so there the stack must listen on that address.

The stack has no password: PostgreSQL here trusts whoever connects and moto takes any
credentials. So ``--bind`` takes a loopback address or the Docker bridge's, and any other
(0.0.0.0, every network this machine is on, included) only with ``--expose-without-password``,
which says so (``check_bind``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import selectors
import socket
import struct
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO
from urllib.parse import urlsplit

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.settings import LOCAL_CONTACT, Settings
from newsdesk_local.demo_site import DEMO_ORIGIN
from newsdesk_local.emulator import RESPONSE_PATH, client_host, listen
from newsdesk_local.folder_lock import FolderLock
from newsdesk_local.infrastructure import REGION, Infrastructure
from newsdesk_local.services import LocalServices

CONTAINER_HOST = "host.docker.internal"
AWS_PORT, POSTGRES_PORT = 4566, 55432  # the defaults; infra/env.example.json names them
ENV_FILE = "env.json"  # under NEWSDESK_DATA_DIR
# The services' variables, global in env.json: a function gets one only if the template
# declares it (SAM CLI drops the rest).
SERVICE_VARIABLES = ("AWS_ENDPOINT_URL", "DATABASE_URL")
# events/ carry fixed times: a message scheduled then is not dropped as stale (ten years).
EVENT_FILE_SETTINGS = {"MESSAGE_MAX_AGE_SECONDS": "315360000"}
DOCKER_BRIDGE = "172.17.0.1"  # Docker Engine's default bridge gateway
# The order a round runs the functions in: the migrations (a deploy's custom resource), the
# fan-out (the schedule's), the worker (the fan-out's queue), the extractor (the worker's
# outbox), the clustering (its schedule, over what they stored).
RUN_ORDER = (
    "MigrateFunction",
    "FanOutFunction",
    "WorkerFunction",
    "ExtractorFunction",
    "ClusterFunction",
    "ReadFunction",
)
EXPOSE_FLAG = "--expose-without-password"
_SIOCGIFADDR = 0x8915  # Linux: an interface's IPv4 address


def bridge_addresses() -> set[str]:
    """The Docker bridge's addresses on this machine: the default's, and docker0's own."""
    found = {DOCKER_BRIDGE}
    if sys.platform != "linux":  # Docker Desktop forwards host.docker.internal to loopback
        return found
    import fcntl

    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        answer = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, struct.pack("256s", b"docker0"))
        found.add(socket.inet_ntoa(answer[20:24]))
    return found


def check_bind(address: str, expose_without_password: bool = False) -> None:
    """A ConfigError unless ``address`` is loopback or the Docker bridge's, or the caller
    said the stack may be reached without a password from wherever ``address`` is."""
    if expose_without_password or ipaddress.ip_address(address).is_loopback:
        return
    if address in bridge_addresses():
        return
    raise ConfigError(
        f"--bind {address}: the stack has no password (PostgreSQL trusts whoever connects, "
        f"moto takes any credentials); bind to 127.0.0.1 or the Docker bridge "
        f"({', '.join(sorted(bridge_addresses()))}), or add {EXPOSE_FLAG} to expose it anyway"
    )


def run_stack(
    env: dict[str, str],
    bind: str,
    aws_port: int,
    postgres_port: int,
    out: TextIO,
    expose_without_password: bool = False,
) -> int:
    """Start the stack, say how to use it, and serve until interrupted (KeyboardInterrupt
    leaves through here, the state saved on the way)."""
    check_bind(bind, expose_without_password)
    settings = Settings.from_env(env)
    for name in SERVICE_VARIABLES:
        if env.get(name, "").strip():
            raise ConfigError(f"newsdesk stack runs its own AWS and PostgreSQL: unset {name}")
    services = LocalServices(  # its functions run in SAM's containers, not here
        settings,
        env,
        aws_listen=(bind, aws_port),
        cloudformation_responses=True,
        containers=False,
    )
    lock = FolderLock(settings.data_dir, "newsdesk stack")
    with lock, services, PostgresForwarder(services, bind, postgres_port) as postgres:
        moto = services.moto
        assert moto is not None  # embedded: AWS_ENDPOINT_URL is not set
        lock.publish(served(services))
        aws_url = f"http://{CONTAINER_HOST}:{urlsplit(services.endpoint).port}"
        database_url = postgres.url(CONTAINER_HOST)
        contact = settings.operator_contact or LOCAL_CONTACT
        document = env_json(services.infrastructure, services, aws_url, database_url, contact)
        env_path = settings.data_dir / ENV_FILE
        env_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        _print_stack(services, postgres, bind, env_path, document, out)
        for response in moto.cloudformation_responses():
            print(_response_line(response), file=out, flush=True)
    raise InfrastructureError("the AWS emulator stopped")


def served(services: LocalServices) -> dict[str, str]:
    """What a command on this machine works through while the stack holds the data folder
    (``newsdesk_local.commands.context.owned``): the stack's AWS and its PostgreSQL."""
    return {
        "AWS_ENDPOINT_URL": services.endpoint,
        "AWS_DEFAULT_REGION": services.env["AWS_DEFAULT_REGION"],
        "DATABASE_URL": services.env["DATABASE_URL"],
    }


def env_json(
    infrastructure: Infrastructure,
    services: LocalServices,
    aws_url: str,
    database_url: str,
    contact: str = LOCAL_CONTACT,
) -> dict[str, Any]:
    """The overrides a container needs, in SAM CLI's --env-vars format: the services'
    addresses and OPERATOR_CONTACT (the template's parameter has no default; locally a local
    run's) for every function that declares them, and per function the names and URLs of
    the emulated resources it uses (the template's references, which SAM CLI resolves to
    logical ids or nothing; those the local runtime does not emulate, empty) and the settings
    events/ need."""
    functions = infrastructure.functions.values()
    declared = {name for function in functions for name in function.variables}
    services_env = {
        "AWS_ENDPOINT_URL": aws_url,
        "DATABASE_URL": database_url,
        "OPERATOR_CONTACT": contact,
    }
    document: dict[str, Any] = {
        "Parameters": {k: v for k, v in services_env.items() if k in declared}
    }
    for function in functions:
        _, resources = infrastructure.environment(function.logical_id, services.queues)
        own = {k: v.replace(services.endpoint, aws_url) for k, v in resources.items()}
        own |= {k: v for k, v in EVENT_FILE_SETTINGS.items() if k in function.variables}
        # SAM CLI would give the container a !Ref to a resource not emulated as its logical
        # id: empty instead, which the settings read as unset
        own |= dict.fromkeys(infrastructure.unemulated(function.logical_id), "")
        if own:
            document[function.logical_id] = own
    return document


def run_order(functions: Iterable[str]) -> list[str]:
    """The functions (logical ids) in the order a round runs them (RUN_ORDER); one it does not
    name after those, by name."""
    rank = {name: n for n, name in enumerate(RUN_ORDER)}
    return sorted(functions, key=lambda name: (rank.get(name, len(rank)), name))


def sam_invoke_lines(
    infrastructure: Infrastructure, env_path: Path, platform: str = sys.platform
) -> list[str]:
    """One ``sam local invoke`` per function, from infra/ after ``sam build``, with its event
    (events/<name without Function, lower case>.json), in the order they run."""
    add_host = f" --add-host {CONTAINER_HOST}:host-gateway" if platform == "linux" else ""
    return [
        f"sam local invoke {name} -e ../events/{name.removesuffix('Function').lower()}.json"
        f" --env-vars {env_path} --region {REGION}{add_host}"
        for name in run_order(infrastructure.functions)
    ]


def reach_note(bind: str, platform: str = sys.platform) -> list[str]:
    """What a container on this machine reaches: said before anything else. On Linux (Docker
    Engine) the bridge's address, so a stack on loopback is out of its reach."""
    if platform != "linux":
        return [f"A container reaches this machine as {CONTAINER_HOST} (Docker Desktop)."]
    bridge = " or ".join(sorted(bridge_addresses()))
    if ipaddress.ip_address(bind).is_loopback:
        return [
            f"On Linux a container reaches this machine at the Docker bridge ({bridge}), not at "
            f"{bind}: `sam local invoke` cannot reach this stack. Start it with --bind "
            f"{DOCKER_BRIDGE} (--bind takes loopback and the bridge's address; any other only "
            f"with {EXPOSE_FLAG})."
        ]
    return [f"On Linux a container reaches this machine at the Docker bridge ({bridge})."]


class PostgresForwarder:
    """The embedded PostgreSQL over TCP: each connection to ``address``:``port`` is carried
    to its Unix socket (whose trust authentication then applies)."""

    def __init__(self, services: LocalServices, address: str, port: int) -> None:
        target = services.postgres_socket
        if target is None:
            raise ConfigError("newsdesk stack runs its own PostgreSQL: unset DATABASE_URL")
        self._target = str(target)
        self._user_and_database = urlsplit(services.env["DATABASE_URL"])
        self._listener = listen(address, port)
        self.address = address
        self.port: int = self._listener.getsockname()[1]
        self._wake_reader, self._wake = socket.socketpair()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def url(self, host: str) -> str:
        """The database's URL from ``host`` (this machine's name there)."""
        user = self._user_and_database.username or "postgres"
        return f"postgresql://{user}@{host}:{self.port}{self._user_and_database.path}"

    def __enter__(self) -> PostgresForwarder:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._wake.send(b"x")  # a blocked accept() is not woken by close() on every system
        self._thread.join()
        for sock in (self._listener, self._wake, self._wake_reader):
            sock.close()

    def _accept(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while True:
                ready = {key.fileobj for key, _ in selector.select()}
                if self._wake_reader in ready:
                    return
                client, _ = self._listener.accept()
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                threading.Thread(target=self._carry, args=(client,), daemon=True).start()

    def _carry(self, client: socket.socket) -> None:
        with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            try:
                server.connect(self._target)
            except OSError:
                return  # the client sees its connection closed
            back = threading.Thread(target=_pump, args=(server, client), daemon=True)
            back.start()
            _pump(client, server)
            back.join()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Bytes from ``source`` to ``target`` until ``source`` ends; then ``target``'s end."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _print_stack(
    services: LocalServices,
    postgres: PostgresForwarder,
    bind: str,
    env_path: Path,
    document: dict[str, Any],
    out: TextIO,
) -> None:
    infrastructure = services.infrastructure
    local_db = postgres.url(client_host(bind))
    lines = [
        *reach_note(bind),
        f"AWS (moto): {services.endpoint} (region {REGION}); data in {services.data_dir}",
        f"PostgreSQL: {local_db} (migrated)",
        f"CloudFormation responses: {services.endpoint}{RESPONSE_PATH}",
        *(
            f"  queue {q.logical_id}: {services.queue_url(q.logical_id)}"
            for q in infrastructure.queues
        ),
        *(f"  table {t.logical_id}: {t.name}" for t in infrastructure.tables),
        *(f"  bucket {b.logical_id}: {b.name}" for b in infrastructure.buckets),
        f"env.json for containers ({CONTAINER_HOST} is this machine), written to {env_path}:",
        *json.dumps(document, indent=2).splitlines(),
        "From infra/, after `sam build` (ClusterFunction is an image: its build needs Docker), "
        "in the order they run (the migrations, the fan-out, the worker, the extractor, the "
        "clustering):",
        *(f"  {line}" for line in sam_invoke_lines(infrastructure, env_path)),
        f"events/worker.json and events/extractor.json name the demo's feeds and pages at its "
        f"placeholder origin, {DEMO_ORIGIN}: replace it with a feed server's address a "
        f"container reaches.",
        "Ready; Ctrl-C stops the stack, keeping its state.",
    ]
    for line in lines:  # a print a line (newsdesk_local.output.TerminalText)
        print(line, file=out)
    out.flush()


def _response_line(response: dict[str, Any]) -> str:
    try:
        body = json.loads(response["body"])
        return (
            f"CloudFormation response for {body.get('LogicalResourceId')}: "
            f"{body.get('Status')} ({body.get('Reason')})"
        )
    except (ValueError, AttributeError):
        return f"CloudFormation response (not JSON) at {response['path']}"
