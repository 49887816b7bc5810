"""``troupe sessions``: list sessions, from a running server or straight from the
store when none is running."""

from __future__ import annotations

import argparse
import sys
import time

import msgspec
import trio

from actors.commands.common import EXIT_ERROR, data_dir, read_token, server_url
from actors.store import open_store
from protocol.client import ConnectionRefused, connect
from protocol.wire import ListSessions, SessionInfo


def run(args: argparse.Namespace) -> int:
    try:
        sessions = trio.run(_list, args)
    except (ConnectionRefused, OSError) as error:
        print(f"troupe sessions: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        for info in sessions:
            print(msgspec.json.encode(info).decode())
        return 0
    if not sessions:
        print("no sessions")
        return 0
    print(f"{'SESSION':<12} {'STATUS':<7} {'STATE':<15} {'SEQ':>6}  {'UPDATED':<19}  PROFILE")
    for info in sessions:
        updated = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.updated))
        state = info.state + (" (interrupted)" if info.interrupted else "")
        print(
            f"{info.session_id:<12} {info.status:<7} {state:<15} {info.last_seq:>6}  "
            f"{updated:<19}  {info.profile}/{info.model}"
        )
    return 0


async def _list(args: argparse.Namespace) -> list[SessionInfo]:
    url = server_url(args)
    if url is not None:
        try:
            async with connect(url, read_token(args)) as client:
                return (await client.request(ListSessions)).sessions
        except OSError:
            if args.connect:
                raise
    return await _from_store(args)


async def _from_store(args: argparse.Namespace) -> list[SessionInfo]:
    """No server: read the store (SQLite allows readers beside a writer)."""
    found = []
    async with open_store(data_dir(args)) as store:
        seqs = await store.last_seqs()
        for row in await store.sessions():
            found.append(
                SessionInfo(
                    session_id=row.id,
                    address=f"/sessions/{row.id}",
                    profile=row.profile,
                    model=row.model,
                    environment=row.environment,
                    state=row.state,
                    status="closed" if row.state == "closed" else "stored",
                    last_seq=seqs.get(row.id, 0),
                    created=row.created,
                    updated=row.updated,
                    interrupted=row.interrupted or row.state == "processing",
                )
            )
    return found
