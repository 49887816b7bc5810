"""The ``waiting_approval`` loop state (coding-agent-loop-spec 2.3): while any of a
round's calls waits for an approval answer; parallel calls waiting at once make
one such state, left only once the last of them is answered."""

from __future__ import annotations

import trio

from protocol.events import ApprovalRequestEvent, ApprovalResolvedEvent, LoopStateEvent
from protocol.session import AnswerApproval, Submit
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import call, turns


async def test_parallel_calls_waiting_at_once_are_one_waiting_state(
    start_agent: StartAgent,
) -> None:
    script = turns(
        [call("shell", command="rm -rf one"), call("shell", command="rm -rf two")], "Both gone."
    )
    async with start_agent("anthropic", script) as agent:
        for name in ("one", "two"):
            (agent.workdir / name).mkdir()
        await agent.ref.tell(Submit("remove both"))
        asked: list[str] = []
        resolved = 0
        with trio.fail_after(HANG_GUARD):
            async for event in agent.events:
                agent.seen.append(event)
                if isinstance(event.data, ApprovalRequestEvent):
                    asked.append(event.data.request_id)
                    if len(asked) == 2:  # both wait: answer one, then the other
                        await agent.ref.ask(AnswerApproval(asked[0], True))
                if isinstance(event.data, ApprovalResolvedEvent):
                    resolved += 1
                    if resolved == 1:
                        await agent.ref.ask(AnswerApproval(asked[1], True))
                if event.kind == "processing_end":
                    break
        kinds = [
            e.data.state if isinstance(e.data, LoopStateEvent) else e.kind
            for e in agent.seen
            if e.kind in ("loop_state", "approval_request", "approval_resolved")
        ]
        assert not (agent.workdir / "one").exists() and not (agent.workdir / "two").exists()
    assert kinds == [
        "thinking", "executing_tool", "approval_request", "waiting_approval",
        "approval_request", "approval_resolved", "approval_resolved", "executing_tool",
        "thinking", "completed",
    ]  # fmt: skip
