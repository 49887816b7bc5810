"""What a session list shows of each session, kept across restarts.

The task (its first input), the model calls, the tokens and the cost are counted
from the session's events as they happen (:mod:`actors.server.store_sync`) and
stored in the ``summaries`` table, so that a restarted server, or another process
sharing the data directory, lists them as they were. A store written before that
table existed is counted once from its stored events.
"""

from __future__ import annotations

import msgspec

from actors.server.records import Record
from actors.store import Store
from actors.store.db import SummaryRow
from protocol.events import (
    AssistantTextEndEvent,
    UnknownEventKind,
    UserInputEvent,
    decode_event_data,
)


def summary_of(record: Record) -> SummaryRow:
    return SummaryRow(
        record.row.id, record.task, record.iterations, record.input_tokens,
        record.output_tokens, record.cost_usd, record.updated,
    )  # fmt: skip


def apply_summary(record: Record, summary: SummaryRow) -> None:
    record.task = summary.task
    record.iterations = summary.iterations
    record.input_tokens = summary.input_tokens
    record.output_tokens = summary.output_tokens
    record.cost_usd = summary.cost_usd
    record.updated = max(record.updated, summary.updated)


async def summary_from_events(store: Store, record: Record) -> SummaryRow:
    """Count a session's summary from its stored events (a store from before the
    summaries table)."""
    task, iterations, tokens_in, tokens_out = "", 0, 0, 0
    cost: float | None = 0.0
    updated = record.updated
    for row in await store.events_of_kinds(record.row.id, "user_input", "assistant_text_end"):
        try:
            data = decode_event_data(row.kind, row.data)
        except (msgspec.DecodeError, msgspec.ValidationError, UnknownEventKind):
            continue
        updated = max(updated, row.timestamp)
        if isinstance(data, UserInputEvent):
            task = task or data.content
        elif isinstance(data, AssistantTextEndEvent):
            iterations += 1
            tokens_in += data.usage.input_tokens
            tokens_out += data.usage.output_tokens
            cost = None if cost is None or data.cost_usd is None else cost + data.cost_usd
    return SummaryRow(record.row.id, task, iterations, tokens_in, tokens_out, cost, updated)
