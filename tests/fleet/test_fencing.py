"""Fencing on a fleet (issue 37): an owner paused with SIGSTOP past its lease,
then resumed after another node took its session over, cannot append a single
event; the test reads the store itself."""

from __future__ import annotations

import signal
from pathlib import Path

import trio

from actors.mockllm import serve_mock_llm
from tests.fleet.conftest import Follower, fleet, lease_of, stored_seqs
from tests.fleet.test_failover import _create, _submit, slow_script
from tests.waiting import wait_until


async def test_a_paused_owner_cannot_write_after_a_take_over(
    tmp_path: Path, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    url = postgres_url
    async with (
        serve_mock_llm(slow_script()) as mock,
        fleet(root, url, mock.base_url, 2) as (first, second),
        trio.open_nursery() as nursery,
    ):
        (session,) = await _create(first, 1)
        follower = Follower(session, [second])  # follows through the store, from n2
        nursery.start_soon(follower.run)
        await _submit(first, session, "first input")
        await follower.wait_for(
            lambda f: any(e.kind == "tool_call_start" for e in f.received), "a running tool"
        )
        first.signal(signal.SIGSTOP)
        try:
            await wait_until(
                lambda: (lease_of(url, session) or ("",))[0] == second.name,
                what="the second node to take the session over",
            )
            await follower.wait_for(
                lambda f: any(e.kind == "processing_end" for e in f.received),
                "the taken-over input to end",
            )
            before = stored_seqs(url, session)
            assert [kind for _, kind in before[-2:]] == ["input_interrupted", "processing_end"]
        finally:
            first.signal(signal.SIGCONT)

        # Resumed, the old owner goes on with what it was doing until it learns it
        # lost the lease: every write it tries is refused, then its actor stops.
        await wait_until(
            lambda: f"session {session}" in first.log_text(),
            what="the paused node to find its lease lost",
        )
        assert stored_seqs(url, session) == before

        # The session goes on, on the node that took it, after the stored events.
        await _submit(second, session, "second input")
        await follower.wait_for(
            lambda f: sum(e.kind == "processing_end" for e in f.received) >= 2,
            "the second input to end",
        )
        after = stored_seqs(url, session)
        assert after[: len(before)] == before
        assert all(seq > before[-1][0] for seq, _ in after[len(before) :])
        assert (lease_of(url, session) or ("",))[0] != first.name
        nursery.cancel_scope.cancel()
