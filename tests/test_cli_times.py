"""The command line's one time grammar (issue 26, point 3): every option that takes a time reads
ISO 8601 (bare: in NEWSDESK_TIMEZONE, the zone the output prints in), the printed form itself,
ages (30m, 24h, 2d) and today/yesterday; anything else is refused in one line, exit 2."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from newsdesk.core.times import local_time
from newsdesk_local.cli import main, parser
from newsdesk_local.commands.arguments import read_time

SEOUL, NEW_YORK = ZoneInfo("Asia/Seoul"), ZoneInfo("America/New_York")
NOW = datetime(2026, 12, 2, 1, 30, tzinfo=UTC)  # 10:30 KST


def utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=UTC)  # type: ignore[arg-type,misc]


@pytest.mark.parametrize(
    ("text", "zone", "expected"),
    [
        # ISO 8601: bare in the zone, else as it says
        ("2026-12-02 04:40", SEOUL, utc(2026, 12, 1, 19, 40)),
        ("2026-12-02T04:40:30", SEOUL, utc(2026, 12, 1, 19, 40, 30)),
        ("2026-12-02", SEOUL, utc(2026, 12, 1, 15, 0)),
        ("2026-12-02T04:40Z", SEOUL, utc(2026, 12, 2, 4, 40)),
        ("2026-12-02T04:40+09:00", UTC, utc(2026, 12, 1, 19, 40)),
        ("2026-12-02 04:40", UTC, utc(2026, 12, 2, 4, 40)),
        # as the output prints it
        ("2026-12-02 04:45 KST", SEOUL, utc(2026, 12, 1, 19, 45)),
        ("2026-12-02 04:45 kst", SEOUL, utc(2026, 12, 1, 19, 45)),
        ("2026-12-02 04:45 UTC", SEOUL, utc(2026, 12, 2, 4, 45)),
        ("2026-12-02 04:45 +04", SEOUL, utc(2026, 12, 2, 0, 45)),
        ("2026-12-02 04:45 -0330", SEOUL, utc(2026, 12, 2, 8, 15)),
        # a wall time a change of offset repeats: the abbreviation says which
        ("2026-11-01 01:30 EDT", NEW_YORK, utc(2026, 11, 1, 5, 30)),
        ("2026-11-01 01:30 EST", NEW_YORK, utc(2026, 11, 1, 6, 30)),
        # ages, before the command's start
        ("30m", SEOUL, utc(2026, 12, 2, 1, 0)),
        ("24h", SEOUL, utc(2026, 12, 1, 1, 30)),
        ("2d", SEOUL, utc(2026, 11, 30, 1, 30)),
        ("1w", SEOUL, utc(2026, 11, 25, 1, 30)),
        # the start of the day in the zone (10:30 KST is still 2 December's 01:30 UTC)
        ("today", SEOUL, utc(2026, 12, 1, 15, 0)),
        ("yesterday", SEOUL, utc(2026, 11, 30, 15, 0)),
        (" Today ", UTC, utc(2026, 12, 2)),
        ("yesterday", NEW_YORK, utc(2026, 11, 30, 5, 0)),
    ],
)
def test_a_time_is_read_as_a_person_writes_it(text, zone, expected):
    assert read_time(text, zone, NOW) == expected


@pytest.mark.parametrize(
    ("text", "zone", "words"),
    [
        ("the day before", SEOUL, "not a time: 'the day before'"),
        ("24 hours", SEOUL, "not a time"),
        ("2026-13-01", SEOUL, "not a time"),
        ("-2d", SEOUL, "not a time"),
        ("2026-12-02 04:45 PST", SEOUL, "PST is not what NEWSDESK_TIMEZONE (Asia/Seoul)"),
        ("2026-07-01 01:30 EST", NEW_YORK, "is called then (EDT)"),
        ("0001-01-01T00:00", SEOUL, "out of range"),
        ("99999999999d", SEOUL, "out of range"),
    ],
)
def test_what_is_no_time_is_refused_in_words(text, zone, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_time(text, zone, NOW)


@pytest.mark.parametrize(
    "zone", ["Asia/Seoul", "UTC", "Asia/Dubai", "Asia/Kolkata", "America/New_York"]
)
def test_every_printed_time_reads_back_as_itself(zone):
    # GIVEN times every 193 minutes over a year, across New York's two changes of offset
    tz = ZoneInfo(zone)
    start = utc(2026, 1, 1)
    for step in range(0, 365 * 24 * 60, 193):
        moment = start + timedelta(minutes=step)
        # WHEN the output's form of each is read back THEN it is that time
        assert read_time(local_time(moment, tz), tz, NOW) == moment


def test_articles_since_reads_the_time_as_the_output_prints_it(data_dir, capsys):
    # GIVEN the times: printed as 04:45 KST, asked as 04:40 (bare, printed, in UTC)
    data_dir.mkdir()
    env = {"NEWSDESK_DATA_DIR": str(data_dir)}  # nothing collected there yet
    for since in ("2026-12-02 04:40", "2026-12-02 04:40 KST", "2026-12-01T19:40:00Z"):
        # WHEN articles are asked for since then THEN it is 04:40 KST, not 13:40
        assert main(["articles", "--since", since], env) == 0
        assert capsys.readouterr().out == "No article collected since 2026-12-02 04:40 KST.\n"
    # AND a bare time follows NEWSDESK_TIMEZONE
    assert (
        main(["articles", "--since", "2026-12-02 04:40"], env | {"NEWSDESK_TIMEZONE": "UTC"}) == 0
    )
    assert capsys.readouterr().out == "No article collected since 2026-12-02 04:40 UTC.\n"


@pytest.mark.parametrize(
    "command",
    [
        ["articles", "--since"],
        ["events", "--since"],
        ["reparse", "--since"],
        ["reextract", "--since"],
        ["cluster", "--at"],
    ],
)
def test_every_time_option_refuses_what_is_no_time_in_one_line(command, capsys):
    # WHEN a time option is given no time THEN argparse refuses it, exit 2, before anything runs
    with pytest.raises(SystemExit) as caught:
        main([*command, "soon"], {})
    assert caught.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    # AND its one line names the option and the forms a time takes
    assert f"argument {command[-1]}: not a time: 'soon'; a time is ISO 8601" in error
    for form in ("2026-12-02 04:45 KST", "30m, 24h, 2d", "today or yesterday"):
        assert form in error


def test_every_option_that_takes_a_time_reads_it_with_the_grammar():
    # GIVEN every option of every command
    options = [
        (command, action)
        for command, sub in _commands(parser())
        for action in sub._actions
        if action.dest in ("since", "until", "at") or action.metavar == "TIME"
    ]
    assert {(c, a.option_strings[0]) for c, a in options} == {
        ("articles", "--since"),
        ("events", "--since"),
        ("reparse", "--since"),
        ("reextract", "--since"),
        ("cluster", "--at"),
    }
    # THEN each reads it with the grammar and says so in --help
    for _, action in options:
        assert action.metavar == "TIME"
        assert action.type.__name__ in ("time", "cluster_time")
        assert "as printed (2026-12-02 04:45 KST)" in action.help


def test_cluster_at_in_the_future_is_refused_in_words(capsys):
    # GIVEN a time after now, in the output's own form
    later = local_time(datetime.now(UTC) + timedelta(days=1), SEOUL)
    # WHEN a pass is asked for then THEN the event check refuses it, exit 2, nothing run
    with pytest.raises(SystemExit) as caught:
        main(["cluster", "--at", later], {"NEWSDESK_TIMEZONE": "Asia/Seoul"})
    assert caught.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith(f"newsdesk cluster: error: argument --at: {later} is in the future")
    assert error.endswith(" KST now)")


def test_a_bad_timezone_is_one_line_when_a_time_is_read(capsys):
    code = main(["articles", "--since", "24h"], {"NEWSDESK_TIMEZONE": "Mars/Olympus"})
    assert code == 2
    assert capsys.readouterr().err == (
        "newsdesk: NEWSDESK_TIMEZONE: not a time zone: 'Mars/Olympus' "
        "(an IANA name, such as Asia/Seoul or UTC)\n"
    )


def _commands(root):
    """Every (name, parser) below ``root``, subcommands of subcommands too."""
    import argparse

    for action in root._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                yield from _commands(sub)
