"""The store's rows and queued writes: what every backend takes and gives back.

Their own module so that the backends (SQLite, PostgreSQL) and the code reading
the store share them without importing either database's driver.
"""

from __future__ import annotations

from typing import LiteralString

import msgspec


def not_at_rest(column: LiteralString = "state") -> LiteralString:
    """SQL true for a session whose ``column`` (its state) is neither ``idle`` nor
    ``closed``: an input was running. Written as the three ranges around those two,
    which SQLite and PostgreSQL both answer through the state's index; ``NOT IN``
    is a scan of every session row, on every start and every take-over look."""
    return (
        f"({column} < 'closed' OR ({column} > 'closed' AND {column} < 'idle') OR {column} > 'idle')"
    )


class SessionRow(msgspec.Struct, frozen=True):
    """A session's stored description: enough to start it again."""

    id: str
    profile: str
    model: str
    environment: str
    working_dir: str | None
    config: bytes
    state: str
    interrupted: bool
    created: float
    updated: float


class SummaryRow(msgspec.Struct, frozen=True, array_like=True):
    """What a session list shows of a session: its first input, model calls,
    tokens, cost (None once a call had no price) and when it last changed."""

    session_id: str
    task: str
    iterations: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    updated: float


class EventRow(msgspec.Struct, frozen=True, array_like=True):
    session_id: str
    seq: int
    timestamp: float
    kind: str
    data: bytes
    """The event's data, already JSON-encoded."""


class SubagentRow(msgspec.Struct, frozen=True):
    """A subagent that has run: its session id, its top-level session, its address."""

    id: str
    parent: str
    address: str


class EnvironmentRow(msgspec.Struct, frozen=True, array_like=True):
    """A registered environment: its name, its kind (``ssh``, ...) and its request
    as the kind encodes it (JSON bytes, holding no secret)."""

    name: str
    kind: str
    spec: bytes


class Op(msgspec.Struct, frozen=True):
    """One queued write; the writer applies a batch of them in one transaction.

    ``kind`` and ``args``:

    - ``event``: (session_id, seq, timestamp, kind, data): inserted once.
    - ``mark``: (session_id, mark): the seq high-water mark, only ever raised.
    - ``session``: a :class:`SessionRow` as a tuple, replaced whole.
    - ``state``: (state, interrupted as 0/1, updated, session_id).
    - ``summary``: a :class:`SummaryRow` as a tuple, replaced whole.
    - ``history``: (session_id, index, turn JSON), replaced.
    - ``ledger``: (session_id, spend JSON), replaced.
    - ``subagent``: (subagent_id, parent, address), replaced.
    - ``env_put``: (name, kind, spec), replaced (keeping its place in the list).
    - ``env_delete``: (name,).
    """

    kind: str
    args: tuple
