"""Where a command's session runs: on a server, or in a server embedded in the
command itself (on a free loopback port nobody else is told about). Either way the
command speaks the same protocol to it.

The server is ``--connect URL`` (or ``connect`` in a config file), else the local
``troupe serve`` of the data directory when one is running, so that every session
is listed and attachable; else an embedded one. Model flags (``--base-url``,
``--api-key``, ``--wire``) configure a model endpoint, which a running server
already has: with them, the command runs embedded and says why.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from actors.commands.common import advertised_server, connect_to, data_dir, read_token
from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.commands.run_route import ENDPOINT_FLAGS
from actors.config import Settings
from actors.config.resolve import KEY_VARIABLES, URL_VARIABLES
from protocol.session import SessionConfig

if TYPE_CHECKING:  # the server's stack is imported only by a command that runs one
    from actors.server.models import ModelSettings
    from actors.server.server import ServerConfig
    from protocol.client import TroupeClient


class Host(msgspec.Struct, frozen=True):
    """Where the session runs, in words for the header line."""

    client: TroupeClient
    url: str
    embedded: bool
    note: str

    @property
    def label(self) -> str:
        return "embedded runtime" if self.embedded else f"server {self.url}"


@asynccontextmanager
async def embedded_server(config: ServerConfig) -> AsyncIterator[tuple[str, str]]:
    """Run a server for the duration of the block; yields (url, token)."""
    import trio

    from actors.server.server import run_server

    async with trio.open_nursery() as nursery:
        server = await nursery.start(run_server, config)
        try:
            yield server.url, server.token
        finally:
            server.stop()


def read_instructions(value: str | None) -> str | None:
    """``instructions`` as text: ``@FILE`` reads the file."""
    if value and value.startswith("@"):
        try:
            return Path(value[1:]).expanduser().read_text()
        except OSError as error:
            raise CommandError(
                f"--instructions: cannot read {value[1:]}: {error.strerror}", EXIT_BAD_INPUT
            ) from None
    return value


def session_defaults(settings: Settings) -> SessionConfig:
    """The session settings the resolved configuration gives every new session:
    the one source for ``troupe run``, the server's web and WebSocket clients and
    ``troupe acp`` (flags > project config > user config > built-in)."""
    policy = settings.values.get("policy")
    snapshots = settings.values.get("snapshots")
    cap = settings.values.get("snapshot_max_file_bytes")
    return SessionConfig(
        policy=(policy.value if policy is not None else None) or "interactive",
        max_turns=settings.get("max_turns") or 0,
        model=settings.get("model"),
        reasoning_effort=settings.get("reasoning_effort"),
        user_instructions=read_instructions(settings.get("instructions")),
        mcp_servers=settings.mcp_servers,
        compaction=settings.get("compaction") or "auto",
        context_window=settings.get("context_window") or 0,
        max_cost=float(settings.get("max_cost") or 0.0),
        max_input_cost=float(settings.get("max_input_cost") or 0.0),
        provider_options=dict(settings.get("provider_options") or {}),
        isolation=_value(settings, "isolation") or "none",
        worktree_copy=list(_value(settings, "worktree_copy") or []),
        isolation_image=_value(settings, "isolation_image"),
        snapshots=snapshots is None or snapshots.value is not False,
        snapshot_max_file_bytes=(cap.value if cap is not None else 0)
        or SessionConfig().snapshot_max_file_bytes,
    )


def _value(settings: Settings, name: str) -> Any:
    """A setting's value, None when the settings do not have it."""
    setting = settings.values.get(name)
    return None if setting is None else setting.value


def model_settings(settings: Settings, strict: bool = True) -> ModelSettings:
    """A server's model endpoint. ``strict`` refuses early when there is no key
    and no base URL (the first thing a new user meets); a lenient server starts
    anyway and refuses each session with the same reason."""
    return msgspec.structs.replace(
        _endpoint_settings(settings, strict), defaults=session_defaults(settings)
    )


def _endpoint_settings(settings: Settings, strict: bool) -> ModelSettings:
    from actors.models.config import DEFAULT_BASE_URLS
    from actors.server.models import ModelSettings

    wire = settings.model_wire
    # Only a chosen wire is forced on every profile; by default each speaks its own.
    forced = wire if settings.values["wire"].source != "default for provider" else None
    base_url = settings.get("base_url")
    key = settings.api_key.value
    if not key and not base_url and not strict:
        return ModelSettings(settings.get("provider"), None, None, forced)  # type: ignore[arg-type]
    if not key and not base_url:
        variables = " or ".join(KEY_VARIABLES[wire])
        raise CommandError(
            f"no API key for {settings.get('provider')}: set {variables}, or give --base-url "
            "for a local OpenAI-compatible server (`troupe config` shows what is set)",
            EXIT_BAD_INPUT,
        )
    key_from_env = bool(key) and settings.api_key.source.lstrip("$") in KEY_VARIABLES[wire]
    url_from_env = not base_url or settings.values["base_url"].source == f"${URL_VARIABLES[wire]}"
    if key_from_env and url_from_env:  # the model layer reads them, with OPENAI_ORG_ID & co.
        return ModelSettings(settings.get("provider"), None, None, forced)  # type: ignore[arg-type]
    if key and not base_url:
        base_url = DEFAULT_BASE_URLS[wire]
    # No key for a local server: the server sends a placeholder, never an empty bearer.
    return ModelSettings(settings.get("provider"), base_url, key or None, forced)  # type: ignore[arg-type]


@asynccontextmanager
async def open_host(
    args: argparse.Namespace, settings: Settings, working_dir: Path, *, in_process: bool = False
) -> AsyncIterator[Host]:
    """A client of the server the session should run on (see the module doc).

    ``in_process``: an embedded runtime is answered by calls, without a loopback
    WebSocket (:mod:`actors.commands.local_host`); for commands that only send
    requests and read events (``troupe run``, the conversation), not for a client
    that serves operations for its sessions (``troupe acp``)."""
    from actors.commands.telemetry_host import host_telemetry

    url = settings.get("connect")
    if url:
        async with connect_to(url, read_token(args)) as client:
            yield Host(client, url, False, "")
        return
    note = ""
    running = None if getattr(args, "embedded", False) else advertised_server(data_dir(args))
    if running is not None:
        given = [name for name in ENDPOINT_FLAGS if getattr(args, name, None)]
        if given:
            flag = "--" + given[0].replace("_", "-")
            note = f"a server is running at {running}, but {flag} was given: running embedded"
        else:
            found = await _try_connect(running, read_token(args))
            if found is not None:
                async with found as client:
                    yield Host(client, running, False, "")
                return
            note = f"the server at {running} did not answer: running embedded"
    models = msgspec.structs.replace(model_settings(settings), fallbacks=tuple(args.fallback or ()))
    if in_process:
        from actors.commands.local_host import open_local

        async with open_local(
            data_dir(args), working_dir, models, telemetry=host_telemetry(settings)
        ) as local:
            # LocalClient answers the part of TroupeClient these commands use.
            yield Host(cast("TroupeClient", local), "", True, note)
        return
    from actors.server.server import ServerConfig
    from protocol.client import connect

    config = ServerConfig(
        data_dir=data_dir(args),
        port=0,
        working_dir=working_dir,
        models=models,
        advertise=False,
        telemetry=host_telemetry(settings),
    )
    async with embedded_server(config) as (url, token), connect(url, token) as client:
        yield Host(client, url, True, note)


async def _try_connect(url: str, token: str | None):  # type: ignore[no-untyped-def]
    """A connection manager for ``url`` if the server answers a handshake, else None.

    The probe connection is closed again; the caller opens its own."""
    try:
        async with connect_to(url, token):
            pass
    except CommandError as error:
        if error.exit_code == EXIT_BAD_INPUT:  # a wrong token is worth saying
            raise
        return None
    return connect_to(url, token)
