"""What a command runs against: its environment (this machine's, with the operator contact a
local run gives), the sources it collects (SOURCES_PATH, else those the data folder was last
collected with, else the bundled file) and the local runtime it starts, over a data folder it
holds or through the running stack that holds it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from newsdesk.core.errors import SettingsError
from newsdesk.core.settings import LOCAL_CONTACT, Settings
from newsdesk.core.sources import BUNDLED, Outlet, group_by_outlet, load_sources
from newsdesk_local.data_dir import remember_sources, remembered_sources
from newsdesk_local.folder_lock import FolderInUseError, FolderLock, holder
from newsdesk_local.output import note

if TYPE_CHECKING:
    from newsdesk_local.services import LocalServices


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``environ`` (default: this process's) in which OPERATOR_CONTACT is set."""
    env = dict(os.environ if environ is None else environ)
    if not env.get("OPERATOR_CONTACT", "").strip():
        # a run on this machine: its requests say so (the functions refuse an unset contact)
        env["OPERATOR_CONTACT"] = LOCAL_CONTACT
    return env


def zone(env: dict[str, str]) -> ZoneInfo:
    """NEWSDESK_TIMEZONE's zone: the one the output prints in and time options are read in."""
    return Settings.from_env(env).zone


def deployed(env: dict[str, str]) -> dict[str, str | None]:
    """boto3's options for a deployed stack's clients (``operator_client``): its region as the
    AWS CLI reads it (AWS_REGION, else AWS_DEFAULT_REGION, else the profile's) and
    AWS_ENDPOINT_URL, both from ``env``; credentials are boto3's own."""
    return {
        "region_name": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
        "endpoint_url": env.get("AWS_ENDPOINT_URL") or None,
    }


@contextlib.contextmanager
def runtime(env: dict[str, str], command: str) -> Iterator[LocalServices]:
    """PostgreSQL (migrated) and AWS for local runs of the functions, started for ``newsdesk
    COMMAND`` (``owned``)."""
    with owned(env, command) as own, started(with_sources(own)) as services:
        yield services


def started(env: dict[str, str]) -> LocalServices:
    """The local runtime over ``env``'s data folder, to enter, for a caller that holds it."""
    from newsdesk_local.services import LocalServices

    return LocalServices(Settings.from_env(env), env)


@contextlib.contextmanager
def owned(env: dict[str, str], command: str) -> Iterator[dict[str, str]]:
    """The environment ``newsdesk COMMAND`` runs in, one owner to the data folder at a time
    (``newsdesk_local.folder_lock``): while inside, the folder is held for it if it uses a
    service kept there (PostgreSQL without DATABASE_URL, AWS without AWS_ENDPOINT_URL); if a
    ``newsdesk stack`` holds the folder, the command works through the stack's services (which
    keep the state) and says so; if another command holds it, a FolderInUseError names it."""
    settings = Settings.from_env(env)
    if settings.database_url is not None and "AWS_ENDPOINT_URL" in env:
        yield env  # nothing of the folder's is started
        return
    lock = FolderLock(settings.data_dir, f"newsdesk {command}")
    try:
        lock.acquire()
    except FolderInUseError:
        owner = holder(settings.data_dir)
        if owner is None or not owner.services:
            raise
    else:
        try:
            yield env
        finally:
            lock.release()
        return
    note(f"working through {owner.named()}, which holds {settings.data_dir}")
    yield through(env, owner.services)


def through(env: dict[str, str], services: Mapping[str, str]) -> dict[str, str]:
    """``env`` with a running stack's services for those it does not give itself: its
    PostgreSQL unless DATABASE_URL is set, its AWS (address, region, the emulator's fake keys,
    and none of the caller's own) unless AWS_ENDPOINT_URL is."""
    from newsdesk_local.services import FAKE_CREDENTIALS, REAL_CREDENTIALS

    own = dict(env)
    if not own.get("DATABASE_URL", "").strip():
        own["DATABASE_URL"] = services["DATABASE_URL"]
    if "AWS_ENDPOINT_URL" not in own:
        for name in REAL_CREDENTIALS:
            own.pop(name, None)
        own |= FAKE_CREDENTIALS
        own["AWS_ENDPOINT_URL"] = services["AWS_ENDPOINT_URL"]
        own["AWS_DEFAULT_REGION"] = services["AWS_DEFAULT_REGION"]
    return own


def sources_path(env: dict[str, str]) -> Path | None:
    """The sources file of a command on ``env``'s data folder: SOURCES_PATH; else the one the
    folder was last collected with (`collect --sources`, the demo's); else the bundled one
    (None). A remembered file that is gone is a SettingsError saying how to choose another."""
    settings = Settings.from_env(env)
    if settings.sources_path is not None:
        return settings.sources_path
    kept = remembered_sources(settings.data_dir)
    if kept is not None and not kept.is_file():
        bundled = resources.files("newsdesk").joinpath(BUNDLED)
        raise SettingsError(
            f"{settings.data_dir} was collected with {kept}, which is gone: give --sources "
            f"PATH or SOURCES_PATH (the bundled file is {bundled})"
        )
    return kept


def with_sources(env: dict[str, str]) -> dict[str, str]:
    """``env`` with SOURCES_PATH set to its data folder's sources file if it names none and
    the folder remembers one (the functions the local runtime runs read SOURCES_PATH)."""
    path = sources_path(env)
    return env if path is None else {**env, "SOURCES_PATH": str(path)}


def remember(env: dict[str, str]) -> None:
    """``env``'s data folder was collected with its SOURCES_PATH (unset: the bundled file)."""
    settings = Settings.from_env(env)
    remember_sources(settings.data_dir, settings.sources_path)


def outlets(env: dict[str, str]) -> list[Outlet]:
    """The outlets of the environment's sources file (``sources_path``): a broken file (or
    setting) fails here, before anything is started or sent."""
    return group_by_outlet(load_sources(sources_path(env)))
