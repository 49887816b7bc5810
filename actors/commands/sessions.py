"""``troupe sessions``: list sessions with their task, directory, state and the
time of their last event, the one changed last first.

The store on disk has every session of this data directory (read-only, beside a
running server); a server (``--connect`` or the running local one) adds the live
state of its own sessions. With ``--connect`` to a server whose store is not here,
the server's view is all there is.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING, cast

import msgspec

from actors.commands.common import connect_to, data_dir, read_token, server_url
from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.commands.stored import StoredSession, read_stored, stored_sessions
from protocol.spend import Spend

if TYPE_CHECKING:  # the protocol's modules are imported only to ask a server
    from protocol.client import TroupeClient
    from protocol.wire import SessionInfo

MAX_ASKED = 200
"""Sessions whose task is asked of a remote server one by one; more are listed without."""


class Listed(msgspec.Struct, frozen=True):
    """One line of the listing (``--json`` prints these)."""

    session_id: str
    status: str
    """``live`` on a running server, ``stored`` on disk only, ``closed`` for good."""
    state: str
    task: str
    working_dir: str | None
    profile: str
    model: str
    created: float
    updated: float
    last_seq: int
    interrupted: bool = False
    spend: Spend | None = None
    """The cost ledger (tokens by kind, dollars; subagents included) as of the last input."""
    forked_from: str | None = None
    """A fork's origin, ``SESSION@SEQ`` (as the server knows it)."""


def run(args: argparse.Namespace) -> int:
    if server_url(args) is None:  # the store alone: read at once, without an event loop
        stored = read_stored(data_dir(args))
        sessions = _newest_first([_merge(item, None) for item in stored])
    else:
        import trio  # here: only asking a server needs it

        sessions = trio.run(_list, args)
    try:
        return _print(args, sessions)
    except BrokenPipeError:  # `troupe sessions | head`: the reader has all it wanted
        quiet_stdout()
        return 0


def quiet_stdout() -> None:
    """After a broken pipe: send what is still buffered nowhere, so the
    interpreter's exit flush neither fails nor prints "Broken pipe"."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _print(args: argparse.Namespace, sessions: list[Listed]) -> int:
    """The listing, written at once: ten thousand sessions are ten thousand lines,
    and a line at a time is a write each where stdout is unbuffered."""
    if args.json:
        encode = msgspec.json.encode
        _write([encode(item).decode() for item in sessions])
        return 0
    if not sessions:
        print("no sessions")
        return 0
    lines = [_ROW % ("SESSION", "STATE", "UPDATED", "DIRECTORY", "COST", "TASK")]
    minutes: dict[int, str] = {}
    directories: dict[str | None, str] = {}
    for item in sessions:
        minute = int(item.updated // 60)  # time zones are whole minutes off UTC
        updated = minutes.get(minute)
        if updated is None:
            updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.updated))
            minutes[minute] = updated
        directory = directories.get(item.working_dir)
        if directory is None:  # most sessions share a few directories
            directory = directories[item.working_dir] = _tail(item.working_dir or "-", 28)
        state = item.state if item.status != "live" else f"{item.state}*"
        if item.interrupted:
            state = "interrupted"
        task = _head(_task(item), 60)
        lines.append(_ROW % (item.session_id, state, updated, directory, _cost(item.spend), task))
    if any(item.status == "live" for item in sessions):
        lines.append("(* live on the running server)")
    _write(lines)
    return 0


_ROW = "%-12s %-13s %-16s  %-28s %9s  %s"
"""One line of the table. One ``%`` for the whole line: a format spec per field
(f-strings) took a third of listing ten thousand sessions."""


def _write(lines: list[str]) -> None:
    sys.stdout.write("\n".join(lines) + "\n" if lines else "")
    sys.stdout.flush()


def _task(item: Listed) -> str:
    return f"[fork of {item.forked_from}] {item.task}" if item.forked_from else item.task


def _cost(spend: Spend | None) -> str:
    """Dollars at list price; ``?`` marks a total that leaves out unpriced calls."""
    if spend is None or not spend.calls:
        return "-"
    return f"${spend.cost_usd:.4f}" + ("?" if spend.unpriced_calls else "")


def _head(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _tail(path: str, width: int) -> str:
    return path if len(path) <= width else "…" + path[-(width - 1) :]


async def _list(args: argparse.Namespace) -> list[Listed]:
    stored = {s.session_id: s for s in await stored_sessions(data_dir(args))}
    live: dict[str, SessionInfo] = {}
    tasks: dict[str, str] = {}
    url = server_url(args)
    if url is not None:
        from protocol.wire import ListSessions, SessionList

        try:
            async with connect_to(url, read_token(args)) as client:
                reply = cast(SessionList, await client.request(ListSessions))
                live = {info.session_id: info for info in reply.sessions}
                if args.connect:  # another machine's server: its store is not here
                    stored = {key: s for key, s in stored.items() if key in live}
                    tasks = await _tasks(client, [key for key in live if key not in stored])
        except CommandError as error:  # a server that stopped: the store still answers
            if args.connect or error.exit_code == EXIT_BAD_INPUT:
                raise
    listed = [_merge(stored.get(k), live.get(k), tasks.get(k, "")) for k in {*stored, *live}]
    return _newest_first(listed)


def _newest_first(listed: list[Listed]) -> list[Listed]:
    return sorted(listed, key=lambda item: item.updated, reverse=True)


async def _tasks(client: TroupeClient, sessions: list[str]) -> dict[str, str]:
    """Each session's first input, from its history on the server."""
    from protocol.session import UserTurn
    from protocol.wire import GetSession, SessionDetail

    found = {}
    for session in sessions[:MAX_ASKED]:
        detail = cast(SessionDetail, await client.request(GetSession, session=session))
        first = next((turn for turn in detail.history if isinstance(turn, UserTurn)), None)
        found[session] = first.content if first is not None else ""
    return found


def _merge(stored: StoredSession | None, info: SessionInfo | None, task: str = "") -> Listed:
    if info is None:
        assert stored is not None
        status = "closed" if stored.state == "closed" else "stored"
        return Listed(
            stored.session_id, status, stored.state, stored.task, stored.working_dir,
            stored.profile, stored.model, stored.created, stored.updated, stored.last_seq,
            stored.interrupted or stored.state == "processing", stored.spend,
        )  # fmt: skip
    updated = max(stored.updated if stored is not None else 0.0, info.updated)
    return Listed(
        info.session_id, info.status, info.state, stored.task if stored else task,
        stored.working_dir if stored else None, info.profile, info.model, info.created,
        max(updated, info.created), info.last_seq, info.interrupted,
        info.spend or (stored.spend if stored else None), info.forked_from,
    )  # fmt: skip
