"""The command line's waits and its data folder (issue 26, point 4): every call to AWS from the
CLI has bounded timeouts and attempts, then its one line, exit 2; PostgreSQL connections have a
connect timeout and DATABASE_URL is named when it is no URL; a data folder that cannot be made,
read or written is one line, exit 2, for every command that uses it (the read-only ones too,
never "nothing yet"); `dlq redrive --stack` looks in AWS_REGION, as `feeds --table` does."""

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.config import Config
from botocore.retries.standard import ExponentialBackoff

from newsdesk.aws import clients
from newsdesk.core.errors import SettingsError
from newsdesk.core.settings import Settings
from newsdesk.storage.database import Database, checked_url, database_from
from newsdesk_local.cli import main
from tests.conftest import QuietHandler, serving

# --- waits on AWS ------------------------------------------------------------------------------


def test_the_operator_waits_a_bounded_time_on_every_call():
    # GIVEN the operator's client config
    config = clients.operator_client("sqs", region_name="ap-northeast-2").meta.config
    # THEN it connects and reads within seconds, in two attempts, not botocore's 60 s four times
    assert (config.connect_timeout, config.read_timeout) == (3, 5)
    assert config.retries == {"mode": "standard", "total_max_attempts": 2}
    # AND the longest a silent endpoint can hold a call (connects, reads, backoff) is bounded
    assert clients.OPERATOR_WAIT_SECONDS == 2 * (3 + 5) + 1 <= 20


@pytest.fixture
def silent_endpoint() -> Iterator[tuple[str, socket.socket]]:
    """A loopback socket that accepts connections (the kernel's backlog) and never answers."""
    with socket.create_server(("127.0.0.1", 0), backlog=64) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", listener


def connections(listener: socket.socket) -> int:
    """How many connections the silent endpoint was sent (each attempt makes one)."""
    listener.setblocking(False)
    count = 0
    while True:
        try:
            accepted, _ = listener.accept()
        except BlockingIOError:
            return count
        accepted.close()
        count += 1


@pytest.fixture
def quick_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's config with its attempts, its timeouts a fraction of a second and no
    backoff between them: the test checks what a silent endpoint ends in, not how long."""
    fast = clients.OPERATOR_CONFIG.merge(Config(connect_timeout=0.2, read_timeout=0.2))
    monkeypatch.setattr(clients, "OPERATOR_CONFIG", fast)
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0)


@pytest.mark.integration
@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["feeds", "--table", "newsdesk-state"], "cannot read the state table newsdesk-state"),
        (["feeds"], "cannot read the state table newsdesk-state"),
        (["dlq", "redrive", "--stack", "newsdesk"], "stack 'newsdesk'"),
    ],
)
def test_a_silent_aws_endpoint_ends_in_one_line(
    command, words, silent_endpoint, quick_timeouts, data_dir, capsys
):
    # GIVEN AWS_ENDPOINT_URL at a socket that accepts and never answers
    url, listener = silent_endpoint
    env = {"AWS_ENDPOINT_URL": url, "NEWSDESK_DATA_DIR": str(data_dir)}
    # WHEN an operator's command calls it THEN it gives up in one line, exit 2
    assert main(command, env) == 2
    error = capsys.readouterr().err
    assert error == f'newsdesk: {words}: Read timeout on endpoint URL: "{url}/"\n'
    # AND it tried as often as the config says, no more
    assert connections(listener) == 2


@pytest.mark.integration
def test_a_local_run_against_a_silent_aws_endpoint_ends_in_one_line(
    silent_endpoint, quick_timeouts, data_dir, postgres_url, capsys
):
    # GIVEN the local runtime pointed at a silent AWS_ENDPOINT_URL
    url, listener = silent_endpoint
    env = {"AWS_ENDPOINT_URL": url, "NEWSDESK_DATA_DIR": str(data_dir)}
    # WHEN a command starts it (creating the template's queues, tables, buckets) THEN one line
    assert main(["migrate"], env | {"DATABASE_URL": postgres_url}) == 2
    assert capsys.readouterr().err == (
        f'newsdesk: AWS at {url}: Read timeout on endpoint URL: "{url}/"\n'
    )
    # AND its clients wait as the operator's: SQS, S3 and DynamoDB (created side by side) each
    # tried twice, not four times for botocore's 60 s
    assert connections(listener) == 3 * 2


# --- AWS_REGION ------------------------------------------------------------------------------


JSON_REFUSAL = b'{"__type": "ValidationError", "message": "refused"}'
XML_REFUSAL = (
    b"<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code>"
    b"<Message>refused</Message></Error><RequestId>1</RequestId></ErrorResponse>"
)


@pytest.fixture
def recording_endpoint() -> Iterator[tuple[str, list[str]]]:
    """A loopback AWS endpoint that refuses every request (400), keeping each one's
    Authorization header: its credential scope names the region the request was signed for."""
    signed: list[str] = []

    class Refuse(QuietHandler):
        def do_POST(self) -> None:
            signed.append(self.headers.get("Authorization", ""))
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            json_protocol = "json" in self.headers.get("Content-Type", "")  # else the query's
            body, kind = (
                (JSON_REFUSAL, "application/x-amz-json-1.0")
                if json_protocol
                else (
                    XML_REFUSAL,
                    "text/xml",
                )
            )
            self.send_response(400)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Refuse) as url:
        yield url, signed


@pytest.mark.integration
@pytest.mark.parametrize(
    "command", [["dlq", "redrive", "--stack", "newsdesk"], ["feeds", "--table", "newsdesk-state"]]
)
@pytest.mark.parametrize(
    ("regions", "region"),
    [
        ({"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "ap-northeast-2"}, "eu-west-1"),
        ({"AWS_DEFAULT_REGION": "ap-northeast-2"}, "ap-northeast-2"),
    ],
)
def test_a_deployed_stack_is_looked_for_in_aws_region(
    command, regions, region, recording_endpoint, data_dir, capsys
):
    # GIVEN an endpoint that records where each request was signed for
    url, signed = recording_endpoint
    env = {"AWS_ENDPOINT_URL": url, "NEWSDESK_DATA_DIR": str(data_dir), **regions}
    # WHEN a command reads a deployed stack THEN its refusal is one line, exit 2
    assert main(command, env) == 2
    assert capsys.readouterr().err.count("\n") == 1
    # AND the request went to AWS_REGION when it is set, else AWS_DEFAULT_REGION
    assert signed
    assert all(f"/{region}/" in header for header in signed)


@pytest.mark.integration
def test_an_endpoint_answering_no_aws_answer_is_one_line(data_dir, capsys):
    # GIVEN AWS_ENDPOINT_URL at a server whose every answer is 200 and no XML or JSON
    class Garbage(QuietHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b"<<<no>>>\n")

    with serving(Garbage) as url:
        env = {
            "AWS_ENDPOINT_URL": url,
            "AWS_REGION": "ap-northeast-2",
            "NEWSDESK_DATA_DIR": str(data_dir),
        }
        # WHEN the operator redrives a stack's dead letters THEN one line, exit 2 (was a
        # traceback: botocore's ResponseParserError is no BotoCoreError)
        assert main(["dlq", "redrive", "--stack", "newsdesk"], env) == 2
    error = capsys.readouterr().err
    assert error.startswith("newsdesk: stack 'newsdesk': Unable to parse response")
    assert error.count("\n") == 1


# --- PostgreSQL --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["issues"], ["articles"], ["events"], ["articles", "--json"]])
def test_a_database_url_that_is_no_url_is_named(command, data_dir, capsys):
    assert main(command, {"DATABASE_URL": "not-a-url", "NEWSDESK_DATA_DIR": str(data_dir)}) == 2
    error = capsys.readouterr().err
    assert error.startswith("newsdesk: DATABASE_URL: not a PostgreSQL URL")
    assert error.count("\n") == 1


@pytest.mark.parametrize("url", ["postgresql://u@127.0.0.1:5/db", "host=127.0.0.1 port=5"])
def test_a_postgresql_url_or_key_value_pairs_are_taken(url):
    assert checked_url(url) == url


def test_the_functions_name_database_url_too():
    with pytest.raises(SettingsError, match=r"^DATABASE_URL: not a PostgreSQL URL"):
        database_from(Settings(database_url="not-a-url"))


@pytest.mark.integration
def test_every_connection_to_postgresql_has_a_connect_timeout(postgres_url):
    database = Database(lambda: postgres_url)
    try:
        assert database.connection().get_dsn_parameters()["connect_timeout"] == "5"
    finally:
        database.close()


# --- the data folder ---------------------------------------------------------------------------

READERS = [["issues"], ["feeds"], ["articles"], ["events"], ["feeds", "reset", "--all"]]
WRITERS = [
    ["collect"],
    ["demo"],
    ["stack"],
    ["migrate"],
    ["cluster"],
    ["dlq", "redrive"],
    ["reparse", "--since", "1d"],
    ["reextract", "--since", "1d"],
]


@pytest.fixture
def under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "a-file").write_text("not a folder")
    return tmp_path / "a-file" / "newsdesk"


@pytest.mark.parametrize("command", READERS + WRITERS, ids=" ".join)
def test_a_data_folder_under_a_file_is_one_line(command, under_a_file, capsys):
    # GIVEN NEWSDESK_DATA_DIR below a file
    # WHEN any command that uses it runs THEN it stops in one line naming the file, exit 2,
    # before it starts anything (a unit test: a process or a connection would fail it)
    assert main(command, {"NEWSDESK_DATA_DIR": str(under_a_file)}) == 2
    assert capsys.readouterr() == (
        "",
        f"newsdesk: NEWSDESK_DATA_DIR: cannot "
        f"{'read' if command in READERS else 'write'} {under_a_file}: "
        f"{under_a_file.parent} is a file, not a folder\n",
    )


@pytest.mark.parametrize("command", [["migrate"], ["collect"], ["demo"]], ids=" ".join)
def test_a_data_folder_that_cannot_be_written_is_one_line(command, capsys):
    # GIVEN a folder nobody can make a file in, not even root (procfs)
    assert Path("/proc").is_dir()
    assert main(command, {"NEWSDESK_DATA_DIR": "/proc"}) == 2
    assert capsys.readouterr().err == (
        "newsdesk: NEWSDESK_DATA_DIR: cannot write /proc: no file can be made there\n"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_data_folder_that_cannot_be_read_is_not_nothing_yet(command, tmp_path, capsys):
    folder = tmp_path / "newsdesk"
    folder.mkdir(mode=0)
    try:
        assert main(command, {"NEWSDESK_DATA_DIR": str(folder)}) == 2
    finally:
        folder.chmod(0o700)
    assert capsys.readouterr().err == (
        f"newsdesk: NEWSDESK_DATA_DIR: cannot read {folder}: Permission denied\n"
    )


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_data_folder_that_does_not_exist_is_one_line_saying_how_to_make_one(
    command, tmp_path, capsys
):
    # GIVEN NEWSDESK_DATA_DIR where there is no folder (mistyped: dmeo for demo)
    folder = tmp_path / "dmeo"
    # WHEN a read-only command runs THEN it says there is none and what makes one, exit 2
    assert main(command, {"NEWSDESK_DATA_DIR": str(folder)}) == 2
    assert capsys.readouterr() == (
        "",
        f"newsdesk: NEWSDESK_DATA_DIR: there is no data folder at {folder}; a round makes one "
        f"there (`newsdesk collect`), the demo one of its own in {folder}/demo (`newsdesk demo`)\n",
    )
    # AND it made nothing
    assert not folder.exists()


@pytest.mark.parametrize("command", READERS[:4], ids=" ".join)
def test_a_data_folder_with_nothing_in_it_is_nothing_yet(command, tmp_path, capsys):
    # GIVEN a data folder that exists with nothing in it (the default one beside the demo's)
    folder = tmp_path / "newsdesk"
    folder.mkdir()
    # WHEN a read-only command runs THEN it has nothing, exit 0, and makes nothing there
    assert main(command, {"NEWSDESK_DATA_DIR": str(folder)}) == 0
    assert capsys.readouterr().err == ""
    assert list(folder.iterdir()) == []


@pytest.mark.integration
def test_an_embedded_postgresql_that_cannot_start_is_one_line_not_its_log(data_dir):
    # GIVEN a data folder whose PostgreSQL folder initdb refuses (not empty, no cluster in it)
    (data_dir / "pg").mkdir(parents=True)
    (data_dir / "pg" / "stray").write_text("not PostgreSQL's")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "AWS_ENDPOINT_URL")}
    # WHEN a command starts it, as a person runs it (pgserver's log would reach the terminal)
    done = subprocess.run(
        [Path(sys.executable).with_name("newsdesk"), "migrate"],
        env={**env, "NEWSDESK_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # THEN it says so in one line, with initdb's own words, exit 2: none of initdb's output
    assert done.returncode == 2
    assert done.stderr == (
        f"newsdesk: the embedded PostgreSQL in {data_dir / 'pg'} did not start, initdb failed: "
        f'initdb: error: directory "{data_dir / "pg"}" exists but is not empty (set '
        "DATABASE_URL to use another)\n"
    )
