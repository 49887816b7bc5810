"""Graceful drain (issue 37): SIGTERM to a node hands its sessions to the other
nodes before it exits, with no input interrupted: an idle session at once, a
running one once its input ends; both then take new inputs on another node."""

from __future__ import annotations

import signal
from pathlib import Path

import trio

from actors.mockllm import serve_mock_llm
from tests.fleet.conftest import HANG_GUARD, Follower, fleet, lease_of, stored_seqs
from tests.fleet.test_failover import _create, _submit, slow_script


def _ended(count: int) -> object:
    return lambda f: sum(e.kind == "processing_end" for e in f.received) >= count


async def test_sigterm_hands_sessions_over_with_no_interrupted_input(
    tmp_path: Path, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    url = postgres_url
    async with (
        serve_mock_llm(slow_script(8)) as mock,
        fleet(root, url, mock.base_url, 2) as (leaving, staying),
        trio.open_nursery() as nursery,
    ):
        running, idle = await _create(leaving, 2)
        followers = {s: Follower(s, [staying]) for s in (running, idle)}
        for follower in followers.values():
            nursery.start_soon(follower.run)
        await _submit(leaving, running, "first input")
        await followers[running].wait_for(
            lambda f: any(e.kind == "tool_call_start" for e in f.received), "a running tool"
        )
        leaving.signal(signal.SIGTERM)
        with trio.fail_after(HANG_GUARD):
            await leaving.process.wait()
        assert leaving.process.returncode == 0, leaving.log_text()
        assert "draining" in leaving.log_text()

        # The running input finished on the leaving node: nothing interrupted.
        await followers[running].wait_for(_ended(1), "the first input to end")
        ended = next(e for e in followers[running].received if e.kind == "processing_end")
        assert ended.data["interrupted"] is False
        # Both sessions go on at the other node, with a new epoch.
        for session in (running, idle):
            await _submit(staying, session, "next input")
        await followers[running].wait_for(_ended(2), "the next input to end")
        await followers[idle].wait_for(_ended(1), "the idle session's input to end")
        for session in (running, idle):
            assert lease_of(url, session) == (staying.name, 2)
            kinds = [kind for _, kind in stored_seqs(url, session)]
            assert "input_interrupted" not in kinds
            assert "session_end" not in kinds
        nursery.cancel_scope.cancel()
