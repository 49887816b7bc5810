"""``troupe export SESSION --format atif``: a stored session as a trajectory file.

Read from the store on disk, opened read-only (a running server is not
disturbed), so any session ever run here can be exported, live or finished.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import msgspec

from actors.commands.common import data_dir
from actors.commands.errors import EXIT_BAD_INPUT, EXIT_ERROR, CommandError
from actors.commands.stored import named_session
from actors.harness import troupe_version
from actors.harness.atif import trajectory
from protocol.events import SessionEvent, UnknownEventKind, decode_event_data

FORMATS = ("atif",)


def session_id_of(given: str) -> str:
    """A session id from an id or an address (``/sessions/s-1/agents/a-1`` is the
    subagent ``s-1.a-1``)."""
    parts = [part for part in given.strip().split("/") if part]
    if len(parts) >= 2 and parts[0] == "sessions":
        return ".".join([parts[1], *parts[3::2]])
    return given.strip()


def run(args: argparse.Namespace) -> int:
    session = session_id_of(_named(args))
    path = data_dir(args) / "troupe.db"
    document = export_atif(path, session, troupe_version())
    encoded = msgspec.json.format(msgspec.json.encode(document), indent=2)
    if args.out:
        try:
            Path(args.out).write_bytes(encoded + b"\n")
        except OSError as error:
            raise CommandError(
                f"cannot write {args.out}: {error.strerror or error}", EXIT_ERROR
            ) from None
    else:
        sys.stdout.buffer.write(encoded + b"\n")
        sys.stdout.flush()
    return 0


def export_atif(path: Path, session: str, version: str) -> object:
    """The session's ATIF trajectory; an unknown session or store is bad input."""
    if not path.is_file():
        raise CommandError(f"no store at {path}", EXIT_BAD_INPUT)
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        known = connection.execute(
            "SELECT 1 FROM sessions WHERE id = ? UNION SELECT 1 FROM subagents WHERE id = ?",
            (session, session),
        ).fetchone()
        if known is None:
            raise CommandError(f"no session {session} in {path}", EXIT_BAD_INPUT)

        @cache
        def events_of(session_id: str) -> Sequence[SessionEvent]:
            rows = connection.execute(
                "SELECT seq, timestamp, kind, data FROM events WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
            events = []
            for seq, stamp, kind, data in rows:
                try:
                    body = decode_event_data(kind, data)
                except (UnknownEventKind, msgspec.ValidationError):
                    continue  # written by another version: not part of the trajectory
                events.append(SessionEvent(session_id, seq, stamp, body))
            return events

        return trajectory(session, events_of, version)
    finally:
        connection.close()


def _named(args: argparse.Namespace) -> str:
    try:
        return named_session(str(args.session), data_dir(args))
    except LookupError as error:
        raise CommandError(str(error), EXIT_BAD_INPUT) from None
