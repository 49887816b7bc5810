"""``troupe serve``: run the server until interrupted, printing its URL and where the
token is. Model settings come from the flags, the config files and the
environment, as for ``troupe run``."""

from __future__ import annotations

import argparse
import errno
import signal
import sys
from pathlib import Path

import msgspec
import trio

from actors.commands.common import data_dir
from actors.commands.errors import EXIT_BAD_INPUT, EXIT_ERROR, CommandError, leaves
from actors.commands.session_host import model_settings
from actors.commands.settings_flags import check_policy, settings_for
from actors.commands.telemetry_host import host_telemetry
from actors.server.collector import collector_tuned_for_many_sessions
from actors.server.fleet import DEFAULT_RENEW, DEFAULT_TTL, FleetSettings
from actors.server.server import ServerConfig, run_server
from actors.store.health import StoreUnavailable
from actors.store.setting import check_store_setting

DRAIN_LIMIT = 90.0
"""Seconds a drain may take before the node stops anyway (what is left resumes
elsewhere once its lease lapses)."""


def config_from(args: argparse.Namespace) -> ServerConfig:
    allowed: list[str] = args.allow_origin or []
    origins = frozenset(allowed)
    working_dir = Path(args.workdir or ".")
    settings = settings_for(args, working_dir)
    check_policy(settings.get("policy"))
    try:
        store = check_store_setting(str(settings.get("store") or ""))
    except ValueError as error:
        raise CommandError(f"--store: {error}", EXIT_BAD_INPUT) from None
    return ServerConfig(
        data_dir=data_dir(args),
        host=args.host,
        port=args.port,
        working_dir=working_dir,
        models=msgspec.structs.replace(
            model_settings(settings, strict=False), fallbacks=tuple(args.fallback or ())
        ),
        origins=origins,
        max_frame_bytes=args.max_frame,
        telemetry=host_telemetry(settings),
        store=store,
        fleet=fleet_settings(args),
    )


def fleet_settings(args: argparse.Namespace) -> FleetSettings:
    """``--node-id``, ``--lease-ttl`` and ``--lease-renew``: used with a PostgreSQL store."""

    def flag(name: str) -> str:
        return name.replace("_", "-")

    def number(name: str, default: float) -> float:
        given = getattr(args, name, None)
        value = given if given is not None else default
        try:
            found = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise CommandError(f"--{flag(name)}: not a number", EXIT_BAD_INPUT) from None
        if found <= 0:
            raise CommandError(f"--{flag(name)}: must be above 0", EXIT_BAD_INPUT)
        return found

    ttl = number("lease_ttl", DEFAULT_TTL)
    renew = number("lease_renew", min(DEFAULT_RENEW, ttl / 3))
    if renew >= ttl:
        raise CommandError("--lease-renew must be shorter than --lease-ttl", EXIT_BAD_INPUT)
    node_id = str(getattr(args, "node_id", None) or "")
    return FleetSettings(node_id=node_id, lease_ttl=ttl, lease_renew=renew)


async def _open_browser(url: str) -> None:
    """Open ``url`` in the user's browser, in a thread: some launchers wait for the
    browser to exit, and the server must not wait with them. ``webbrowser`` is
    imported here: only ``--open`` uses it."""
    import webbrowser

    await trio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)


def run(args: argparse.Namespace) -> int:
    if not Path(args.workdir or ".").is_dir():
        raise CommandError(f"{args.workdir} is not a directory", EXIT_BAD_INPUT)
    config = config_from(args)

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                server = await nursery.start(run_server, config)
                print(f"troupe server listening on {server.url}", flush=True)
                print(f"token: {server.token_file}", flush=True)
                print(f"store: {server.store.location}", flush=True)
                login = server.login_url()
                print(f"web page (one-time login link): {login}", flush=True)
                if args.open:  # its own one-time link: the printed one stays usable
                    opened = server.login_url()
                    nursery.start_soon(_open_browser, opened)
                async for _ in signals:  # stop gracefully: sessions resume next time
                    if server.fleet is not None:  # hand the sessions to the other nodes
                        print("troupe serve: draining", file=sys.stderr, flush=True)
                        with trio.move_on_after(DRAIN_LIMIT):
                            await server.drain()
                    print("troupe serve: stopping", file=sys.stderr, flush=True)
                    server.stop()
                    break

    try:
        with collector_tuned_for_many_sessions():
            trio.run(main)
    except BaseException as error:
        in_use = [
            e for e in leaves(error) if isinstance(e, OSError) and e.errno == errno.EADDRINUSE
        ]
        faults = [e for e in leaves(error) if isinstance(e, StoreUnavailable)]
        if faults:
            raise CommandError(f"store_unavailable: {faults[0]}", EXIT_ERROR) from error
        if in_use:
            raise CommandError(
                f"{config.host}:{config.port} is already in use (another troupe serve?); "
                "pass --port N, or --port 0 for a free one",
                EXIT_ERROR,
            ) from error
        raise
    return 0
