"""Issue 26, points 1 and 2: SIGTERM and SIGHUP end a command as Ctrl-C does (state saved,
children stopped, one line, 143 and 129), a data folder a SIGKILL left is recovered at the next
start, and the folder has one owner at a time. Real processes: the console script, started as a
person starts it, signalled, and every process it started looked for afterwards."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import boto3
import psutil  # type: ignore[import-untyped]  # pgserver's dependency
import pytest

from newsdesk_local.feedserver import FeedServer, Route
from newsdesk_local.folder_lock import holder
from newsdesk_local.infrastructure import Infrastructure
from newsdesk_local.saved_state import load_queues
from tests.test_cli import environ, write_sources
from tests.test_feeds import NEWSDESK, saved

pytestmark = [pytest.mark.slow, pytest.mark.integration]

WAIT_SECONDS = 120  # the bound on every wait: a first start initialises a database
GONE_SECONDS = 30  # what stops with the command has this long to be gone, or the test fails


class Command:
    """``newsdesk ARGS`` in a session of its own, its output read line by line as it comes."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [str(NEWSDESK), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def line(self, pattern: str) -> re.Match[str]:
        """The next line of its output that matches ``pattern`` (a bounded wait)."""
        while True:
            try:
                line = self.lines.get(timeout=WAIT_SECONDS)
            except queue.Empty:
                pytest.fail(f"newsdesk printed no line matching {pattern!r}")
            found = re.search(pattern, line)
            if found:
                return found

    def started(self, data_dir: Path) -> list[psutil.Process]:
        """Every process it runs now: its descendants, and the PostgreSQL of its folder (a
        daemon, which pg_ctl leaves to init)."""
        found: list[psutil.Process] = psutil.Process(self.process.pid).children(recursive=True)
        postgres = postmaster(data_dir)
        return found + ([psutil.Process(postgres)] if postgres else [])

    def ended(self) -> tuple[int, str]:
        """Its exit code and standard error, once it has exited."""
        _, stderr = self.process.communicate(timeout=WAIT_SECONDS)
        return self.process.returncode, stderr


def postmaster(data_dir: Path) -> int | None:
    try:
        pid = int((data_dir / "pg" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if psutil.pid_exists(pid) else None


def left_running(processes: list[psutil.Process]) -> list[str]:
    """Those of ``processes`` still running once GONE_SECONDS have passed (none, if they end
    sooner: the wait is for them, not a sleep)."""
    _, alive = psutil.wait_procs(processes, timeout=GONE_SECONDS)
    return [" ".join(p.cmdline()[:3]) for p in alive]


def handles(data_dir: Path) -> list[int]:
    """The pids pgserver holds its server for."""
    found: list[int] = json.loads((data_dir / "pg" / ".handle_pids.json").read_text())
    return found


def local_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env: dict[str, str] = environ(data_dir, **extra)
    if "DATABASE_URL" not in extra:
        env.pop("DATABASE_URL", None)  # the embedded PostgreSQL, unless a test gives one
    return env


@contextlib.contextmanager
def running_stack(data_dir: Path) -> Iterator[Command]:
    """`newsdesk stack` on free ports, ready; killed at the end if the test left it running."""
    command = Command("stack", "--aws-port", "0", "--postgres-port", "0", env=local_env(data_dir))
    try:
        command.line("^Ready")
        yield command
    finally:
        if command.process.poll() is None:
            command.process.kill()
            command.process.wait()


def test_a_stack_recovers_a_killed_ones_folder_and_sigterm_stops_it_keeping_its_state(
    data_dir: Path,
) -> None:
    # GIVEN a stack killed outright: its PostgreSQL left running, its pid left in pgserver's
    # handles (after which no command stopped that server, and a demo failed on an assertion)
    with running_stack(data_dir) as killed:
        killed.process.kill()
        assert killed.process.wait(timeout=WAIT_SECONDS) == -signal.SIGKILL
    orphan = postmaster(data_dir)
    assert orphan is not None
    left = psutil.Process(orphan)
    assert handles(data_dir) == [killed.process.pid]

    # WHEN the next stack starts over the folder
    with running_stack(data_dir) as stack:
        # THEN it runs on a PostgreSQL of its own, the orphan stopped, the dead pid forgotten
        assert left_running([left]) == []
        assert handles(data_dir) == [stack.process.pid]
        # AND SIGTERM stops it as Ctrl-C would, its state kept
        stopped_by_sigterm(stack, data_dir)


def stopped_by_sigterm(stack: Command, data_dir: Path) -> None:
    # GIVEN a message in a dead-letter queue, sent while it runs
    owner = holder(data_dir)
    assert owner is not None
    assert (owner.pid, owner.command) == (stack.process.pid, "newsdesk stack")
    services = owner.services
    sqs = boto3.client(
        "sqs",
        endpoint_url=services["AWS_ENDPOINT_URL"],
        region_name=services["AWS_DEFAULT_REGION"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    dead_letters = sqs.get_queue_url(
        QueueName=Infrastructure.packaged().queue("OutletDeadLetterQueue").name
    )["QueueUrl"]
    sqs.send_message(QueueUrl=dead_letters, MessageBody='{"sent": "while the stack ran"}')

    # WHEN a second stack starts over the same folder THEN it stops, naming the first
    second = subprocess.run(
        [str(NEWSDESK), "stack", "--aws-port", "0", "--postgres-port", "0"],
        env=local_env(data_dir),
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert (second.returncode, second.stdout) == (2, "")
    assert second.stderr == (
        f"newsdesk: the data folder {data_dir} is in use by newsdesk stack "
        f"(pid {stack.process.pid}); stop it or use another NEWSDESK_DATA_DIR\n"
    )
    # AND a command that runs the local runtime works through the stack instead
    migrate = subprocess.run(
        [str(NEWSDESK), "migrate"],
        env=local_env(data_dir),
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert (migrate.returncode, migrate.stdout) == (0, "up to date\n"), migrate.stderr
    assert migrate.stderr == (
        f"newsdesk: working through newsdesk stack (pid {stack.process.pid}), which holds "
        f"{data_dir}\n"
    )

    # WHEN the stack is sent SIGTERM, as `kill PID` sends it
    started = stack.started(data_dir)
    assert len(started) >= 2  # the AWS emulator and PostgreSQL
    stack.process.send_signal(signal.SIGTERM)

    # THEN it ends as Ctrl-C ends it: one line, 143, the dead letter kept, nothing left running
    code, stderr = stack.ended()
    assert (code, stderr.splitlines()) == (143, ["newsdesk: stopped by SIGTERM"])
    (kept,) = load_queues(data_dir)["OutletDeadLetterQueue"]
    assert kept["body"] == '{"sent": "while the stack ran"}'
    assert left_running(started) == []
    assert handles(data_dir) == []
    assert holder(data_dir) is None  # the folder is free again


def test_sighup_mid_round_stops_collect_and_its_containers(
    data_dir: Path, postgres_url: str
) -> None:
    # GIVEN `newsdesk collect` in the middle of a round: its worker waiting on a feed that
    # never answers (and would wait a minute for it), over a folder with a saved state
    saved(data_dir)
    fetching = threading.Event()
    with FeedServer() as server:
        feed = server.add("/hang.xml", Route(mode="hang", before=fetching.set))
        sources = write_sources(
            data_dir.parent / f"{data_dir.name}.yaml", [("뉴시스", feed, "정치")]
        )
        env = local_env(
            data_dir,
            DATABASE_URL=postgres_url,
            FETCH_ALLOW_PRIVATE_NETWORKS="true",
            FETCH_TIMEOUT_SECONDS="60",
        )
        collect = Command("collect", "--sources", str(sources), "--concurrency", "1", env=env)
        try:
            assert fetching.wait(WAIT_SECONDS), "the worker never fetched the feed"
            started = collect.started(data_dir)
            assert len(started) >= 3  # the AWS emulator, the fork server, the container

            # WHEN a command that writes the folder's state runs meanwhile THEN it is refused,
            # naming the round's command
            reset = subprocess.run(
                [str(NEWSDESK), "feeds", "reset", "--all"],
                env=env,
                capture_output=True,
                text=True,
                timeout=WAIT_SECONDS,
                check=False,
            )
            assert (reset.returncode, reset.stderr) == (
                2,
                f"newsdesk: the data folder {data_dir} is in use by newsdesk collect "
                f"(pid {collect.process.pid}); stop it or use another NEWSDESK_DATA_DIR\n",
            )

            # WHEN the round is sent SIGHUP, as a closed terminal sends it
            collect.process.send_signal(signal.SIGHUP)

            # THEN it ends at once, as Ctrl-C ends it, its containers stopped mid-fetch
            code, stderr = collect.ended()
        finally:
            if collect.process.poll() is None:
                collect.process.kill()
    assert (code, stderr.splitlines()) == (129, ["newsdesk: stopped by SIGHUP"])
    assert left_running(started) == []
    # AND the outlet's message, in flight when it stopped, is kept for the next run
    (message,) = load_queues(data_dir)["OutletQueue"]
    assert json.loads(message["body"])["source"] == "뉴시스"
