"""``troupe serve``: run the server until interrupted, printing its URL and where the
token is."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import webbrowser
from pathlib import Path

import trio

from actors.commands.common import data_dir
from actors.server.models import ModelSettings
from actors.server.server import ServerConfig, run_server


def config_from(args: argparse.Namespace) -> ServerConfig:
    allowed: list[str] = args.allow_origin or []
    origins = frozenset({"loopback", *allowed})
    return ServerConfig(
        data_dir=data_dir(args),
        host=args.host,
        port=args.port,
        working_dir=Path(args.workdir or "."),
        models=ModelSettings(args.profile, args.base_url, args.api_key),
        origins=origins,
        max_frame_bytes=args.max_frame,
    )


def run(args: argparse.Namespace) -> int:
    config = config_from(args)
    if not config.working_dir.is_dir():
        print(f"troupe serve: {config.working_dir} is not a directory", file=sys.stderr)
        return 2

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                server = await nursery.start(run_server, config)
                print(f"troupe server listening on {server.url}", flush=True)
                print(f"token: {server.token_file}", flush=True)
                print(f"store: {server.store.path}", flush=True)
                login = server.login_url()
                print(f"web page (one-time login link): {login}", flush=True)
                if args.open:
                    webbrowser.open(login)
                async for _ in signals:  # stop gracefully: sessions resume next time
                    print("troupe serve: stopping", file=sys.stderr, flush=True)
                    server.stop()
                    break

    try:
        trio.run(main)
    except OSError as error:
        print(f"troupe serve: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    return 0
