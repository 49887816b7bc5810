"""One store suite, run on both backends (SQLite and a real PostgreSQL): what a
store must keep across a restart, in the order the server reads it back.

Each test writes through :class:`~actors.store.store.Store`, closes it, opens the
same database again and reads: what a restarted server would see.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import trio

from actors.store.rows import EnvironmentRow, SubagentRow, SummaryRow
from actors.store.store import open_store
from protocol.events import AssistantTextEndEvent, SessionEvent, UserInputEvent
from protocol.session import SessionConfig, Spend, Turn, UserTurn

HANG_GUARD = 20


def _input(session: str, seq: int, text: str = "") -> SessionEvent:
    return SessionEvent(session, seq, time.time(), UserInputEvent(content=text or f"in {seq}"))


def _answer(session: str, seq: int) -> SessionEvent:
    return SessionEvent(session, seq, time.time(), AssistantTextEndEvent(text=f"out {seq}"))


async def test_events_replay_in_seq_order_page_by_page(tmp_path: Path, store_setting: str) -> None:
    async with open_store(tmp_path, store_setting) as store:
        for seq in range(1, 1201):  # more than one batch's worth is queued at once
            store.append_event(_input("s-a", seq) if seq % 2 else _answer("s-a", seq))
        store.append_event(_input("s-b", 1))
        with trio.fail_after(HANG_GUARD):
            await store.wait_committed("s-a", 1200)
            await store.wait_committed("s-b", 1)
        assert store.committed("s-a") == 1200
    async with open_store(tmp_path, store_setting) as store:
        seen: list[int] = []
        while rows := await store.events_after("s-a", seen[-1] if seen else 0, limit=500):
            assert all(row.session_id == "s-a" for row in rows)
            seen += [row.seq for row in rows]
        assert seen == list(range(1, 1201))
        first = (await store.events_after("s-a", 0, limit=1))[0]
        assert first.kind == "user_input" and b'"in 1"' in first.data
        answers = await store.events_of_kinds("s-a", "assistant_text_end")
        assert [row.seq for row in answers] == list(range(2, 1201, 2))
        both = await store.events_of_kinds("s-a", "assistant_text_end", "user_input")
        assert [row.seq for row in both] == list(range(1, 1201))
        assert await store.max_seq("s-a") == 1200
        assert await store.max_seq("s-none") == 0
        assert await store.last_seqs() == {"s-a": 1200, "s-b": 1}


async def test_an_event_is_stored_once_the_first_write_wins(
    tmp_path: Path, store_setting: str
) -> None:
    async with open_store(tmp_path, store_setting) as store:
        store.append_event(_input("s-1", 1, "first"))
        store.append_event(_input("s-1", 1, "again"))  # a batch applied twice, say
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        rows = await store.events_after("s-1", 0)
    assert len(rows) == 1 and b"first" in rows[0].data


async def test_a_large_batch_written_again_keeps_the_first_events(
    tmp_path: Path, store_setting: str
) -> None:
    """A large batch (PostgreSQL copies it in) overlapping what is stored: the
    stored events stay as they were, the new ones go in."""
    async with open_store(tmp_path, store_setting) as store:
        for seq in range(1, 301):
            store.append_event(_input("s-1", seq, f"first {seq}"))
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        for seq in range(200, 501):
            store.append_event(_input("s-1", seq, f"again {seq}"))
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        rows = await store.events_after("s-1", 0, limit=1000)
    assert [row.seq for row in rows] == list(range(1, 501))
    assert b'"first 300"' in rows[299].data and b'"again 301"' in rows[300].data


async def test_reserved_seqs_are_never_issued_again(tmp_path: Path, store_setting: str) -> None:
    async with open_store(tmp_path, store_setting) as store:
        store.reserve_seqs("s-1", 64)
        with trio.fail_after(HANG_GUARD):
            await store.wait_reserved("s-1", 64)
        store.reserve_seqs("s-1", 32)  # never lowers the mark
        store.reserve_seqs("s-2", 128)
        with trio.fail_after(HANG_GUARD):
            await store.flush()
    async with open_store(tmp_path, store_setting) as store:
        assert await store.seq_mark("s-1") == 64
        assert await store.seq_marks() == {"s-1": 64, "s-2": 128}
        store.reserve_seqs("s-1", 200)
        with trio.fail_after(HANG_GUARD):
            await store.wait_reserved("s-1", 150)
    async with open_store(tmp_path, store_setting) as store:
        assert await store.seq_mark("s-1") == 200
        assert await store.seq_mark("s-unknown") == 0


async def test_sessions_and_their_states(tmp_path: Path, store_setting: str) -> None:
    config = SessionConfig(max_turns=7)
    async with open_store(tmp_path, store_setting) as store:
        store.put_session("s-1", "openai", "m-1", "local", "/w", config, created=1.0)
        store.put_session("s-2", "anthropic", "m-2", "ssh:box", None, config, created=2.0)
        store.put_session("s-3", "gemini", "m-3", "local", "/v", config, created=3.0)
        store.put_state("s-2", "processing")
        store.put_state("s-3", "closed")
        store.put_state("s-1", "idle", interrupted=True)
        with trio.fail_after(HANG_GUARD):
            await store.flush()
    async with open_store(tmp_path, store_setting) as store:
        rows = await store.sessions()
        assert [row.id for row in rows] == ["s-1", "s-2", "s-3"]  # in order of creation
        first = await store.session("s-1")
        assert first is not None and first.interrupted and first.state == "idle"
        assert (first.profile, first.model, first.environment, first.working_dir) == (
            "openai", "m-1", "local", "/w",
        )  # fmt: skip
        assert first.config == b'{"max_turns":7' + first.config[len(b'{"max_turns":7') :]
        second = await store.session("s-2")
        assert second is not None and second.working_dir is None and not second.interrupted
        assert [row.id for row in await store.sessions_not_at_rest()] == ["s-2"]
        assert await store.session("s-none") is None
        store.put_session("s-1", "openai", "m-9", "local", "/w", config, created=1.0)
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        again = await store.session("s-1")
        assert again is not None and again.model == "m-9"  # replaced whole


async def test_summaries_history_and_ledgers(tmp_path: Path, store_setting: str) -> None:
    summary = SummaryRow("s-1", "fix the \x00 bug", 3, 100, 20, 0.25, 5.0)
    turns: list[Turn] = [UserTurn(f"turn {n}", float(n)) for n in range(3)]
    async with open_store(tmp_path, store_setting) as store:
        store.put_summary(summary)
        store.put_summary(SummaryRow("s-2", "other", 1, 1, 1, None, 6.0))
        store.put_history("s-1", 0, turns)
        store.put_history("s-1", 1, [UserTurn("turn 1 repaired", 1.5)])
        store.put_ledger("s-1", Spend(calls=2, input_tokens=10, cost_usd=0.5))
        store.put_ledger("s-1", Spend(calls=3, input_tokens=30, cost_usd=0.75))
        with trio.fail_after(HANG_GUARD):
            await store.flush()
    async with open_store(tmp_path, store_setting) as store:
        found = await store.summary("s-1")
        assert found is not None and found.iterations == 3 and found.cost_usd == 0.25
        assert found.task.startswith("fix the ") and found.task.endswith(" bug")
        assert (await store.summaries())["s-2"].cost_usd is None
        assert await store.summary("s-none") is None
        history = await store.history("s-1")
        assert [turn.content for turn in history if isinstance(turn, UserTurn)] == [
            "turn 0", "turn 1 repaired", "turn 2",
        ]  # fmt: skip
        assert await store.history("s-none") == []
        assert await store.ledger("s-1") == Spend(calls=3, input_tokens=30, cost_usd=0.75)
        assert await store.ledger("s-none") is None
        assert set(await store.ledgers()) == {"s-1"}


async def test_subagents_by_parent(tmp_path: Path, store_setting: str) -> None:
    async with open_store(tmp_path, store_setting) as store:
        store.put_subagent("s-1.b", "s-1", "/sessions/s-1/agents/b")
        store.put_subagent("s-1.a", "s-1", "/sessions/s-1/agents/a")
        store.put_subagent("s-2.a", "s-2", "/sessions/s-2/agents/a")
        with trio.fail_after(HANG_GUARD):
            await store.flush()
    async with open_store(tmp_path, store_setting) as store:
        assert await store.subagents_of("s-1") == [
            SubagentRow("s-1.a", "s-1", "/sessions/s-1/agents/a"),
            SubagentRow("s-1.b", "s-1", "/sessions/s-1/agents/b"),
        ]
        assert [row.id for row in await store.subagents()] == ["s-1.a", "s-1.b", "s-2.a"]
        assert await store.subagents_of("s-none") == []


async def test_environments_of_any_kind_in_the_order_added(
    tmp_path: Path, store_setting: str
) -> None:
    async with open_store(tmp_path, store_setting) as store:
        store.put_environment("build", "ssh", b'{"target":"ssh://a"}')
        store.put_environment("box", "docker", b'{"image":"python"}')
        store.put_environment("gone", "docker", b"{}")
        store.put_environment("build", "ssh", b'{"target":"ssh://b"}')  # replaced in place
        store.delete_environment("gone")
        with trio.fail_after(HANG_GUARD):
            await store.flush()
    async with open_store(tmp_path, store_setting) as store:
        assert await store.environments() == [
            EnvironmentRow("build", "ssh", b'{"target":"ssh://b"}'),
            EnvironmentRow("box", "docker", b'{"image":"python"}'),
        ]
        store.delete_environment("build")
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        assert [row.name for row in await store.environments()] == ["box"]


async def test_the_store_says_where_it_is(tmp_path: Path, store_setting: str) -> None:
    async with open_store(tmp_path, store_setting) as store:
        if store_setting:
            assert store.path is None and store.location.startswith("postgresql://troupe@")
            assert "password" not in store.location
        else:
            assert store.path == tmp_path / "troupe.db" and store.location == str(store.path)


@pytest.mark.parametrize("setting", ["mysql://x", "troupe.db", "postgresql"])
async def test_an_unknown_store_setting_is_refused_before_anything_opens(
    tmp_path: Path, setting: str
) -> None:
    with pytest.raises(ValueError, match="unknown store"):
        async with open_store(tmp_path, setting):
            pass
    assert not (tmp_path / "troupe.db").exists()


async def test_a_row_the_database_cannot_hold_is_dropped_and_the_rest_kept(
    tmp_path: Path, store_setting: str
) -> None:
    """The writer is every session's durability: one event whose seq no 64-bit
    integer holds is dropped (with an error in the log), in a small batch and in
    one large enough to be copied in, and the writer goes on."""
    huge = 2**63
    async with open_store(tmp_path, store_setting) as store:
        store.append_event(_input("s-small", 1))
        store.append_event(_input("s-small", huge))
        store.append_event(_input("s-small", 2))
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        for seq in range(1, 101):
            store.append_event(_input("s-large", seq))
        store.append_event(_input("s-large", huge))
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        store.append_event(_input("s-after", 1))
        with trio.fail_after(HANG_GUARD):
            await store.wait_committed("s-after", 1)
        assert store.health.available
        small = [row.seq for row in await store.events_after("s-small", 0)]
        large = [row.seq for row in await store.events_after("s-large", 0, limit=1000)]
    assert small == [1, 2]
    assert large == list(range(1, 101))


async def test_a_batch_of_many_kinds_keeps_each_row_s_order(
    tmp_path: Path, store_setting: str
) -> None:
    """A batch's ops are grouped into as few statements as keep its meaning
    (PostgreSQL): each row ends as the last op on it in the batch left it."""
    config = SessionConfig()
    async with open_store(tmp_path, store_setting) as store:
        for n in range(20):  # interleaved kinds, several ops on one row
            store.put_session(f"s-{n}", "p", "m-1", "local", None, config, created=float(n + 1))
            store.reserve_seqs(f"s-{n}", 100)
            store.put_state(f"s-{n}", "processing")
            store.put_summary(SummaryRow(f"s-{n}", "first", 1, 1, 1, None, 1.0))
            store.put_session(f"s-{n}", "p", "m-2", "local", None, config, created=float(n + 1))
            store.put_summary(SummaryRow(f"s-{n}", "last", 2, 2, 2, None, 2.0))
            store.reserve_seqs(f"s-{n}", 200)
            if n % 2:
                store.put_state(f"s-{n}", "closed")
        with trio.fail_after(HANG_GUARD):
            await store.flush()
    async with open_store(tmp_path, store_setting) as store:
        rows = await store.sessions()
        assert [(row.model, row.state) for row in rows] == [
            ("m-2", "closed" if n % 2 else "idle") for n in range(20)
        ]
        summaries = await store.summaries()
        assert {summary.task for summary in summaries.values()} == {"last"}
        assert await store.seq_marks() == {f"s-{n}": 200 for n in range(20)}
