"""``newsdesk stack --bind`` (issue 22, point 8): the stack has no password, so it listens on
loopback or the Docker bridge's address, and anywhere else (every interface included) only
when ``--expose-without-password`` says so. Nothing here binds anything but the checks."""

from __future__ import annotations

import pytest

from newsdesk.core.errors import ConfigError
from newsdesk_local.cli import main
from newsdesk_local.stack import check_bind


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.53", "172.17.0.1"])
def test_the_stack_binds_to_loopback_and_the_docker_bridge(address):
    check_bind(address)  # no error: nothing is started here


@pytest.mark.parametrize("address", ["0.0.0.0", "192.168.0.10", "10.0.0.5", "172.17.0.2"])
def test_any_other_address_needs_the_flag_that_says_there_is_no_password(address):

    with pytest.raises(ConfigError, match="--expose-without-password") as caught:
        check_bind(address)
    assert "no password" in str(caught.value)
    check_bind(address, expose_without_password=True)


def test_newsdesk_stack_refuses_every_interface_before_starting_anything(capsys, tmp_path):
    # nothing is bound: the check comes before any service starts
    env = {"NEWSDESK_DATA_DIR": str(tmp_path / "data")}
    assert main(["stack", "--bind", "0.0.0.0"], env) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("newsdesk: --bind 0.0.0.0: the stack has no password")
    assert not (tmp_path / "data").exists()
