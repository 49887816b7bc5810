"""What the store-fault tests share, on either backend (tests/wire/test_store_faults.py
for SQLite, tests/wire/test_postgres_faults.py for PostgreSQL,
tests/store/test_ledger_fault.py for the process ledger): a small tmpfs to fill,
what a client was acknowledged, and a request refused with the typed fault."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.client import RequestError, TroupeClient
from protocol.events import EPHEMERAL_KINDS
from protocol.wire import Event

BIG_OUTPUT = "head -c 22000 /dev/urandom | base64 -w 1000"
"""About 30 KB of output that no file system compresses."""


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


@contextlib.contextmanager
def small_tmpfs(directory: Path, size: str, options: str = "") -> Iterator[Path]:
    """A tmpfs of ``size`` at ``directory`` (``options``: more mount options, such
    as its owner), unmounted on the way out whatever happened (lazily, should a
    process still hold a file on it)."""
    directory.mkdir(parents=True, exist_ok=True)
    mount("-t", "tmpfs", "-o", f"size={size},mode=0700{options}", "tmpfs", str(directory))
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False, capture_output=True)


def acknowledged(events: list[Event]) -> set[tuple[int, str]]:
    """The durable events the client was sent: each one the store had taken."""
    return {(e.seq, e.kind) for e in events if e.seq > 0 and e.kind not in EPHEMERAL_KINDS}


async def refused(client: TroupeClient, kind: type, **fields: object) -> None:
    """The request is refused with the typed store fault."""
    with pytest.raises(RequestError) as refusal:
        await client.request(kind, **fields)
    assert refusal.value.code == "store_unavailable", refusal.value
