"""``troupe audit SESSION``: the session's safety record, read from the store.

Every tool call's policy decision (``policy_decision``), every approval asked for
and how it was answered (``approval_request``, ``approval_resolved``: who, when),
every hook that ran and what it decided (``hook_run``), in order. The store is
opened read-only, so a running server is not disturbed. Text by default, one JSON
object per line with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from actors.commands.common import data_dir
from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.commands.stored import named_session

AUDIT_KINDS = ("policy_decision", "approval_request", "approval_resolved", "hook_run")
AUDIT_WARNINGS = ("refused_answer",)
"""Warnings that belong to the safety record: an answer refused because a process
the session's own commands started sent it."""
QUERY = (
    "SELECT seq, timestamp, kind, data FROM events WHERE session_id = ? "
    "AND (kind IN (?, ?, ?, ?) OR (kind = 'warning' AND json_extract(data, '$.kind') IN (?)))"
    " ORDER BY seq"
)


def run(args: argparse.Namespace) -> int:
    session = _named(args).rsplit("/", 1)[-1]
    records = audit_records(data_dir(args) / "troupe.db", session)
    for record in records:
        print(json.dumps(record) if args.json else describe(record))
    return 0


def audit_records(path: Path, session: str) -> list[dict[str, Any]]:
    """The session's audit events, oldest first; an unknown session is bad input."""
    if not path.is_file():
        raise CommandError(f"no store at {path}", EXIT_BAD_INPUT)
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        known = connection.execute("SELECT 1 FROM sessions WHERE id = ?", (session,)).fetchone()
        if known is None:
            raise CommandError(f"no session {session} in {path}", EXIT_BAD_INPUT)
        rows = connection.execute(QUERY, (session, *AUDIT_KINDS, *AUDIT_WARNINGS)).fetchall()
    finally:
        connection.close()
    return [
        {"seq": seq, "timestamp": stamp, "kind": kind, "data": json.loads(data)}
        for seq, stamp, kind, data in rows
    ]


def describe(record: dict[str, Any]) -> str:
    """One line a person reads: when, what was decided or asked, by whom."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record["timestamp"]))
    data = record["data"]
    match record["kind"]:
        case "policy_decision":
            what = data.get("subject") or data.get("tool")
            return (
                f"{when} {data['action']:<5} {data['tool']} [{data['category']}] {what}"
                f" -- {data['reason']} (rule {data['rule']}, by {data['decided_by']})"
            )
        case "warning":
            return f"{when} {data['message']}"
        case "hook_run":
            tool = f" {data['tool']}" if data.get("tool") else ""
            why = f" -- {data['reason']}" if data.get("reason") else ""
            return (
                f"{when} hook  {data['event']}{tool}: {data['outcome']} (exit {data['exit_code']})"
                f" `{data['command']}` from {data['source']}{why}"
            )
        case "approval_request":
            return f"{when} asked {data['request_id']}: {data['action']} {data['subject']}"
        case _:
            verdict = "approved" if data.get("approved") else "denied"
            scope = data.get("scope", "once")
            note = f": {data['message']}" if data.get("message") else ""
            return (
                f"{when} {verdict} {data['request_id']} ({scope}) "
                f"by {data.get('by', 'client')}{note}"
            )


def _named(args: argparse.Namespace) -> str:
    try:
        return named_session(str(args.session), data_dir(args))
    except LookupError as error:
        raise CommandError(str(error), EXIT_BAD_INPUT) from None
