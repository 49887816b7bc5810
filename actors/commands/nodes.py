"""``troupe nodes``: the nodes of a fleet on one PostgreSQL, which sessions each
owns, and how old each lease is (issue 37). Read from the store itself, so it
answers whichever nodes are up (a node that stopped renewing shows how long ago
it was last seen, and its sessions how long their leases have lapsed)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from actors.commands.errors import EXIT_BAD_INPUT, EXIT_ERROR, CommandError
from actors.commands.settings_flags import settings_for
from actors.store.setting import check_store_setting, is_postgres, redact

_NODES = """
SELECT n.node_id, n.url, extract(epoch FROM clock_timestamp() - n.seen), n.draining,
       count(l.session_id) FILTER (WHERE l.expires_at > clock_timestamp())
FROM nodes n LEFT JOIN leases l ON l.node_id = n.node_id
GROUP BY n.node_id, n.url, n.seen, n.draining ORDER BY n.node_id
"""
_LEASES = """
SELECT l.session_id, l.node_id, l.epoch, extract(epoch FROM clock_timestamp() - l.renewed),
       extract(epoch FROM l.expires_at - clock_timestamp()), s.state
FROM leases l JOIN sessions s ON s.id = l.session_id
WHERE l.expires_at > clock_timestamp() OR s.state NOT IN ('idle', 'closed')
ORDER BY l.node_id, l.session_id
"""


def _read(url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    import psycopg

    from actors.store.postgres import conninfo

    with psycopg.connect(conninfo(url), autocommit=True) as connection:
        found = connection.execute("SELECT to_regclass('troupe.leases')").fetchone()
        if found is None or found[0] is None:
            return [], []
        connection.execute("SET search_path TO troupe")
        return connection.execute(_NODES).fetchall(), connection.execute(_LEASES).fetchall()


def _ago(seconds: float) -> str:
    return f"{seconds:.1f}s ago"


def run(args: argparse.Namespace) -> int:
    settings = settings_for(args, Path("."))
    try:
        store = check_store_setting(str(settings.get("store") or ""))
    except ValueError as error:
        raise CommandError(f"--store: {error}", EXIT_BAD_INPUT) from None
    if not is_postgres(store):
        raise CommandError(
            "a fleet keeps its sessions in PostgreSQL: give --store postgresql://... (or "
            "store = in the config file); with SQLite there is one server and no nodes",
            EXIT_BAD_INPUT,
        )
    try:
        nodes, leases = _read(store)
    except ImportError as error:
        raise CommandError(f"the PostgreSQL store needs psycopg ({error})", EXIT_ERROR) from None
    except Exception as error:  # psycopg's errors: one line, the URL without its password
        reason = " ".join(str(error).split())
        raise CommandError(f"cannot read {redact(store)}: {reason}", EXIT_ERROR) from None
    if args.json:
        for node_id, url, seen, draining, held in nodes:
            print(json.dumps({"node": node_id, "url": url, "seen_ago": round(float(seen), 3),
                              "draining": bool(draining), "sessions": int(held)}))  # fmt: skip
        for session_id, node_id, epoch, renewed, left, state in leases:
            print(json.dumps({"session": session_id, "node": node_id, "epoch": int(epoch),
                              "renewed_ago": round(float(renewed), 3),
                              "expires_in": round(float(left), 3), "state": state}))  # fmt: skip
        return 0
    if not nodes:
        print("no nodes have run on this store yet")
        return 0
    print(f"{'NODE':<24} {'SESSIONS':>8}  {'SEEN':<12} URL")
    for node_id, url, seen, draining, held in nodes:
        mark = " (draining)" if draining else ""
        print(f"{node_id:<24} {int(held):>8}  {_ago(float(seen)):<12} {url}{mark}")
    if leases:
        print()
        print(f"{'SESSION':<16} {'NODE':<24} {'EPOCH':>5}  {'RENEWED':<12} LEASE")
    for session_id, node_id, epoch, renewed, left, state in leases:
        lease = f"{float(left):.1f}s left" if left > 0 else f"lapsed, {state}: to be taken over"
        print(f"{session_id:<16} {node_id:<24} {int(epoch):>5}  {_ago(float(renewed)):<12} {lease}")
    return 0
